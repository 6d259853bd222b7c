// `sessiondb mcp` through the real binary: a client's JSON-RPC messages go
// down a pipe to its stdin one line at a time and each answer is read back
// from its stdout before the next is sent, as Claude Code and other MCP
// clients do. The store is seeded through the C++ API (a forked and an
// archived session, an image, a text file, a code write).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/json_forms.h"
#include "cli/cli_fixture.h"
#include "sessiondb/memory.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

// The binary running `mcp`, with pipes on stdin and stdout and stderr in a file.
class McpProcess {
 public:
  McpProcess(const std::string& store, const std::string& stderr_path,
             const std::vector<std::string>& extra_args = {}) {
    // A server that died makes our writes fail, not kill the test.
    signal(SIGPIPE, SIG_IGN);
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store, "mcp"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) {
      ADD_FAILURE() << "no pipes";
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> c_argv;
      for (auto& a : argv) c_argv.push_back(a.data());
      c_argv.push_back(nullptr);
      // The built-in embedder, whatever the machine's environment says.
      unsetenv("SESSIONDB_EMBED_URL");
      unsetenv("SESSIONDB_STORE");
      int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      dup2(err, STDERR_FILENO);
      close(in[0]), close(in[1]), close(out[0]), close(out[1]), close(err);
      alarm(120);  // a server that never ends fails the test instead of hanging it
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_child_ = in[1];
    from_child_ = out[0];
  }

