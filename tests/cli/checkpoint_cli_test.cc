// The code checkpoint verbs through the real binary: `rewind --code`,
// `--code-only`, `--dry-run`, `--force`, `file-history`, `restore` and
// `blame`, over versions recorded in-process (Store::RecordFileVersion, as
// the hook does) and real files in the test's folder.
#include "cli_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

class CheckpointCli : public Cli {
 protected:
  using Content = std::optional<std::string>;  // nullopt: no file

  std::string Path(const std::string& name) { return dir_.Sub("work/" + name); }

  static Content OnDisk(const std::string& path) {
    if (!std::filesystem::exists(std::filesystem::symlink_status(path))) return std::nullopt;
    return Slurp(path);
  }

  static void Put(const std::string& path, const Content& content) {
    if (!content) {
      std::filesystem::remove(path);
      return;
    }
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << *content;
  }

  // The store, opened in this process for what the hook would record; closed
  // (reset) before the binary runs.
  Store& Open() {
    if (!store_handle_) {
      auto opened = Store::Open(store_, {});
      EXPECT_TRUE(opened) << opened.error().ToString();
      store_handle_ = std::move(*opened);
    }
    return *store_handle_;
  }
  void Close() { store_handle_.reset(); }

  void Record(const std::string& agent, const std::string& call, const std::string& path,
              FileVersionPhase phase, const Content& content) {
    FileVersion v;
    v.agent_session = agent;
    v.tool_use_id = call;
    v.file_path = path;
    v.phase = phase;
    v.exists = content.has_value();
    v.tool = "Edit";
    v.source = "hook";
    auto r = Open().RecordFileVersion(v, content.value_or(""));
    ASSERT_TRUE(r) << r.error().ToString();
  }

  std::string Session(const std::string& agent) {
    auto s = Open().CreateSession(
        sessiondb::NewSession{.metadata_json = "{\"source_session_id\":\"" + agent + "\"}"});
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? s->id : "";
  }

  int64_t Say(const std::string& session, const std::string& text) {
    Message m;
    m.parts.push_back(Part::Text(text));
    auto r = Open().Append(session, m);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? r->seq : 0;
  }

  // One hooked tool call writing `content` to `path`; returns its seq.
  int64_t Write(const std::string& session, const std::string& agent, const std::string& path,
                const Content& content) {
    const std::string call = "toolu_" + std::to_string(++calls_);
    Record(agent, call, path, FileVersionPhase::kBefore, OnDisk(path));
    Message m;
    m.role = Role::kAssistant;
    m.parts.push_back(Part::ToolCall(call, "Edit", "{}"));
    auto r = Open().Append(session, m);
    EXPECT_TRUE(r) << r.error().ToString();
    Put(path, content);
    Record(agent, call, path, FileVersionPhase::kAfter, content);
    return r ? r->seq : 0;
  }

  // #1 user, #2 creates a.py, #3 edits it, #4 user, #5 creates b.py.
  std::string Scenario() {
    const std::string sid = Session("agent-1");
    Say(sid, "write a.py");
    Write(sid, "agent-1", Path("a.py"), "print(1)\n");
    Write(sid, "agent-1", Path("a.py"), "print(1)\nprint(2)\n");
    Say(sid, "and b.py");
    Write(sid, "agent-1", Path("b.py"), "b = 1\n");
    Close();
    return sid;
  }

  size_t EventCount(const std::string& sid) {
    return Sdb({"--json", "events", sid}).Json()["events"].size();
  }

  std::unique_ptr<Store> store_handle_;
  int calls_ = 0;
};

