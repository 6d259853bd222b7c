// Code checkpoints over HTTP against the real `sessiondb serve` process: a
// rewind with "code" writes the files back (or, dry, only says how), a
// conflict changes nothing without "force", /v1/files/history, blame and
// restore answer for recorded files; and every hostile path (relative, "..",
// too long, a NUL, a file with no recorded versions, a symbolic link) is
// refused without reading or writing the file, the server serving on.
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "server/server_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace checkpoint_routes_test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJsonType = "application/json";

std::string ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void WriteWhole(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// The components/schemas of docs/openapi.json.
json DocumentedSchemas() {
  const json doc = json::parse(ReadWhole(fs::path(SESSIONDB_SOURCE_DIR) / "docs" / "openapi.json"),
                               nullptr, /*allow_exceptions=*/false);
  return doc.is_object() ? doc["components"]["schemas"] : json::object();
}

// Why `answer` is not what schema `name` documents: a required field
// missing, or a field the schema does not name; the lists of FileRestore,
// FileHistoryVersion and BlameLine are checked item by item.
std::vector<std::string> Undocumented(const json& schemas, const std::string& name,
                                      const json& answer) {
  std::vector<std::string> problems;
  const json& schema = schemas[name];
  if (!schema.is_object() || !answer.is_object()) return {name + ": no schema or no object"};
  for (const json& key : schema["required"]) {
    if (!answer.contains(key.get<std::string>())) problems.push_back(name + " lacks " + key.dump());
  }
  for (const auto& [key, value] : answer.items()) {
    if (!schema["properties"].contains(key)) problems.push_back(name + " does not document " + key);
  }
  for (const auto& [list, item] :
       {std::pair{"files", "FileRestore"}, std::pair{"versions", "FileHistoryVersion"},
        std::pair{"lines", "BlameLine"}}) {
    if (!answer.contains(list)) continue;
    for (const json& each : answer[list]) {
      for (std::string& p : Undocumented(schemas, item, each)) problems.push_back(std::move(p));
    }
  }
  return problems;
}

Message UserSays(const std::string& text) {
  Message m;
  m.role = Role::kUser;
  m.parts = {Part::Text(text)};
  return m;
}

Message AgentCalls(const std::string& call_id, const std::string& path) {
  Message m;
  m.role = Role::kAssistant;
  m.parts = {Part::ToolCall(call_id, "Write", json({{"file_path", path}}).dump())};
  return m;
}

// Session "s" of agent session "s" (the store id is the agent's), where
// call t1 (seq 2) creates work/a.txt as "one\n" and call t2 (seq 4) makes it
// "one\ntwo\n", the file on disk; and link.txt, a symbolic link to
// secret.txt, with a recorded version written through it by t1.
class CheckpointRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    signal(SIGPIPE, SIG_IGN);
    work_ = fs::canonical(dir_.path()) / "work";
    fs::create_directories(work_);
    file_ = (work_ / "a.txt").string();
    WriteWhole(work_ / "secret.txt", "SECRET-LINE\n");
    fs::create_symlink(work_ / "secret.txt", work_ / "link.txt");
    link_ = (work_ / "link.txt").string();

    auto opened = Store::Open(dir_.Sub("store"), {});
    ASSERT_TRUE(opened) << opened.error().ToString();
    std::unique_ptr<Store> store = std::move(*opened);
    ASSERT_TRUE(store->CreateSession(NewSession{.id = "s"}));
    for (const Message& m : {UserSays("make a.txt"), AgentCalls("t1", file_),
                             UserSays("add a line"), AgentCalls("t2", file_)}) {
      auto appended = store->Append("s", m);
      ASSERT_TRUE(appended) << appended.error().ToString();
    }
    Record(*store, "t1", file_, FileVersionPhase::kBefore, std::nullopt);
    Record(*store, "t1", file_, FileVersionPhase::kAfter, "one\n");
    Record(*store, "t2", file_, FileVersionPhase::kBefore, "one\n");
    Record(*store, "t2", file_, FileVersionPhase::kAfter, "one\ntwo\n");
    Record(*store, "t1", link_, FileVersionPhase::kAfter, "written through the link\n");
    store.reset();
    WriteWhole(file_, "one\ntwo\n");

    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"), std::vector<std::string>{});
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
  }

  static void Record(Store& store, const std::string& call, const std::string& path,
                     FileVersionPhase phase, std::optional<std::string> content) {
    FileVersion v{.agent_session = "s",
                  .tool_use_id = call,
                  .file_path = path,
                  .phase = phase,
                  .exists = content.has_value(),
                  .tool = "Write",
                  .source = "hook"};
    auto recorded = store.RecordFileVersion(v, content.value_or(""));
    ASSERT_TRUE(recorded) << recorded.error().ToString();
  }

  httplib::Result Rewind(const json& body) {
    return client_->Post("/v1/sessions/s/rewind", body.dump(), kJsonType);
  }
  httplib::Result GetWithPath(const std::string& route, const std::string& path,
                              httplib::Params extra = {}) {
    extra.emplace("path", path);
    return client_->Get(route, extra, httplib::Headers{});
  }
  int64_t MessageCount() { return Body(client_->Get("/v1/sessions/s"))["message_count"]; }

  TempDir dir_;
  fs::path work_;
  std::string file_, link_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(CheckpointRoutesTest, ADryRunShowsTheFilesAndChangesNothing) {
  auto r = Rewind({{"to_seq", 2}, {"code", "both"}, {"dry_run", true}});
  ASSERT_EQ(r->status, 200) << r->body;
  json body = Body(r);
  EXPECT_EQ(body["conversation"], true);
  ASSERT_EQ(body["files"].size(), 1u) << r->body;
  const json& f = body["files"][0];
  EXPECT_EQ(f["path"], file_);
  EXPECT_EQ(f["action"], "restore");
  EXPECT_TRUE(f["conflict"].is_null());
  EXPECT_TRUE(f["refused"].is_null());
  EXPECT_EQ(f["done"], false);
  EXPECT_NE(f["diff"].get<std::string>().find("\n-two"), std::string::npos) << f["diff"];

  EXPECT_EQ(ReadWhole(file_), "one\ntwo\n");
  EXPECT_EQ(MessageCount(), 4);
}