  ~McpProcess() {
    if (to_child_ >= 0) close(to_child_);
    if (from_child_ >= 0) close(from_child_);
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void SendLine(const std::string& line) {
    const std::string data = line + "\n";
    ASSERT_EQ(write(to_child_, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  void Send(const json& message) { SendLine(message.dump()); }

  // The next line the server writes, or "" (and a test failure) after 60 s.
  std::string ReceiveLine() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{from_child_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        ADD_FAILURE() << "no answer from the server; its stderr may say why";
        return "";
      }
      char chunk[65536];
      const ssize_t n = read(from_child_, chunk, sizeof chunk);
      if (n <= 0) {
        ADD_FAILURE() << "the server closed stdout";
        return "";
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  json Receive() {
    const std::string line = ReceiveLine();
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "not one JSON message per line: " << line;
    return j;
  }

  // Sends a request with the next id and returns the answer to it.
  json Call(const std::string& method, const json& params = json::object()) {
    const int id = ++last_id_;
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    json answer = Receive();
    EXPECT_EQ(answer.value("id", json()), id) << answer.dump();
    EXPECT_EQ(answer.value("jsonrpc", ""), "2.0");
    return answer;
  }

  // The result of tools/call `name`.
  json Tool(const std::string& name, const json& arguments) {
    json answer = Call("tools/call", {{"name", name}, {"arguments", arguments}});
    EXPECT_TRUE(answer.contains("result")) << answer.dump();
    return answer.value("result", json::object());
  }

  json Initialize(const std::string& version = "2025-06-18") {
    json answer = Call("initialize", {{"protocolVersion", version},
                                      {"capabilities", json::object()},
                                      {"clientInfo", {{"name", "mcp_test"}, {"version", "1"}}}});
    Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    return answer;
  }

  // Closes stdin; returns what was still written to stdout and the exit code
  // (-1 when the process did not exit by itself).
  int CloseAndWait(std::string* rest = nullptr) {
    close(to_child_);
    to_child_ = -1;
    char chunk[65536];
    ssize_t n;
    while ((n = read(from_child_, chunk, sizeof chunk)) > 0) buffer_.append(chunk, n);
    if (rest) *rest = buffer_;
    int status = 0;
    waited_ = waitpid(pid_, &status, 0) == pid_;
    return waited_ && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  bool waited_ = false;
  std::string buffer_;
  int last_id_ = 0;
};

// The text of a tool result's content blocks of type text, joined.
std::string TextOf(const json& result) {
  std::string text;
  for (const json& block : result.value("content", json::array())) {
    if (block.value("type", "") == "text") text += block.value("text", "") + "\n";
  }
  return text;
}

class McpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::Open(store_);
    ASSERT_TRUE(opened) << opened.error().ToString();
    std::unique_ptr<Store> store = std::move(*opened);

    auto main = store->CreateSession({.id = "trip", .metadata_json = R"({"project":"/src/app"})"});
    ASSERT_TRUE(main);
    Message ask;
    ask.parts = {Part::Text("Why does the zeppelin parser choke on this header?"),
                 Part::ImageFromBytes(FromHex(kOnePixelPngHex), "image/png", "pixel.png")};
    auto asked = store->Append("trip", ask);
    ASSERT_TRUE(asked) << asked.error().ToString();
    image_id_ = asked->resources.at(0).resource_id;

    Message answer;
    answer.role = Role::kAssistant;
    answer.model = "claude-sonnet-4";
    answer.parts = {Part::Text("The tokenizer drops the last byte; reading parser.cc."),
                    Part::ToolCall("call_1", "Read", R"({"file_path":"/src/app/parser.cc"})"),
                    Part::ToolResult("call_1", "int ParseHeader(const char* p) {\n  return 0;\n}")};
    ASSERT_TRUE(store->Append("trip", answer));

    Message notes;
    notes.parts = {Part::Text("my notes"),
                   Part::FileFromBytes("line one\nline two\n", "text/plain", "notes.txt")};
    auto noted = store->Append("trip", notes);
    ASSERT_TRUE(noted) << noted.error().ToString();
    text_file_id_ = noted->resources.at(0).resource_id;

    auto fork = store->ForkSession("trip", 2, {.id = "trip-retry"});
    ASSERT_TRUE(fork) << fork.error().ToString();
    Message retry;
    retry.parts = {Part::Text("Try the other tokenizer")};
    ASSERT_TRUE(store->Append("trip-retry", retry));

    ASSERT_TRUE(store->CreateSession({.id = "old", .title = "An old chat"}));
    Message old;
    old.parts = {Part::Text("something from long ago")};
    ASSERT_TRUE(store->Append("old", old));
    ASSERT_TRUE(store->SetArchived("old", true).ok());

    auto memory = CodeMemory::Open(store_);
    ASSERT_TRUE(memory) << memory.error().ToString();
    auto wrote = (*memory)->RecordWrite(
        {.file_path = "/src/app/zeppelin_parser.cc",
         .new_code =
             "int ParseZeppelinHeader(const char* header) {\n  return TokenizeHeader(header);\n}\n",
         .session_id = "trip",
         .project = "/src/app",
         .tool = "Write"});
    ASSERT_TRUE(wrote) << wrote.error().ToString();
  }

  std::unique_ptr<McpProcess> Start(const std::vector<std::string>& extra_args = {}) {
    return std::make_unique<McpProcess>(store_, dir_.Sub("stderr"), extra_args);
  }
  std::string Stderr() { return Slurp(dir_.Sub("stderr")); }

  // Everything the store holds that a reader could change: every session's
  // index entry and events, the blobs and the counts.
  json StoreState() {
    auto opened = Store::Open(store_, {.create_if_missing = false});
    EXPECT_TRUE(opened);
    if (!opened) return {};
    Store& store = **opened;
    json state = json::object();
    auto page = store.ListSessions({.limit = 1000, .archived = ArchiveFilter::kAll});
    EXPECT_TRUE(page);
    for (const Session& s : page->sessions) {
      json events = json::array();
      auto log = store.ReadEvents(s.id);
      EXPECT_TRUE(log);
      for (const Event& e : *log) events.push_back(json::parse(ToJson(e).dump()));
      state["sessions"][s.id] = {{"session", json::parse(ToJson(s).dump())}, {"events", events}};
    }
    auto stats = store.Stats();
    EXPECT_TRUE(stats);
    state["sessions_count"] = stats->sessions;
    state["messages"] = stats->messages;
    state["blobs"] = stats->blobs;
    state["blob_bytes"] = stats->blob_bytes;
    auto active = store.GetActiveSession();
    state["active"] = active && *active ? json(**active) : json();
    return state;
  }

  TempDir dir_;
  std::string store_ = dir_.Sub("store");
  std::string image_id_;
  std::string text_file_id_;
};

TEST_F(McpTest, InitializeAnswersWithTheRevisionServerInfoAndTheToolsCapability) {
  auto mcp = Start();
  json init = mcp->Initialize();
  ASSERT_TRUE(init.contains("result")) << init.dump();
  const json& r = init["result"];
  EXPECT_EQ(r["protocolVersion"], "2025-06-18");
  EXPECT_EQ(r["serverInfo"]["name"], "sessiondb");
  EXPECT_TRUE(r["serverInfo"]["version"].is_string());
  EXPECT_TRUE(r["capabilities"]["tools"].is_object());
  EXPECT_TRUE(r["instructions"].is_string());
  // notifications/initialized got no answer: the next line is the ping's.
  json ping = mcp->Call("ping");
  EXPECT_EQ(ping["result"], json::object());
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, AnOlderClientGetsTheRevisionItAskedForAndAnUnknownOneTheLatest) {
  for (const char* version : {"2024-11-05", "2025-03-26"}) {
    auto mcp = Start();
    EXPECT_EQ(mcp->Initialize(version)["result"]["protocolVersion"], version);
    // structuredContent came with 2025-06-18: older clients get the text alone.
    json listed = mcp->Tool("list_sessions", json::object());
    EXPECT_FALSE(listed.contains("structuredContent")) << version;
    EXPECT_TRUE(Contains(TextOf(listed), "trip")) << version;
    // ... and no outputSchema, which came with it.
    for (const json& t : mcp->Call("tools/list")["result"]["tools"]) {
      EXPECT_FALSE(t.contains("outputSchema")) << version << " " << t["name"];
    }
    EXPECT_EQ(mcp->CloseAndWait(), 0);
  }
  auto mcp = Start();
  EXPECT_EQ(mcp->Initialize("2099-01-01")["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ToolsListDeclaresEveryToolWithAnObjectSchemaAndReadOnlyHints) {
  auto mcp = Start();
  mcp->Initialize();
  json tools = mcp->Call("tools/list")["result"]["tools"];
  std::set<std::string> names;
  for (const json& t : tools) {
    names.insert(t["name"].get<std::string>());
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
    EXPECT_TRUE(t["inputSchema"]["properties"].is_object()) << t.dump();
    EXPECT_GT(t["description"].get<std::string>().size(), 80u) << t["name"];
    EXPECT_EQ(t["annotations"]["readOnlyHint"], true);
    // The shape of its structuredContent (tests/node/mcp.test.mjs validates
    // every answer against it with the MCP SDK).
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t.dump();
    EXPECT_FALSE(t["outputSchema"]["required"].empty()) << t.dump();
  }
  EXPECT_EQ(names, (std::set<std::string>{"list_sessions", "read_session", "search_history",
                                          "search_code_memory", "code_churn", "view_resource"}));
  for (const json& t : tools) {
    if (t["name"] == "read_session") {
      EXPECT_EQ(t["inputSchema"]["required"], json::array({"session_id"}));
      EXPECT_EQ(t["inputSchema"]["properties"]["limit"]["type"], "integer");
    }
    if (t["name"] == "search_history") {
      EXPECT_EQ(t["inputSchema"]["properties"]["mode"]["enum"],
                json::array({"keyword", "vector", "hybrid"}));
    }
    // Fields that may be null say so.
    if (t["name"] == "list_sessions") {
      const json& out = t["outputSchema"]["properties"];
      EXPECT_EQ(out["next_cursor"]["type"], json::array({"string", "null"}));
      EXPECT_EQ(out["sessions"]["items"]["properties"]["parent_id"]["type"],
                json::array({"string", "null"}));
    }
    if (t["name"] == "read_session") {
      const json& out = t["outputSchema"]["properties"];
      EXPECT_EQ(out["next_from_seq"]["type"], json::array({"integer", "null"}));
      EXPECT_TRUE(Contains(out["messages"]["items"]["properties"]["usage"].dump(), "null"));
    }
  }
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ListSessionsShowsForksAndArchivedSessionsInTheJsonForms) {
  auto mcp = Start();
  mcp->Initialize();
  json active = mcp->Tool("list_sessions", json::object());
  EXPECT_EQ(active["isError"], false);
  std::set<std::string> ids;
  for (const json& s : active["structuredContent"]["sessions"]) ids.insert(s["id"]);
  EXPECT_EQ(ids, (std::set<std::string>{"trip", "trip-retry"}));
  for (const json& s : active["structuredContent"]["sessions"]) {
    if (s["id"] == "trip-retry") {
      EXPECT_EQ(s["parent_id"], "trip");
      EXPECT_EQ(s["fork_seq"], 2);
      EXPECT_EQ(s["message_count"], 3);
    }
  }
  const std::string text = TextOf(active);
  EXPECT_TRUE(Contains(text, "fork of trip at seq 2")) << text;
  EXPECT_TRUE(Contains(text, "Why does the zeppelin parser")) << text;  // the preview

  json archived = mcp->Tool("list_sessions", {{"archived", "archived"}});
  ASSERT_EQ(archived["structuredContent"]["sessions"].size(), 1u);
  EXPECT_EQ(archived["structuredContent"]["sessions"][0]["id"], "old");
  EXPECT_EQ(archived["structuredContent"]["sessions"][0]["archived"], true);
  EXPECT_TRUE(Contains(TextOf(archived), "archived")) << TextOf(archived);

  json all = mcp->Tool("list_sessions", {{"archived", "all"}, {"limit", 1}});
  ASSERT_EQ(all["structuredContent"]["sessions"].size(), 1u);
  const json cursor = all["structuredContent"]["next_cursor"];
  ASSERT_TRUE(cursor.is_string());
  EXPECT_TRUE(Contains(TextOf(all), cursor.get<std::string>())) << TextOf(all);
  json rest = mcp->Tool("list_sessions", {{"archived", "all"}, {"cursor", cursor}, {"limit", 10}});
  EXPECT_EQ(rest["structuredContent"]["sessions"].size(), 2u);

  json project = mcp->Tool("list_sessions", {{"project", "/src/app"}});
  // The fork took its parent's metadata.
  EXPECT_EQ(project["structuredContent"]["sessions"].size(), 2u);
  json elsewhere = mcp->Tool("list_sessions", {{"project", "/src/other"}});
  EXPECT_TRUE(elsewhere["structuredContent"]["sessions"].empty());
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ReadSessionGivesTheMessagesAsTextWithSeqsAndAsJsonForms) {
  auto mcp = Start();
  mcp->Initialize();
  json r = mcp->Tool("read_session", {{"session_id", "trip"}});
  EXPECT_EQ(r["isError"], false);
  const std::string text = TextOf(r);
  EXPECT_TRUE(Contains(text, "#1 user ")) << text;
  EXPECT_TRUE(Contains(text, "#2 assistant ")) << text;
  EXPECT_TRUE(Contains(text, "claude-sonnet-4")) << text;
  EXPECT_TRUE(Contains(text, "Why does the zeppelin parser choke on this header?")) << text;
  EXPECT_TRUE(Contains(text, "[image " + image_id_ + ": image/png, 1x1, 67 bytes, \"pixel.png\"]"))
      << text;
  EXPECT_TRUE(Contains(text, "[tool_call call_1 Read] {\"file_path\":\"/src/app/parser.cc\"}"))
      << text;
  EXPECT_TRUE(Contains(text, "[tool_result call_1] int ParseHeader(const char* p) {   return 0; }"))
      << text;
  const json& messages = r["structuredContent"]["messages"];
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0]["seq"], 1);
  EXPECT_EQ(messages[0]["parts"][1]["resource"]["resource_id"], image_id_);
  EXPECT_EQ(messages[0]["parts"][1]["resource"]["content_sha256"], kOnePixelPngSha256);
  EXPECT_EQ(messages[1]["parts"][1]["arguments"]["file_path"], "/src/app/parser.cc");
  EXPECT_EQ(r["structuredContent"]["session"]["id"], "trip");
  EXPECT_TRUE(r["structuredContent"]["next_from_seq"].is_null());

  // A page, the next page, the last N, a fork's inherited messages, a cut text.
  json first = mcp->Tool("read_session", {{"session_id", "trip"}, {"limit", 1}});
  ASSERT_EQ(first["structuredContent"]["messages"].size(), 1u);
  EXPECT_EQ(first["structuredContent"]["next_from_seq"], 2);
  EXPECT_TRUE(Contains(TextOf(first), "\"from_seq\":2")) << TextOf(first);
  json second = mcp->Tool("read_session", {{"session_id", "trip"}, {"from_seq", 2}, {"limit", 1}});
  EXPECT_EQ(second["structuredContent"]["messages"][0]["seq"], 2);
  json last = mcp->Tool("read_session", {{"session_id", "trip"}, {"last", 1}});
  ASSERT_EQ(last["structuredContent"]["messages"].size(), 1u);
  EXPECT_EQ(last["structuredContent"]["messages"][0]["seq"], 3);
  json fork = mcp->Tool("read_session", {{"session_id", "trip-retry"}});
  const json& forked = fork["structuredContent"]["messages"];
  ASSERT_EQ(forked.size(), 3u);
  EXPECT_EQ(forked[2]["parts"][0]["text"], "Try the other tokenizer");
  json cut =
      mcp->Tool("read_session", {{"session_id", "trip"}, {"limit", 1}, {"max_text_chars", 8}});
  EXPECT_EQ(cut["structuredContent"]["messages"][0]["parts"][0]["text"], "Why does");
  EXPECT_TRUE(Contains(TextOf(cut), "more characters")) << TextOf(cut);
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ALongSessionIsReadInPagesThatFitWhatAClientHandsAModel) {
  {
    auto store = Store::Open(store_);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "long"}));
    for (int i = 0; i < 30; ++i) {
      Message m;
      m.parts = {Part::Text(std::string(7000, 'a' + i % 26))};
      ASSERT_TRUE((*store)->Append("long", m));
    }
    Message big;
    big.parts = {Part::Text("big notes"),
                 Part::FileFromBytes(std::string(150 * 1024, 'x'), "text/plain", "big.txt")};
    auto appended = (*store)->Append("long", big);
    ASSERT_TRUE(appended) << appended.error().ToString();
    text_file_id_ = appended->resources.at(0).resource_id;
  }
  auto mcp = Start();
  mcp->Initialize();
  // About 100 KB of text a page: 14 messages of 7,000 characters, then the next call.
  json first = mcp->Tool("read_session", {{"session_id", "long"}});
  const size_t shown = first["structuredContent"]["messages"].size();
  EXPECT_EQ(shown, 14u);
  EXPECT_EQ(first["structuredContent"]["next_from_seq"], 15);
  EXPECT_TRUE(Contains(TextOf(first), R"(read_session {"session_id":"long","from_seq":15)"))
      << TextOf(first).substr(TextOf(first).size() - 300);
  json rest = mcp->Tool("read_session", {{"session_id", "long"}, {"from_seq", 15}, {"limit", 2}});
  EXPECT_EQ(rest["structuredContent"]["messages"][0]["seq"], 15);
  // The last N keeps the newest when they do not all fit.
  json last = mcp->Tool("read_session", {{"session_id", "long"}, {"last", 31}});
  EXPECT_EQ(last["structuredContent"]["messages"].back()["seq"], 31);
  EXPECT_LT(last["structuredContent"]["messages"].size(), 31u);

  // A text file past 100 KB is cut, saying so.
  json view = mcp->Tool("view_resource", {{"session_id", "long"}, {"resource_id", text_file_id_}});
  EXPECT_EQ(view["isError"], false);
  const std::string text = TextOf(view);
  EXPECT_TRUE(Contains(text, "[cut: the first 100.0 KiB of 150.0 KiB are shown]"))
      << text.substr(0, 300);
  EXPECT_LT(text.size(), 101u * 1024);
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, SearchHistoryFindsASeededPhraseInEveryMode) {
  auto mcp = Start();
  mcp->Initialize();
  for (const char* mode : {"keyword", "hybrid", "vector"}) {
    json r = mcp->Tool("search_history", {{"query", "zeppelin parser"}, {"mode", mode}});
    EXPECT_EQ(r["isError"], false) << TextOf(r);
    const json& hits = r["structuredContent"]["hits"];
    ASSERT_FALSE(hits.empty()) << mode << ": " << TextOf(r);
    EXPECT_EQ(hits[0]["session_id"], "trip") << mode;
    EXPECT_EQ(hits[0]["seq"], 1) << mode;
    if (std::string(mode) != "vector") {
      EXPECT_TRUE(Contains(TextOf(r), "**zeppelin**")) << TextOf(r);
    }
    EXPECT_TRUE(Contains(TextOf(r), "session trip")) << TextOf(r);
  }
  json assistant = mcp->Tool(
      "search_history",
      {{"query", "tokenizer"}, {"mode", "keyword"}, {"role", "assistant"}, {"kind", "messages"}});
  ASSERT_EQ(assistant["structuredContent"]["hits"].size(), 1u);
  EXPECT_EQ(assistant["structuredContent"]["hits"][0]["seq"], 2);
  json none = mcp->Tool("search_history", {{"query", "zeppelin"}, {"session_id", "old"}});
  EXPECT_TRUE(none["structuredContent"]["hits"].empty());
  EXPECT_TRUE(Contains(TextOf(none), "No hits")) << TextOf(none);
  json bad_time = mcp->Tool("search_history", {{"query", "zeppelin"}, {"since", "yesterday"}});
  EXPECT_EQ(bad_time["isError"], true);
  EXPECT_TRUE(Contains(TextOf(bad_time), "since takes a date")) << TextOf(bad_time);
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ATrashedSessionIsInvisibleInEveryListReadAndSearch) {
  // "old" has its own words ("long ago"); trashed, MCP must not show them.
  {
    auto opened = Store::Open(store_, {.create_if_missing = false});
    ASSERT_TRUE(opened) << opened.error().ToString();
    ASSERT_TRUE((*opened)->TrashSession("old").ok());
  }
  auto mcp = Start();
  mcp->Initialize();
  json all = mcp->Tool("list_sessions", {{"archived", "all"}});
  std::set<std::string> ids;
  for (const json& s : all["structuredContent"]["sessions"]) ids.insert(s["id"]);
  EXPECT_EQ(ids, (std::set<std::string>{"trip", "trip-retry"}));

  json read = mcp->Tool("read_session", {{"session_id", "old"}});
  EXPECT_EQ(read["isError"], true) << TextOf(read);
  EXPECT_FALSE(Contains(TextOf(read), "long ago")) << TextOf(read);

  for (const char* mode : {"keyword", "hybrid"}) {
    json found = mcp->Tool("search_history", {{"query", "long ago"}, {"mode", mode}});
    for (const json& hit : found["structuredContent"]["hits"]) {
      EXPECT_NE(hit["session_id"], "old") << mode << ": " << TextOf(found);
    }
  }
  json listed = mcp->Call("resources/list")["result"]["resources"];
  for (const json& r : listed) EXPECT_NE(r["uri"], "sessiondb://session/old");
  json resource = mcp->Call("resources/read", {{"uri", "sessiondb://session/old"}});
  EXPECT_TRUE(resource.contains("error")) << resource.dump();
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, AMatchInsideBoldIsMarkedOnceNotDoubled) {
  {
    auto store = Store::Open(store_);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "bold"}));
    Message m;
    m.parts = {Part::Text("we need the **quixotic** fix and `quixotic()` here")};
    ASSERT_TRUE((*store)->Append("bold", m));
  }
  auto mcp = Start();
  mcp->Initialize();
  json r = mcp->Tool("search_history", {{"query", "quixotic"}, {"mode", "keyword"}});
  ASSERT_EQ(r["isError"], false) << TextOf(r);
  const std::string text = TextOf(r);
  // The snippet line: each match in bold once, the message's own markers gone
  // (the title above it is the stored one, markers and all).
  EXPECT_TRUE(Contains(text, "\n   we need the **quixotic** fix and **quixotic**() here\n"))
      << text;
  EXPECT_FALSE(Contains(text, "***")) << text;
  const json& hit = r["structuredContent"]["hits"][0];
  EXPECT_EQ(hit["snippet"], "we need the quixotic fix and quixotic() here");
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, SearchCodeMemoryRecallsASeededWriteWithItsChurn) {
  auto mcp = Start();
  mcp->Initialize();
  json r = mcp->Tool("search_code_memory",
                     {{"path", "/src/app/zeppelin_parser.cc"},
                      {"code", "int ParseZeppelinHeader(const char* header) { return 1; }"}});
  EXPECT_EQ(r["isError"], false) << TextOf(r);
  const json& recalled = r["structuredContent"]["recalled"];
  ASSERT_EQ(recalled.size(), 1u) << TextOf(r);
  EXPECT_EQ(recalled[0]["file_path"], "/src/app/zeppelin_parser.cc");
  EXPECT_EQ(recalled[0]["session_id"], "trip");
  EXPECT_TRUE(Contains(recalled[0]["preview"].get<std::string>(), "TokenizeHeader"));
  EXPECT_EQ(r["structuredContent"]["churn"]["edits_30d"], 1);
  EXPECT_EQ(r["structuredContent"]["churn"]["tier"], "gold");
  EXPECT_TRUE(r["structuredContent"]["warnings"].is_array());
  const std::string text = TextOf(r);
  EXPECT_TRUE(Contains(text, "TokenizeHeader")) << text;
  EXPECT_TRUE(Contains(text, "tier gold, 1 edit in 30 days")) << text;

  // Without code, recall goes by the file's name.
  json by_name = mcp->Tool("search_code_memory", {{"path", "/elsewhere/zeppelin_parser.cc"}});
  EXPECT_EQ(by_name["structuredContent"]["recalled"].size(), 1u) << TextOf(by_name);

  json churn = mcp->Tool("code_churn", {{"path_prefix", "/src/app"}});
  ASSERT_EQ(churn["structuredContent"]["entries"].size(), 1u) << TextOf(churn);
  EXPECT_EQ(churn["structuredContent"]["entries"][0]["file_path"], "/src/app/zeppelin_parser.cc");
  json functions = mcp->Tool("code_churn", {{"functions", true}});
  ASSERT_FALSE(functions["structuredContent"]["entries"].empty()) << TextOf(functions);
  EXPECT_EQ(functions["structuredContent"]["entries"][0]["function"], "ParseZeppelinHeader");
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ViewResourceReturnsTheSeededPngByteForByte) {
  auto mcp = Start();
  mcp->Initialize();
  json r = mcp->Tool("view_resource", {{"session_id", "trip"}, {"resource_id", image_id_}});
  EXPECT_EQ(r["isError"], false) << TextOf(r);
  json image;
  for (const json& block : r["content"]) {
    if (block["type"] == "image") image = block;
  }
  ASSERT_TRUE(image.is_object()) << r.dump();
  EXPECT_EQ(image["data"], kOnePixelPngBase64);
  EXPECT_EQ(image["mimeType"], "image/png");
  EXPECT_TRUE(Contains(TextOf(r), "attached by message #1")) << TextOf(r);
  EXPECT_EQ(r["structuredContent"]["resource"]["content_sha256"], kOnePixelPngSha256);

  // A fork sees the image its parent attached; a text file comes back as text.
  json inherited =
      mcp->Tool("view_resource", {{"session_id", "trip-retry"}, {"resource_id", image_id_}});
  EXPECT_EQ(inherited["isError"], false) << TextOf(inherited);
  json notes = mcp->Tool("view_resource", {{"session_id", "trip"}, {"resource_id", text_file_id_}});
  EXPECT_EQ(notes["isError"], false);
  EXPECT_TRUE(Contains(TextOf(notes), "line one\nline two")) << TextOf(notes);

  // The same through resources/read.
  json read =
      mcp->Call("resources/read", {{"uri", "sessiondb://session/trip/resource/" + image_id_}});
  ASSERT_TRUE(read.contains("result")) << read.dump();
  EXPECT_EQ(read["result"]["contents"][0]["blob"], kOnePixelPngBase64);
  EXPECT_EQ(read["result"]["contents"][0]["mimeType"], "image/png");
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ResourcesListTheSessionsAndReadOneAsText) {
  auto mcp = Start();
  mcp->Initialize();
  json listed = mcp->Call("resources/list")["result"]["resources"];
  std::set<std::string> uris;
  for (const json& r : listed) uris.insert(r["uri"]);
  EXPECT_EQ(uris,
            (std::set<std::string>{"sessiondb://session/trip", "sessiondb://session/trip-retry",
                                   "sessiondb://session/old"}));
  EXPECT_EQ(mcp->Call("resources/templates/list")["result"]["resourceTemplates"].size(), 2u);
  json read = mcp->Call("resources/read", {{"uri", "sessiondb://session/trip"}});
  EXPECT_TRUE(Contains(read["result"]["contents"][0]["text"], "#2 assistant")) << read.dump();
  json missing = mcp->Call("resources/read", {{"uri", "sessiondb://session/nope"}});
  EXPECT_EQ(missing["error"]["code"], -32002) << missing.dump();
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, ProtocolErrorsAndToolErrorsFollowTheSpecAndTheServerGoesOn) {
  auto mcp = Start();
  mcp->Initialize();

  // A line that is not JSON: -32700 with id null, and the server reads on.
  mcp->SendLine("{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ");
  json parse = mcp->Receive();
  EXPECT_EQ(parse["error"]["code"], -32700) << parse.dump();
  EXPECT_TRUE(parse.contains("id") && parse["id"].is_null()) << parse.dump();
  mcp->SendLine("[]");
  EXPECT_EQ(mcp->Receive()["error"]["code"], -32600);
  mcp->Send({{"jsonrpc", "1.0"}, {"id", "x"}, {"method", "ping"}});
  json old_rpc = mcp->Receive();
  EXPECT_EQ(old_rpc["error"]["code"], -32600);
  EXPECT_EQ(old_rpc["id"], "x");

  EXPECT_EQ(mcp->Call("resources/subscribe")["error"]["code"], -32601);
  json unknown_method = mcp->Call("sessions/delete");
  EXPECT_EQ(unknown_method["error"]["code"], -32601);
  EXPECT_TRUE(Contains(unknown_method["error"]["message"], "sessions/delete"));

  json unknown_tool =
      mcp->Call("tools/call", {{"name", "delete_session"}, {"arguments", json::object()}});
  EXPECT_EQ(unknown_tool["error"]["code"], -32602) << unknown_tool.dump();
  EXPECT_TRUE(Contains(unknown_tool["error"]["message"], "Unknown tool: delete_session"));

  // Arguments that do not fit the inputSchema are invalid params (2025-06-18).
  json missing = mcp->Call("tools/call", {{"name", "read_session"}, {"arguments", json::object()}});
  EXPECT_EQ(missing["error"]["code"], -32602) << missing.dump();
  EXPECT_TRUE(Contains(missing["error"]["message"], "missing required argument 'session_id'"));
  json typo =
      mcp->Call("tools/call", {{"name", "read_session"}, {"arguments", {{"sessionId", "trip"}}}});
  EXPECT_EQ(typo["error"]["code"], -32602);
  EXPECT_TRUE(Contains(typo["error"]["message"], "no argument 'sessionId'")) << typo.dump();
  json range = mcp->Call("tools/call", {{"name", "list_sessions"}, {"arguments", {{"limit", 0}}}});
  EXPECT_EQ(range["error"]["code"], -32602);
  // A number past int64 is refused, not converted (undefined behaviour the
  // mcp_line fuzzer found).
  json huge =
      mcp->Call("tools/call", {{"name", "list_sessions"}, {"arguments", {{"limit", 1e300}}}});
  EXPECT_EQ(huge["error"]["code"], -32602) << huge.dump();
  EXPECT_TRUE(Contains(huge["error"]["message"], "must be an integer")) << huge.dump();
  json choice = mcp->Call("tools/call", {{"name", "search_history"},
                                         {"arguments", {{"query", "x"}, {"mode", "fuzzy"}}}});
  EXPECT_EQ(choice["error"]["code"], -32602);
  EXPECT_TRUE(Contains(choice["error"]["message"], "keyword, vector, hybrid")) << choice.dump();

  // What goes wrong in the call itself is a tool result with isError.
  json no_session = mcp->Tool("read_session", {{"session_id", "nope"}});
  EXPECT_EQ(no_session["isError"], true);
  EXPECT_TRUE(Contains(TextOf(no_session), "session 'nope' does not exist")) << TextOf(no_session);
  json no_resource =
      mcp->Tool("view_resource", {{"session_id", "trip"}, {"resource_id", "res_nope"}});
  EXPECT_EQ(no_resource["isError"], true);
  EXPECT_TRUE(Contains(TextOf(no_resource), "res_nope")) << TextOf(no_resource);
  json other_session =
      mcp->Tool("view_resource", {{"session_id", "old"}, {"resource_id", image_id_}});
  EXPECT_EQ(other_session["isError"], true);
  json no_search_session = mcp->Tool("search_history", {{"query", "x"}, {"session_id", "nope"}});
  EXPECT_EQ(no_search_session["isError"], true);

  // Integers as strings of digits are taken (some clients send them so).
  json lenient = mcp->Tool("read_session", {{"session_id", "trip"}, {"limit", "1"}});
  EXPECT_EQ(lenient["structuredContent"]["messages"].size(), 1u);

  // Still serving.
  EXPECT_EQ(mcp->Call("ping")["result"], json::object());
  std::string rest;
  EXPECT_EQ(mcp->CloseAndWait(&rest), 0);
  EXPECT_EQ(rest, "");
}