TEST_F(CheckpointCli, RewindCodeRestoresTheFilesThenTheConversation) {
  const std::string sid = Scenario();
  CliRun r = Sdb({"rewind", sid, "--to", "2", "--code"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\n");
  EXPECT_EQ(OnDisk(Path("b.py")), std::nullopt);
  EXPECT_TRUE(Contains(r.out, "restored   " + Path("a.py"))) << r.out;
  EXPECT_TRUE(Contains(r.out, "removed    " + Path("b.py"))) << r.out;
  EXPECT_TRUE(Contains(r.out, "rewind #6: the view of " + sid + " ends at #2")) << r.out;
  EXPECT_EQ(Sdb({"--json", "show", sid}).Json()["messages"].size(), 2u);

  // The log keeps #3..#5: rewinding to #5 brings the files of the end back.
  CliRun back = Sdb({"rewind", sid, "--to", "5", "--code"});
  ASSERT_EQ(back.exit_code, 0) << back.err << back.out;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\nprint(2)\n");
  EXPECT_EQ(OnDisk(Path("b.py")), "b = 1\n");
}

TEST_F(CheckpointCli, RewindCodeJsonListsEachFileAndTheEvent) {
  const std::string sid = Scenario();
  CliRun r = Sdb({"--json", "rewind", sid, "--to", "0", "--code"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = r.Json();
  EXPECT_EQ(j["to_seq"], 0);
  EXPECT_EQ(j["scope"], "code");
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"][0]["path"], Path("a.py"));
  EXPECT_EQ(j["files"][0]["action"], "remove");
  EXPECT_EQ(j["files"][0]["done"], true);
  EXPECT_TRUE(j["files"][0]["conflict"].is_null());
  EXPECT_EQ(j["event"]["rewind"]["to_seq"], 0);
  EXPECT_EQ(j["session"]["message_count"], 0);
  EXPECT_FALSE(std::filesystem::exists(Path("a.py")));
}

TEST_F(CheckpointCli, CodeOnlyLeavesTheConversationAndConversationOnlyTheFiles) {
  const std::string sid = Scenario();
  CliRun code = Sdb({"rewind", sid, "--to", "2", "--code-only"});
  ASSERT_EQ(code.exit_code, 0) << code.err;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\n");
  EXPECT_EQ(EventCount(sid), 5u) << "no rewind event";
  EXPECT_FALSE(Contains(code.out, "rewind #"));

  CliRun talk = Sdb({"rewind", sid, "--to", "1"});  // the default: the conversation only
  ASSERT_EQ(talk.exit_code, 0) << talk.err;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\n");
  EXPECT_EQ(EventCount(sid), 6u);
  EXPECT_EQ(Sdb({"rewind", sid, "--to", "1", "--conversation-only"}).exit_code, 0);
  EXPECT_EQ(Sdb({"rewind", sid, "--to", "1", "--code", "--code-only"}).exit_code, 1);
}

TEST_F(CheckpointCli, DryRunPrintsWhatWouldHappenWithDiffsAndChangesNothing) {
  const std::string sid = Scenario();
  CliRun r = Sdb({"rewind", sid, "--to", "2", "--code", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "would restore " + Path("a.py"))) << r.out;
  EXPECT_TRUE(Contains(r.out, "would remove " + Path("b.py"))) << r.out;
  EXPECT_TRUE(Contains(r.out, "\n-print(2)\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "-b = 1\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "would end at #2")) << r.out;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\nprint(2)\n");
  EXPECT_EQ(OnDisk(Path("b.py")), "b = 1\n");
  EXPECT_EQ(EventCount(sid), 5u);

  const json j = Sdb({"--json", "rewind", sid, "--to", "2", "--code", "--dry-run"}).Json();
  EXPECT_EQ(j["dry_run"], true);
  EXPECT_TRUE(Contains(j["files"][0]["diff"].get<std::string>(), "-print(2)"));
  EXPECT_FALSE(j.contains("event"));
}

TEST_F(CheckpointCli, AConflictChangesNothingWithoutForceAndForceOverwrites) {
  const std::string sid = Scenario();
  Put(Path("b.py"), "b = 2  # by hand\n");
  CliRun r = Sdb({"rewind", sid, "--to", "2", "--code"});
  EXPECT_EQ(r.exit_code, 7) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "--force")) << r.err;
  EXPECT_TRUE(Contains(r.out, "conflict   " + Path("b.py"))) << r.out;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\nprint(2)\n") << "no file changed";
  EXPECT_EQ(OnDisk(Path("b.py")), "b = 2  # by hand\n");
  EXPECT_EQ(EventCount(sid), 5u) << "nor the conversation";

  CliRun j = Sdb({"--json", "rewind", sid, "--to", "2", "--code"});
  EXPECT_EQ(j.exit_code, 7);
  const json doc = j.Json();
  EXPECT_EQ(doc["error"]["code"], "failed_precondition");
  EXPECT_FALSE(doc["files"][1]["conflict"].is_null());
  EXPECT_TRUE(doc["files"][0]["conflict"].is_null());

  CliRun forced = Sdb({"rewind", sid, "--to", "2", "--code", "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\n");
  EXPECT_EQ(OnDisk(Path("b.py")), std::nullopt);
  EXPECT_EQ(EventCount(sid), 6u);
  // What the rewind wrote is recorded: the next rewind sees no conflict.
  CliRun again = Sdb({"rewind", sid, "--to", "1", "--code"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(OnDisk(Path("a.py")), std::nullopt);
}

TEST_F(CheckpointCli, ARewindPastTheLogIsRefusedBeforeAnyFileIsTouched) {
  const std::string sid = Scenario();
  CliRun r = Sdb({"rewind", sid, "--to", "99", "--code"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\nprint(2)\n");
}

TEST_F(CheckpointCli, FileHistoryListsTheWritesAndRestoreWritesOneBack) {
  const std::string sid = Scenario();
  const json h = Sdb({"--json", "file-history", Path("a.py")}).Json();
  EXPECT_EQ(h["path"], Path("a.py"));
  ASSERT_EQ(h["versions"].size(), 2u);
  EXPECT_EQ(h["versions"][0]["number"], 1);
  EXPECT_EQ(h["versions"][0]["session_id"], sid);
  EXPECT_EQ(h["versions"][0]["agent_session"], "agent-1");
  EXPECT_EQ(h["versions"][0]["seq"], 2);
  EXPECT_EQ(h["versions"][1]["seq"], 3);
  EXPECT_EQ(h["versions"][1]["tool"], "Edit");
  EXPECT_EQ(h["versions"][1]["prompt"], "write a.py");
  EXPECT_TRUE(Contains(h["versions"][1]["diff"].get<std::string>(), "+print(2)"));
  const json bare = Sdb({"--json", "file-history", Path("a.py"), "--no-diff"}).Json();
  EXPECT_FALSE(bare["versions"][0].contains("diff"));
  CliRun text = Sdb({"file-history", Path("a.py")});
  EXPECT_TRUE(Contains(text.out, "version 2")) << text.out;
  EXPECT_TRUE(Contains(text.out, "prompt: write a.py")) << text.out;

  CliRun dry = Sdb({"restore", Path("a.py"), "--version", "1", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(Contains(dry.out, "-print(2)")) << dry.out;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\nprint(2)\n");
  CliRun restored = Sdb({"restore", Path("a.py"), "--version", "1"});
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\n");
  EXPECT_EQ(Sdb({"restore", Path("a.py"), "--version", "9"}).exit_code, 3);

  Put(Path("a.py"), "edited by hand\n");
  CliRun refused = Sdb({"restore", Path("a.py"), "--version", "2"});
  EXPECT_EQ(refused.exit_code, 7) << refused.out;
  EXPECT_EQ(OnDisk(Path("a.py")), "edited by hand\n");
  EXPECT_EQ(Sdb({"restore", Path("a.py"), "--version", "2", "--force"}).exit_code, 0);
  EXPECT_EQ(OnDisk(Path("a.py")), "print(1)\nprint(2)\n");
}

TEST_F(CheckpointCli, ASymbolicLinkIsRefusedAndItsTargetKept) {
  const std::string sid = Scenario();
  Put(Path("target.txt"), "keep\n");
  std::filesystem::remove(Path("a.py"));
  std::filesystem::create_symlink(Path("target.txt"), Path("a.py"));
  CliRun r = Sdb({"rewind", sid, "--to", "2", "--code", "--force"});
  EXPECT_EQ(r.exit_code, 7) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "symbolic link")) << r.err;
  EXPECT_EQ(OnDisk(Path("target.txt")), "keep\n");
  EXPECT_EQ(OnDisk(Path("b.py")), "b = 1\n");
}

TEST_F(CheckpointCli, BlameNamesTheCallOfEachLineOrNoAgent) {
  const std::string sid = Session("agent-1");
  Say(sid, "write it");
  const int64_t seq = Write(sid, "agent-1", Path("c.py"), "one\ntwo\n");
  Close();
  Put(Path("c.py"), "one\ntwo\nthree\n");
  const json j = Sdb({"--json", "blame", Path("c.py")}).Json();
  EXPECT_EQ(j["path"], Path("c.py"));
  ASSERT_EQ(j["lines"].size(), 3u);
  const json& first = j["lines"][0];
  EXPECT_EQ(first["line"], 1);
  EXPECT_EQ(first["text"], "one");
  EXPECT_EQ(first["agent"], true);
  EXPECT_EQ(first["session_id"], sid);
  EXPECT_EQ(first["agent_session"], "agent-1");
  EXPECT_EQ(first["seq"], seq);
  EXPECT_EQ(first["tool_use_id"], "toolu_1");
  EXPECT_TRUE(first["version_id"].is_number_integer());
  EXPECT_EQ(first["tool"], "Edit");
  const json& last = j["lines"][2];
  EXPECT_EQ(last["agent"], false);
  EXPECT_TRUE(last["session_id"].is_null());
  EXPECT_TRUE(last["version_id"].is_null());

  CliRun text = Sdb({"blame", Path("c.py")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Contains(text.out, sid.substr(0, 8) + " #" + std::to_string(seq) + "  Edit | one\n"))
      << text.out;
  // The left column is padded to its widest entry.
  const std::string agent_column = sid.substr(0, 8) + " #" + std::to_string(seq) + "  Edit";
  std::string nobody = "(not an agent)";
  nobody.resize(agent_column.size(), ' ');
  EXPECT_TRUE(Contains(text.out, nobody + " | three\n")) << text.out;
  EXPECT_EQ(Sdb({"blame", Path("none.py")}).exit_code, 3);
}

TEST_F(CheckpointCli, TheNewVerbsHaveHelpWithExamples) {
  for (const char* verb : {"file-history", "restore", "blame", "rewind"}) {
    CliRun r = Run({verb, "--help"}, {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_TRUE(Contains(r.out, "Example")) << verb << ":\n" << r.out;
  }
  EXPECT_TRUE(Contains(Run({"rewind", "--help"}, {.with_store = false}).out, "--code-only"));
}

}  // namespace
}  // namespace sessiondb::testing