TEST_F(CheckpointRoutesTest, BothRewindsTheFilesThenTheConversation) {
  auto r = Rewind({{"to_seq", 2}, {"code", "both"}});
  ASSERT_EQ(r->status, 201) << r->body;
  json body = Body(r);
  EXPECT_EQ(body["event"]["type"], "rewind");
  EXPECT_EQ(body["event"]["rewind"]["to_seq"], 2);
  ASSERT_EQ(body["files"].size(), 1u);
  EXPECT_EQ(body["files"][0]["done"], true);
  EXPECT_EQ(ReadWhole(file_), "one\n");
  EXPECT_EQ(MessageCount(), 2);
}

TEST_F(CheckpointRoutesTest, OnlyRewindsTheFilesAndLeavesTheConversation) {
  auto r = Rewind({{"to_seq", 0}, {"code", "only"}});
  ASSERT_EQ(r->status, 201) << r->body;
  json body = Body(r);
  EXPECT_TRUE(body["event"].is_null());
  EXPECT_EQ(body["conversation"], false);
  // Before t1 there was no file: the rewind to 0 removes it.
  ASSERT_EQ(body["files"].size(), 2u) << r->body;
  EXPECT_FALSE(fs::exists(file_));
  EXPECT_EQ(MessageCount(), 4);
}

TEST_F(CheckpointRoutesTest, TheServersOwnWritesAreRecordedSoTheyAreNoConflictLater) {
  ASSERT_EQ(Rewind({{"to_seq", 2}, {"code", "only"}})->status, 201);
  ASSERT_EQ(ReadWhole(file_), "one\n");
  json versions = Body(GetWithPath("/v1/files/history", file_, {{"diffs", "0"}}))["versions"];
  ASSERT_EQ(versions.size(), 3u) << versions.dump();
  EXPECT_EQ(versions[2]["tool"], "rewind");

  // Version 2 back over the rewind's own write: not someone else's change.
  auto r =
      client_->Post("/v1/files/restore", json({{"path", file_}, {"version", 2}}).dump(), kJsonType);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(ReadWhole(file_), "one\ntwo\n");
  versions = Body(GetWithPath("/v1/files/history", file_, {{"diffs", "0"}}))["versions"];
  ASSERT_EQ(versions.size(), 4u) << versions.dump();
  EXPECT_EQ(versions[3]["tool"], "restore");
  EXPECT_EQ(versions[3]["agent_session"], "s");
}