TEST_F(McpTest, ASessionArgumentTakesAUniquePrefixAsTheCliDoes) {
  {
    auto store = Store::Open(store_);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "trip-other", .title = "Another trip"}));
  }
  auto mcp = Start();
  mcp->Initialize();
  json read = mcp->Tool("read_session", {{"session_id", "trip-r"}});
  EXPECT_EQ(read["isError"], false) << TextOf(read);
  EXPECT_EQ(read["structuredContent"]["session"]["id"], "trip-retry");
  // The calls the text suggests name the whole id.
  json page = mcp->Tool("read_session", {{"session_id", "trip-r"}, {"limit", 1}});
  EXPECT_TRUE(Contains(TextOf(page), "\"session_id\":\"trip-retry\"")) << TextOf(page);
  json image = mcp->Tool("view_resource", {{"session_id", "trip-r"}, {"resource_id", image_id_}});
  EXPECT_EQ(image["isError"], false) << TextOf(image);
  json search = mcp->Tool("search_history",
                          {{"query", "tokenizer"}, {"mode", "keyword"}, {"session_id", "trip-r"}});
  EXPECT_EQ(search["isError"], false) << TextOf(search);
  for (const json& hit : search["structuredContent"]["hits"])
    EXPECT_EQ(hit["session_id"], "trip-retry");
  json resource = mcp->Call("resources/read", {{"uri", "sessiondb://session/trip-r"}});
  EXPECT_TRUE(Contains(resource["result"]["contents"][0]["text"], "Try the other tokenizer"))
      << resource.dump();

  // An ambiguous prefix is a tool error naming the candidates, as in the CLI.
  json ambiguous = mcp->Tool("read_session", {{"session_id", "trip-"}});
  EXPECT_EQ(ambiguous["isError"], true);
  const std::string text = TextOf(ambiguous);
  EXPECT_TRUE(Contains(text, "session id prefix 'trip-' is ambiguous")) << text;
  EXPECT_TRUE(Contains(text, "trip-retry") && Contains(text, "trip-other  Another trip")) << text;
  EXPECT_EQ(
      mcp->Tool("view_resource", {{"session_id", "trip-"}, {"resource_id", image_id_}})["isError"],
      true);
  json resource_ambiguous = mcp->Call("resources/read", {{"uri", "sessiondb://session/trip-"}});
  EXPECT_EQ(resource_ambiguous["error"]["code"], -32602) << resource_ambiguous.dump();
  // Shorter than 4 characters is not looked up; `-` is the active session.
  json short_prefix = mcp->Tool("read_session", {{"session_id", "tri"}});
  EXPECT_EQ(short_prefix["isError"], true);
  EXPECT_TRUE(Contains(TextOf(short_prefix), "session 'tri' does not exist"))
      << TextOf(short_prefix);
  json no_active = mcp->Tool("read_session", {{"session_id", "-"}});
  EXPECT_EQ(no_active["isError"], true);
  EXPECT_TRUE(Contains(TextOf(no_active), "active session")) << TextOf(no_active);
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

