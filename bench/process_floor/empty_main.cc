// The floor of a `sessiondb` process: nothing but exec and the dynamic
// linking of the shared libraries the real binary links (bench/CMakeLists.txt
// links this with them all). sessiondb_search_bench runs it beside the hook.
int main() { return 0; }