TEST_F(CheckpointRoutesTest, AConflictChangesNothingWithoutForce) {
  WriteWhole(file_, "edited by hand\n");
  auto r = Rewind({{"to_seq", 2}, {"code", "both"}});
  ASSERT_EQ(r->status, 409) << r->body;
  json body = Body(r);
  EXPECT_EQ(ErrorCode(r), "failed_precondition");
  EXPECT_NE(body["error"]["message"].get<std::string>().find(file_), std::string::npos);
  ASSERT_EQ(body["files"].size(), 1u) << r->body;
  EXPECT_FALSE(body["files"][0]["conflict"].is_null());
  EXPECT_EQ(body["files"][0]["done"], false);
  EXPECT_EQ(ReadWhole(file_), "edited by hand\n");
  EXPECT_EQ(MessageCount(), 4);

  auto forced = Rewind({{"to_seq", 2}, {"code", "both"}, {"force", true}});
  ASSERT_EQ(forced->status, 201) << forced->body;
  EXPECT_EQ(ReadWhole(file_), "one\n");
  EXPECT_EQ(MessageCount(), 2);
}

TEST_F(CheckpointRoutesTest, BadRewindOptionsAreRefusedAndWriteNothing) {
  EXPECT_EQ(Rewind({{"to_seq", 2}, {"code", "files"}})->status, 400);
  EXPECT_EQ(Rewind({{"to_seq", 2}, {"code", 1}})->status, 400);
  EXPECT_EQ(Rewind({{"to_seq", 2}, {"code", "both"}, {"force", "yes"}})->status, 400);
  EXPECT_EQ(Rewind({{"to_seq", 9}, {"code", "both"}})->status, 400);
  // A dry run of the conversation alone would otherwise be a real rewind.
  EXPECT_EQ(Rewind({{"to_seq", 2}, {"dry_run", true}})->status, 400);
  EXPECT_EQ(
      client_->Post("/v1/sessions/nope/rewind", R"({"to_seq":0,"code":"both"})", kJsonType)->status,
      404);
  EXPECT_EQ(ReadWhole(file_), "one\ntwo\n");
  EXPECT_EQ(MessageCount(), 4);
  // The plain rewind still answers the event itself.
  auto plain = Rewind({{"to_seq", 3}});
  ASSERT_EQ(plain->status, 201) << plain->body;
  EXPECT_EQ(Body(plain)["type"], "rewind");
  EXPECT_EQ(ReadWhole(file_), "one\ntwo\n");
}

TEST_F(CheckpointRoutesTest, HistoryListsEachVersionWithItsPromptAndDiff) {
  auto r = GetWithPath("/v1/files/history", file_);
  ASSERT_EQ(r->status, 200) << r->body;
  json body = Body(r);
  EXPECT_EQ(body["path"], file_);
  ASSERT_EQ(body["versions"].size(), 2u) << r->body;
  const json& second = body["versions"][1];
  EXPECT_EQ(second["number"], 2);
  EXPECT_EQ(second["session_id"], "s");
  EXPECT_EQ(second["agent_session"], "s");
  EXPECT_EQ(second["seq"], 4);
  EXPECT_EQ(second["tool"], "Write");
  EXPECT_EQ(second["source"], "hook");
  EXPECT_EQ(second["size"], 8);
  EXPECT_EQ(second["exists"], true);
  EXPECT_EQ(second["prompt"], "add a line");
  EXPECT_NE(second["diff"].get<std::string>().find("\n+two"), std::string::npos);
  EXPECT_EQ(body["versions"][0]["seq"], 2);

  json bare = Body(GetWithPath("/v1/files/history", file_, {{"diffs", "0"}}));
  EXPECT_FALSE(bare["versions"][0].contains("diff"));
  EXPECT_EQ(GetWithPath("/v1/files/history", file_, {{"diffs", "maybe"}})->status, 400);
}