TEST_F(McpTest, RequestsBeforeInitializeAndBatchesAreAnsweredNotificationsAreNot) {
  auto mcp = Start();
  // No initialize: answered anyway (nothing here depends on it).
  json tools = mcp->Call("tools/list");
  EXPECT_EQ(tools["result"]["tools"].size(), 6u);
  // A batch: one answer holding the requests' answers; the notification gets none.
  mcp->SendLine(R"([{"jsonrpc":"2.0","id":"a","method":"ping"},)"
                R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},)"
                R"({"jsonrpc":"2.0","id":"b","method":"nope"}])");
  json batch = mcp->Receive();
  ASSERT_TRUE(batch.is_array()) << batch.dump();
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0]["id"], "a");
  EXPECT_EQ(batch[1]["error"]["code"], -32601);
  // Notifications, known or not, and blank lines: no answer.
  mcp->Send({{"jsonrpc", "2.0"}, {"method", "notifications/whatever"}});
  mcp->SendLine("");
  mcp->SendLine("   ");
  EXPECT_EQ(mcp->Call("ping")["result"], json::object());
  std::string rest;
  EXPECT_EQ(mcp->CloseAndWait(&rest), 0);
  EXPECT_EQ(rest, "");
}

TEST_F(McpTest, ServingChangesNothingInTheStore) {
  const json before = StoreState();
  ASSERT_EQ(before["sessions"].size(), 3u);
  auto mcp = Start();
  mcp->Initialize();
  mcp->Tool("list_sessions", {{"archived", "all"}});
  mcp->Tool("read_session", {{"session_id", "trip"}});
  mcp->Tool("read_session", {{"session_id", "trip-retry"}, {"last", 2}});
  mcp->Tool("search_history", {{"query", "zeppelin"}});
  mcp->Tool("search_history", {{"query", "tokenizer"}, {"mode", "vector"}});
  mcp->Tool("search_code_memory",
            {{"path", "/src/app/zeppelin_parser.cc"}, {"code", "int X() {}"}});
  mcp->Tool("code_churn", json::object());
  mcp->Tool("view_resource", {{"session_id", "trip"}, {"resource_id", image_id_}});
  mcp->Tool("view_resource", {{"session_id", "trip"}, {"resource_id", "res_nope"}});
  mcp->Call("resources/read", {{"uri", "sessiondb://session/trip"}});
  EXPECT_EQ(mcp->CloseAndWait(), 0);
  EXPECT_EQ(StoreState(), before);
  // Nor the code memory: the write is still counted once.
  auto memory = CodeMemory::Open(store_);
  ASSERT_TRUE(memory);
  EXPECT_EQ((*memory)->FileChurn("/src/app/zeppelin_parser.cc")->edits_30d, 1);
}

