// Fuzz target: MCP messages, one line of `sessiondb mcp`'s stdin as
// McpServer::HandleLine takes it (src/server/mcp_server), against a store
// holding one session with a few messages (id "fuzz-session", so seeds can
// call the tools on it). The server lives across runs, as it does across
// the lines of one stream. Properties: no crash, and every answer is one
// line of valid JSON.

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "server/mcp_server.h"

namespace {

sessiondb::server::McpServer& Server() {
  using namespace sessiondb;
  static server::McpServer* mcp = [] {
    // Never recycled: the server keeps a reference to it.
    Store& store = fuzz::RecycledStore(/*runs_per_store=*/1 << 30);
    Result<Session> s = store.CreateSession({.id = "fuzz-session", .title = "Fuzzing seed"});
    FUZZ_CHECK(s.has_value());
    Message user{.role = Role::kUser, .parts = {Part::Text("How do I read a PNG header in C++?")}};
    Message assistant{
        .role = Role::kAssistant,
        .parts = {Part::Text("Read the IHDR chunk: width and height are big-endian."),
                  Part::ToolCall("call_1", "Write",
                                 R"({"file_path":"/src/png.cc","content":"int w;"})")}};
    FUZZ_CHECK(store.Append(s->id, user).has_value());
    FUZZ_CHECK(store.Append(s->id, assistant).has_value());
    // No background thread: each input must be judged alone.
    return new server::McpServer(
        store, {.background_embedding = false, .embed_limit = 0, .log = [](std::string_view) {}});
  }();
  return *mcp;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  std::optional<std::string> answer = Server().HandleLine(fuzz::AsView(data, size));
  if (answer) {
    FUZZ_CHECK(answer->find('\n') == std::string::npos);
    FUZZ_CHECK(nlohmann::json::accept(*answer));
  }
  return 0;
}