TEST_F(CheckpointRoutesTest, BlameNamesTheCallThatWroteEachLine) {
  auto r = GetWithPath("/v1/files/blame", file_);
  ASSERT_EQ(r->status, 200) << r->body;
  json lines = Body(r)["lines"];
  ASSERT_EQ(lines.size(), 2u) << r->body;
  EXPECT_EQ(lines[0]["text"], "one");
  EXPECT_EQ(lines[0]["agent"], true);
  EXPECT_EQ(lines[0]["tool_use_id"], "t1");
  EXPECT_EQ(lines[0]["seq"], 2);
  EXPECT_EQ(lines[1]["text"], "two");
  EXPECT_EQ(lines[1]["tool_use_id"], "t2");
  EXPECT_EQ(lines[1]["seq"], 4);
  EXPECT_EQ(lines[1]["session_id"], "s");

  WriteWhole(file_, "one\ntwo\nby hand\n");
  lines = Body(GetWithPath("/v1/files/blame", file_))["lines"];
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["agent"], false);
  EXPECT_TRUE(lines[2]["version_id"].is_null());
}

TEST_F(CheckpointRoutesTest, RestoreWritesAVersionBackAndADryRunDoesNot) {
  const json dry = {{"path", file_}, {"version", 1}, {"dry_run", true}};
  auto r = client_->Post("/v1/files/restore", dry.dump(), kJsonType);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Body(r)["files"][0]["action"], "restore");
  EXPECT_NE(Body(r)["files"][0]["diff"].get<std::string>().find("\n-two"), std::string::npos);
  EXPECT_EQ(ReadWhole(file_), "one\ntwo\n");

  r = client_->Post("/v1/files/restore", json({{"path", file_}, {"version", 1}}).dump(), kJsonType);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(Body(r)["files"][0]["done"], true);
  EXPECT_EQ(ReadWhole(file_), "one\n");

  // Version 2 over a file changed by hand: a conflict until forced.
  WriteWhole(file_, "mine\n");
  r = client_->Post("/v1/files/restore", json({{"path", file_}, {"version", 2}}).dump(), kJsonType);
  ASSERT_EQ(r->status, 409) << r->body;
  EXPECT_EQ(ReadWhole(file_), "mine\n");
  r = client_->Post("/v1/files/restore",
                    json({{"path", file_}, {"version", 2}, {"force", true}}).dump(), kJsonType);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(ReadWhole(file_), "one\ntwo\n");

  EXPECT_EQ(
      client_->Post("/v1/files/restore", json({{"path", file_}, {"version", 7}}).dump(), kJsonType)
          ->status,
      404);
  EXPECT_EQ(client_->Post("/v1/files/restore", json({{"path", file_}}).dump(), kJsonType)->status,
            400);
  EXPECT_EQ(
      client_->Post("/v1/files/restore", json({{"path", file_}, {"version", 0}}).dump(), kJsonType)
          ->status,
      400);
}

TEST_F(CheckpointRoutesTest, EveryAnswerHasTheShapeDocsOpenapiJsonDocuments) {
  const json schemas = DocumentedSchemas();
  ASSERT_TRUE(schemas.is_object() && !schemas.empty());
  struct Answer {
    std::string schema;
    json body;
  };
  std::vector<Answer> answers = {
      {"FileHistory", Body(GetWithPath("/v1/files/history", file_))},
      {"Blame", Body(GetWithPath("/v1/files/blame", file_))},
      {"CodeRewind", Body(Rewind({{"to_seq", 2}, {"code", "both"}, {"dry_run", true}}))},
      {"FileRestoreResult",
       Body(client_->Post("/v1/files/restore",
                          json({{"path", file_}, {"version", 1}, {"dry_run", true}}).dump(),
                          kJsonType))},
  };
  WriteWhole(file_, "changed\n");
  answers.push_back({"FilesNotRestored", Body(Rewind({{"to_seq", 2}, {"code", "both"}}))});
  answers.push_back(
      {"CodeRewind", Body(Rewind({{"to_seq", 2}, {"code", "only"}, {"force", true}}))});
  for (const Answer& a : answers) {
    std::vector<std::string> problems = a.schema == "FilesNotRestored"
                                            ? std::vector<std::string>{}
                                            : Undocumented(schemas, a.schema, a.body);
    if (a.schema == "FilesNotRestored") {
      EXPECT_TRUE(a.body.contains("error")) << a.body;
      for (const json& f : a.body["files"]) {
        for (std::string& p : Undocumented(schemas, "FileRestore", f)) problems.push_back(p);
      }
    }
    std::string all;
    for (const std::string& p : problems) all += "\n  " + p;
    EXPECT_TRUE(problems.empty()) << a.schema << ":" << all << "\n" << a.body.dump();
  }
}