TEST_F(McpTest, EndOfInputEndsTheServerWithExitCodeZeroAndStdoutHoldsOnlyMessages) {
  auto mcp = Start();
  mcp->Initialize();
  mcp->Tool("search_history", {{"query", "zeppelin"}});
  std::string rest;
  EXPECT_EQ(mcp->CloseAndWait(&rest), 0);
  EXPECT_EQ(rest, "");
  // The log went to stderr.
  EXPECT_TRUE(Contains(Stderr(), "mcp_test")) << Stderr();
}

TEST_F(McpTest, HelpSaysHowToRegisterTheServerWithClients) {
  McpProcess help(store_, dir_.Sub("stderr"), {"--help"});
  std::string out;
  EXPECT_EQ(help.CloseAndWait(&out), 0);
  EXPECT_TRUE(Contains(out, "Model Context Protocol")) << out;
  EXPECT_TRUE(Contains(out, "Examples:")) << out;
  EXPECT_TRUE(Contains(out, "claude mcp add sessiondb -- sessiondb mcp --store ~/chats")) << out;
  EXPECT_TRUE(Contains(out, R"("mcpServers": {"sessiondb": {"command": "sessiondb",)")) << out;
}

TEST_F(McpTest, AMissingStoreIsReportedOnStderrAndNothingOnStdout) {
  McpProcess mcp(dir_.Sub("no-store"), dir_.Sub("stderr"));
  std::string rest;
  EXPECT_EQ(mcp.CloseAndWait(&rest), 3);
  EXPECT_EQ(rest, "");
  EXPECT_TRUE(Contains(Stderr(), "no store at")) << Stderr();
}