TEST_F(CheckpointRoutesTest, HostilePathsAreRefusedBeforeTheDiskIsTouched) {
  struct Case {
    std::string path;
    int status;
  };
  const std::string secret = (work_ / "secret.txt").string();
  const std::vector<Case> cases = {
      {"", 400},
      {"a.txt", 400},                            // relative
      {work_.string() + "/../work/a.txt", 400},  // ".."
      {work_.string() + "//a.txt", 400},         // not normal
      {work_.string() + "/./a.txt", 400},
      {file_ + "/", 400},
      {"/" + std::string(5000, 'a'), 400},  // past 4096 bytes
      {"/etc/passwd", 404},                 // the server's files: no versions
      {secret, 404},
      {work_.string(), 404},  // a folder
  };
  for (const Case& c : cases) {
    for (const char* route : {"/v1/files/history", "/v1/files/blame"}) {
      auto r = GetWithPath(route, c.path);
      ASSERT_TRUE(r) << route << " " << c.path.substr(0, 80);
      EXPECT_EQ(r->status, c.status) << route << " " << c.path.substr(0, 80) << ": " << r->body;
      EXPECT_EQ(r->body.find("SECRET-LINE"), std::string::npos);
      EXPECT_EQ(r->body.find("root:"), std::string::npos);
      if (c.status == 404) {
        EXPECT_NE(Body(r)["error"]["message"].get<std::string>().find("no recorded versions of"),
                  std::string::npos)
            << r->body;
      }
    }
    const json restore = {{"path", c.path}, {"version", 1}, {"force", true}};
    auto r = client_->Post("/v1/files/restore", restore.dump(), kJsonType);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, c.status) << "restore " << c.path.substr(0, 80) << ": " << r->body;
  }
  // A NUL reaches a route only in a JSON body (the query's transport ends
  // a value at one).
  const json nul = {{"path", file_ + std::string(1, '\0') + "x"}, {"version", 1}, {"force", true}};
  EXPECT_EQ(client_->Post("/v1/files/restore", nul.dump(), kJsonType)->status, 400);
  EXPECT_EQ(ReadWhole(secret), "SECRET-LINE\n");
  EXPECT_EQ(ReadWhole(file_), "one\ntwo\n");

  // The server is still there.
  EXPECT_EQ(client_->Get("/v1/health")->status, 200);
  EXPECT_EQ(GetWithPath("/v1/files/history", file_)->status, 200);
}

TEST_F(CheckpointRoutesTest, APathThroughASymbolicLinkIsNeverReadNorWritten) {
  // The store holds a version of link.txt, so the path passes the first
  // gate; the file itself is never opened through the link.
  auto blame = GetWithPath("/v1/files/blame", link_);
  ASSERT_TRUE(blame);
  EXPECT_EQ(blame->status, 409) << blame->body;
  EXPECT_EQ(blame->body.find("SECRET-LINE"), std::string::npos) << blame->body;

  const json restore = {{"path", link_}, {"version", 1}, {"force", true}};
  auto r = client_->Post("/v1/files/restore", restore.dump(), kJsonType);
  ASSERT_EQ(r->status, 409) << r->body;
  json body = Body(r);
  ASSERT_EQ(body["files"].size(), 1u);
  EXPECT_FALSE(body["files"][0]["refused"].is_null()) << r->body;
  EXPECT_EQ(ReadWhole(work_ / "secret.txt"), "SECRET-LINE\n");
  EXPECT_TRUE(fs::is_symlink(link_));

  // The version itself is the store's, not the disk's: its history is listed.
  EXPECT_EQ(GetWithPath("/v1/files/history", link_)->status, 200);
  EXPECT_EQ(client_->Get("/v1/health")->status, 200);
}

}  // namespace
}  // namespace checkpoint_routes_test
}  // namespace sessiondb::testing