TEST_F(McpTest, OnAPostgresStoreEveryToolWorksInItsNamespace) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  const std::string alice = pg.uri() + "&namespace=alice";
  const std::string bob = pg.uri() + "&namespace=bob";
  {
    auto opened = Store::Open(alice);
    ASSERT_TRUE(opened) << opened.error().ToString();
    Store& store = **opened;
    ASSERT_TRUE(store.CreateSession({.id = "pg-trip"}));
    Message m;
    m.parts = {Part::Text("a zeppelin over postgres"),
               Part::ImageFromBytes(FromHex(kOnePixelPngHex), "image/png")};
    auto appended = store.Append("pg-trip", m);
    ASSERT_TRUE(appended) << appended.error().ToString();
    image_id_ = appended->resources.at(0).resource_id;
    auto memory = CodeMemory::Open(store);
    ASSERT_TRUE(memory) << memory.error().ToString();
    ASSERT_TRUE((*memory)->RecordWrite(
        {.file_path = "/src/zeppelin.cc", .new_code = "int Zeppelin() { return 1; }\n"}));
  }
  {
    McpProcess mcp(alice, dir_.Sub("stderr"));
    mcp.Initialize();
    json listed = mcp.Tool("list_sessions", json::object());
    ASSERT_EQ(listed["structuredContent"]["sessions"].size(), 1u) << TextOf(listed);
    json read = mcp.Tool("read_session", {{"session_id", "pg-trip"}});
    EXPECT_TRUE(Contains(TextOf(read), "a zeppelin over postgres")) << TextOf(read);
    json view = mcp.Tool("view_resource", {{"session_id", "pg-trip"}, {"resource_id", image_id_}});
    EXPECT_EQ(view["content"][1]["data"], kOnePixelPngBase64) << view.dump();
    json found = mcp.Tool("search_history", {{"query", "zeppelin"}, {"mode", "keyword"}});
    EXPECT_EQ(found["isError"], false) << TextOf(found);
    const json& hits = found["structuredContent"]["hits"];
    ASSERT_EQ(hits.size(), 2u) << TextOf(found);  // the message and the code write
    json hybrid = mcp.Tool("search_history", {{"query", "zeppelin over postgres"}});
    EXPECT_EQ(hybrid["isError"], false) << TextOf(hybrid);
    EXPECT_FALSE(hybrid["structuredContent"]["hits"].empty()) << TextOf(hybrid);
    json recalled = mcp.Tool("search_code_memory",
                             {{"path", "/src/zeppelin.cc"}, {"code", "int Zeppelin() {}"}});
    ASSERT_EQ(recalled["structuredContent"]["recalled"].size(), 1u) << TextOf(recalled);
    json churn = mcp.Tool("code_churn", json::object());
    ASSERT_EQ(churn["structuredContent"]["entries"].size(), 1u) << TextOf(churn);
    EXPECT_EQ(mcp.CloseAndWait(), 0);
  }
  // Bob's namespace in the same database sees none of it.
  McpProcess mcp(bob, dir_.Sub("stderr-bob"));
  mcp.Initialize();
  for (const std::string mode : {"keyword", "hybrid", "vector"}) {
    json found = mcp.Tool("search_history", {{"query", "zeppelin postgres"}, {"mode", mode}});
    EXPECT_EQ(found["isError"], false) << TextOf(found);
    EXPECT_TRUE(found["structuredContent"]["hits"].empty()) << mode << ": " << TextOf(found);
  }
  json recalled =
      mcp.Tool("search_code_memory", {{"path", "/src/zeppelin.cc"}, {"code", "int Zeppelin() {}"}});
  EXPECT_TRUE(recalled["structuredContent"]["recalled"].empty()) << TextOf(recalled);
  json churn = mcp.Tool("code_churn", json::object());
  EXPECT_TRUE(churn["structuredContent"]["entries"].empty()) << TextOf(churn);
  EXPECT_EQ(mcp.CloseAndWait(), 0);
}

}  // namespace
}  // namespace sessiondb::testing

namespace sessiondb::testing {
namespace {

TEST_F(McpTest, RewindSessionIsOfferedOnlyWithAllowRewind) {
  const json before = StoreState();
  auto mcp = Start();
  mcp->Initialize();
  const json listed = mcp->Call("tools/list")["result"]["tools"];
  ASSERT_EQ(listed.size(), 6u);
  for (const json& t : listed) EXPECT_NE(t["name"], "rewind_session");
  json refused = mcp->Call("tools/call", {{"name", "rewind_session"},
                                          {"arguments", {{"session_id", "trip"}, {"to_seq", 1}}}});
  EXPECT_EQ(refused["error"]["code"], -32602) << refused.dump();
  EXPECT_EQ(mcp->CloseAndWait(), 0);
  EXPECT_EQ(StoreState(), before);  // read-only unless asked
}

TEST_F(McpTest, RewindSessionEndsTheViewThatReadSessionReads) {
  auto mcp = Start({"--allow-rewind"});
  mcp->Initialize();
  bool listed = false;
  const json tools = mcp->Call("tools/list")["result"]["tools"];
  for (const json& t : tools) {
    if (t["name"] != "rewind_session") continue;
    listed = true;
    EXPECT_EQ(t["annotations"]["readOnlyHint"], false);
    EXPECT_EQ(t["inputSchema"]["required"], json::array({"session_id", "to_seq"}));
    EXPECT_EQ(t["inputSchema"]["properties"]["to_seq"]["minimum"], 0);
  }
  EXPECT_TRUE(listed);

  json rewound = mcp->Tool("rewind_session", {{"session_id", "trip"}, {"to_seq", 1}});
  ASSERT_EQ(rewound["isError"], false) << rewound.dump();
  EXPECT_EQ(rewound["structuredContent"]["event"]["type"], "rewind");
  EXPECT_EQ(rewound["structuredContent"]["event"]["seq"], 4);
  EXPECT_EQ(rewound["structuredContent"]["event"]["rewind"]["to_seq"], 1);
  EXPECT_EQ(rewound["structuredContent"]["session"]["message_count"], 1);
  EXPECT_TRUE(Contains(TextOf(rewound), "to seq 1")) << TextOf(rewound);

  json read = mcp->Tool("read_session", {{"session_id", "trip"}});
  const std::string text = TextOf(read);
  EXPECT_TRUE(Contains(text, "zeppelin parser")) << text;
  EXPECT_FALSE(Contains(text, "tokenizer drops")) << text;
  EXPECT_FALSE(Contains(text, "my notes")) << text;
  json last = mcp->Tool("read_session", {{"session_id", "trip"}, {"last", 5}});
  EXPECT_FALSE(Contains(TextOf(last), "my notes")) << TextOf(last);

  // Hostile arguments: refused by the schema or by the store, nothing written.
  const json state = StoreState();
  for (const json& args :
       {json{{"session_id", "trip"}, {"to_seq", -1}},
        json{{"session_id", "trip"}, {"to_seq", "one"}},
        json{{"session_id", "trip"}, {"to_seq", 1.5}}, json{{"session_id", "trip"}},
        json{{"session_id", "trip"}, {"to_seq", 1}, {"extra", true}}}) {
    json answer = mcp->Call("tools/call", {{"name", "rewind_session"}, {"arguments", args}});
    EXPECT_EQ(answer["error"]["code"], -32602) << args.dump() << " -> " << answer.dump();
  }
  json past = mcp->Tool("rewind_session", {{"session_id", "trip"}, {"to_seq", 99}});
  EXPECT_EQ(past["isError"], true) << past.dump();
  json unknown = mcp->Tool("rewind_session", {{"session_id", "nope"}, {"to_seq", 0}});
  EXPECT_EQ(unknown["isError"], true) << unknown.dump();
  EXPECT_TRUE(Contains(TextOf(unknown), "list_sessions")) << TextOf(unknown);
  EXPECT_EQ(StoreState(), state);
  EXPECT_EQ(mcp->CloseAndWait(), 0);
}

}  // namespace
}  // namespace sessiondb::testing
