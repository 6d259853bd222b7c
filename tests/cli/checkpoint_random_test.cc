// Code checkpoints under random use (issue 39, "How it is checked"): in a
// folder of six files, random steps create, write, edit and delete (through
// a "Bash" `rm`) files as an agent's tool calls, each a message in a store
// session and run through the real `sessiondb hook claude-code` before and
// after, mixed with changes made from outside (no hook, no message). Then:
//  - the versions the hook kept are exactly those a model of the hook's
//    rules expects (which file, which call, which phase, which bytes);
//  - `sessiondb rewind SESSION --to SEQ --code`, for every SEQ from the last
//    down to 0, each on the folder as the steps left it, restores each file
//    the agent wrote to its bytes at SEQ (created files removed), and, when
//    an outside change touched a file since the agent's last recorded write,
//    refuses without --force and changes nothing (files and conversation);
//    with --force it writes what the rules say;
//  - `sessiondb blame PATH --json` names, for every line, the tool call that
//    wrote it, or no agent for a line written from outside.
// The model of who wrote a line: a Write's lines and an Edit's new line are
// its call's; a line changed from outside is no agent's until a shell check
// (PostToolUse of Bash) finds the file changed, which records the change as
// that call's (it cannot tell who made it). Lines are unique, so a line
// diff is a set difference. Thread-safety: one test at a time per store.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "blob/sha256.h"
#include "cli_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace checkpoint_random_cli {

struct Line {
  std::string text;   // without the newline
  std::string owner;  // the tool_use_id that wrote it; "" for no agent
};
using FileLines = std::optional<std::vector<Line>>;  // nullopt: no file

std::optional<std::string> Bytes(const FileLines& file) {
  if (!file) return std::nullopt;
  std::string out;
  for (const Line& l : *file) out += l.text + "\n";
  return out;
}

// A file version the hook must have kept, by the model.
struct ExpectedVersion {
  std::string path;
  FileVersionPhase phase = FileVersionPhase::kAfter;
  std::optional<std::string> content;  // nullopt: no file
  std::string call;
  std::string source;
  int64_t seq = 0;
};

struct Scenario {
  std::string backend;  // "embedded" or "postgres"
  uint32_t seed = 1;
  int steps = 40;
  bool outside_changes = true;
};

std::string ScenarioName(const ::testing::TestParamInfo<Scenario>& info) {
  return info.param.backend + "_seed" + std::to_string(info.param.seed) +
         (info.param.outside_changes ? "" : "_agent_only");
}

class CheckpointRandomCli : public Cli, public ::testing::WithParamInterface<Scenario> {
 protected:
  void SetUp() override {
    if (GetParam().backend == "postgres") {
      pg_ = std::make_unique<PgTestDatabase>();
      ASSERT_TRUE(pg_->ok());
      location_ = pg_->uri();
    } else {
      location_ = store_;
    }
    std::filesystem::create_directories(folder_);
    rng_.seed(GetParam().seed);
    for (int i = 0; i < 6; ++i) names_.push_back("f" + std::to_string(i) + ".py");
    for (const std::string& name : names_) disk_[name] = std::nullopt;
  }

  std::string PathOf(const std::string& name) const { return folder_ + "/" + name; }

  CliRun Sdb(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--store", location_});
    return Run(args, {.input = input, .with_store = false});
  }

  std::unique_ptr<Store> OpenStore() {
    auto store = Store::Open(location_);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  // ---- The folder and the model --------------------------------------------

  std::string NewLine(const std::string& why) {
    return "value_" + std::to_string(++line_counter_) + " = '" + why + "'";
  }

  void WriteToDisk(const std::string& name) {
    const std::optional<std::string> bytes = Bytes(disk_[name]);
    if (!bytes) {
      std::filesystem::remove(PathOf(name));
      return;
    }
    std::ofstream(PathOf(name), std::ios::binary | std::ios::trunc) << *bytes;
  }

  // Puts the folder back as `files` says (every file of the model).
  void Restore(const std::map<std::string, FileLines>& files) {
    for (const auto& [name, lines] : files) {
      const std::optional<std::string> bytes = Bytes(lines);
      if (!bytes) {
        std::filesystem::remove(PathOf(name));
      } else {
        std::ofstream(PathOf(name), std::ios::binary | std::ios::trunc) << *bytes;
      }
    }
  }

  std::optional<std::string> ReadDisk(const std::string& name) {
    if (!std::filesystem::exists(PathOf(name))) return std::nullopt;
    return Slurp(PathOf(name));
  }

  std::map<std::string, std::optional<std::string>> DiskBytes() {
    std::map<std::string, std::optional<std::string>> out;
    for (const std::string& name : names_) out[name] = ReadDisk(name);
    return out;
  }

  std::vector<std::string> Existing(bool exists) const {
    std::vector<std::string> out;
    for (const auto& [name, lines] : disk_) {
      if (lines.has_value() == exists) out.push_back(name);
    }
    return out;
  }

  template <typename T>
  const T& Pick(const std::vector<T>& from) {
    return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng_)];
  }

  // The latest version the model says the hook kept of `path`, or null.
  const ExpectedVersion* LatestKept(const std::string& path) const {
    for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
      if (it->path == path) return &*it;
    }
    return nullptr;
  }

  // ---- One step ---------------------------------------------------------------

  // The tool call as a message of the session: its seq.
  int64_t AppendToolCall(const std::string& call, const std::string& tool, const json& input) {
    auto store = OpenStore();
    if (!store) return -1;
    Message m;
    m.role = Role::kAssistant;
    m.parts.push_back(Part::ToolCall(call, tool, input.dump()));
    auto appended = store->Append(session_, m);
    EXPECT_TRUE(appended) << appended.error().ToString();
    return appended ? appended->seq : -1;
  }

  std::string Event(const std::string& name, const std::string& tool, const std::string& call,
                    const json& input) {
    json e = {{"session_id", session_}, {"transcript_path", dir_.Sub("transcript.jsonl")},
              {"cwd", folder_},         {"hook_event_name", name},
              {"tool_name", tool},      {"tool_input", input},
              {"tool_use_id", call}};
    if (name == "PostToolUse") e["tool_response"] = {{"success", true}};
    return e.dump();
  }

  // Runs the hook; a PreToolUse the code memory denies is retried, as the
  // agent does, and then goes on.
  void Hook(const std::string& name, const std::string& tool, const std::string& call,
            const json& input) {
    const std::string event = Event(name, tool, call, input);
    CliRun r = Sdb({"hook", "claude-code"}, event);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (!r.out.empty()) {
      ASSERT_EQ(name, "PreToolUse") << r.out;
      r = Sdb({"hook", "claude-code"}, event);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_EQ(r.out, "") << "the retry goes on\n" << r.err;
  }

  void Keep(const std::string& name, FileVersionPhase phase, const std::string& call,
            const std::string& source, int64_t seq) {
    // A "before" equal to the file's latest version, an agent's "after", says
    // nothing new and is not kept (Store::RecordFileVersion).
    const ExpectedVersion* latest = LatestKept(PathOf(name));
    if (phase == FileVersionPhase::kBefore && latest != nullptr &&
        latest->phase == FileVersionPhase::kAfter && latest->source != "sessiondb" &&
        latest->content == Bytes(disk_[name])) {
      return;
    }
    kept_.push_back({.path = PathOf(name),
                     .phase = phase,
                     .content = Bytes(disk_[name]),
                     .call = call,
                     .source = source,
                     .seq = seq});
  }

  // An agent's Write or Edit of `name`: `change` makes it in the model.
  void FileToolStep(const std::string& tool, const std::string& name, const json& input,
                    const std::function<void(const std::string& call)>& change) {
    const std::string call = "toolu_" + std::to_string(++calls_);
    const int64_t seq = AppendToolCall(call, tool, input);
    ASSERT_GT(seq, 0);
    Hook("PreToolUse", tool, call, input);
    Keep(name, FileVersionPhase::kBefore, call, "hook", seq);
    change(call);
    WriteToDisk(name);
    Hook("PostToolUse", tool, call, input);
    Keep(name, FileVersionPhase::kAfter, call, "hook", seq);
    call_seq_[call] = seq;
    snapshots_[seq] = DiskBytes();
  }

  void CreateOrWrite(const std::string& name) {
    std::vector<Line> lines;
    const int count = std::uniform_int_distribution<int>(1, 4)(rng_);
    for (int i = 0; i < count; ++i) lines.push_back({NewLine("write"), ""});
    std::string content;
    for (const Line& l : lines) content += l.text + "\n";
    const json input = {{"file_path", PathOf(name)}, {"content", content}};
    FileToolStep("Write", name, input, [&](const std::string& call) {
      for (Line& l : lines) l.owner = call;
      disk_[name] = lines;
    });
  }

  void Edit(const std::string& name) {
    std::vector<Line>& lines = *disk_[name];
    const size_t at = std::uniform_int_distribution<size_t>(0, lines.size() - 1)(rng_);
    const std::string old_text = lines[at].text;
    const std::string new_text = NewLine("edit");
    const json input = {
        {"file_path", PathOf(name)}, {"old_string", old_text}, {"new_string", new_text}};
    FileToolStep("Edit", name, input, [&](const std::string& call) {
      (*disk_[name])[at] = {new_text, call};
    });
  }

  // `rm NAME` through Bash: the hook's shell check then records every file
  // of the session whose bytes are not those it last kept.
  void Remove(const std::string& name) {
    const std::string call = "toolu_" + std::to_string(++calls_);
    const json input = {{"command", "rm " + PathOf(name)}, {"description", "remove"}};
    const int64_t seq = AppendToolCall(call, "Bash", input);
    ASSERT_GT(seq, 0);
    Hook("PreToolUse", "Bash", call, input);
    disk_[name] = std::nullopt;
    WriteToDisk(name);
    Hook("PostToolUse", "Bash", call, input);
    for (const std::string& each : names_) {
      const ExpectedVersion* latest = LatestKept(PathOf(each));
      if (latest == nullptr || latest->content == Bytes(disk_[each])) continue;
      // The change is this call's now: the lines the kept version lacks.
      if (disk_[each]) {
        for (Line& l : *disk_[each]) {
          if (!latest->content ||
              ("\n" + *latest->content).find("\n" + l.text + "\n") == std::string::npos) {
            l.owner = call;
          }
        }
      }
      Keep(each, FileVersionPhase::kAfter, call, "shell", seq);
    }
    call_seq_[call] = seq;
    snapshots_[seq] = DiskBytes();
  }

  // A change from outside: a line replaced, or one added.
  void OutsideChange(const std::string& name) {
    std::vector<Line>& lines = *disk_[name];
    if (std::uniform_int_distribution<int>(0, 1)(rng_) == 0) {
      lines[std::uniform_int_distribution<size_t>(0, lines.size() - 1)(rng_)] = {NewLine("outside"),
                                                                                 ""};
    } else {
      lines.push_back({NewLine("outside"), ""});
    }
    WriteToDisk(name);
  }

  void RunSteps() {
    for (int step = 0; step < GetParam().steps; ++step) {
      const std::vector<std::string> present = Existing(true);
      const std::vector<std::string> absent = Existing(false);
      std::vector<std::string> ops;
      if (!absent.empty()) ops.insert(ops.end(), 2, "create");
      if (!present.empty()) {
        ops.insert(ops.end(), 2, "write");
        ops.insert(ops.end(), 3, "edit");
        ops.insert(ops.end(), 1, "rm");
        if (GetParam().outside_changes) ops.insert(ops.end(), 2, "outside");
      }
      const std::string op = Pick(ops);
      SCOPED_TRACE("step " + std::to_string(step) + ": " + op);
      if (op == "create") CreateOrWrite(Pick(absent));
      if (op == "write") CreateOrWrite(Pick(present));
      if (op == "edit") Edit(Pick(present));
      if (op == "rm") Remove(Pick(present));
      if (op == "outside") OutsideChange(Pick(present));
      if (::testing::Test::HasFatalFailure()) return;
      if (step % 20 == 19) CheckBlame();
    }
  }

  // ---- The checks ----------------------------------------------------------------

  // The versions kept are the model's: same files, calls, phases and bytes.
  void CheckVersionsKept() {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    FileVersionQuery query;
    query.agent_sessions = {session_};
    auto listed = store->ListFileVersions(query);
    ASSERT_TRUE(listed) << listed.error().ToString();
    using Key = std::tuple<std::string, std::string, int, bool, std::string, std::string>;
    std::vector<Key> got, want;
    for (const FileVersion& v : *listed) {
      got.emplace_back(v.tool_use_id, v.file_path, static_cast<int>(v.phase), v.exists,
                       v.exists ? v.sha256 : "", v.source);
    }
    for (const ExpectedVersion& v : kept_) {
      want.emplace_back(v.call, v.path, static_cast<int>(v.phase), v.content.has_value(),
                        v.content ? blob::Sha256Hex(*v.content) : "", v.source);
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << "version " << i << " of call " << std::get<0>(want[i]) << " of "
                                 << std::get<1>(want[i]);
    }
  }

  void CheckBlame() {
    for (const std::string& name : names_) {
      if (!disk_[name]) continue;
      SCOPED_TRACE("blame " + name);
      CliRun r = Sdb({"--json", "blame", PathOf(name)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const json lines = r.Json()["lines"];
      const std::vector<Line>& want = *disk_[name];
      ASSERT_EQ(lines.size(), want.size()) << r.out;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(lines[i]["text"], want[i].text);
        if (want[i].owner.empty()) {
          EXPECT_EQ(lines[i]["agent"], false) << "line " << i + 1 << " is no agent's: " << r.out;
          continue;
        }
        EXPECT_EQ(lines[i]["agent"], true) << "line " << i + 1 << ": " << r.out;
        EXPECT_EQ(lines[i]["tool_use_id"], want[i].owner) << "line " << i + 1;
        EXPECT_EQ(lines[i]["session_id"], session_);
        EXPECT_EQ(lines[i]["seq"], call_seq_[want[i].owner]) << "line " << i + 1;
      }
    }
  }

  // What `rewind --to to_seq --code` does to each file by the rules
  // (code_checkpoints.h, PlanCodeRewind): the file's first version after
  // to_seq, when a "before", else the "before" of its call, else its latest
  // "after" at or before to_seq; none: left as it is.
  struct Planned {
    std::map<std::string, std::optional<std::string>> files;  // by name: what it becomes
    bool conflict = false;
  };
  Planned Plan(int64_t to_seq, const std::map<std::string, std::optional<std::string>>& now) {
    Planned plan;
    plan.files = now;
    for (const std::string& name : names_) {
      const std::string path = PathOf(name);
      const ExpectedVersion* first = nullptr;
      for (const ExpectedVersion& v : kept_) {
        if (v.path == path && v.seq > to_seq) {
          first = &v;
          break;
        }
      }
      if (first == nullptr) continue;
      const ExpectedVersion* target = nullptr;
      if (first->phase == FileVersionPhase::kBefore) target = first;
      for (const ExpectedVersion& v : kept_) {
        if (target == nullptr && v.path == path && v.call == first->call &&
            v.phase == FileVersionPhase::kBefore) {
          target = &v;
        }
      }
      if (target == nullptr) {
        for (const ExpectedVersion& v : kept_) {
          if (v.path == path && v.seq <= to_seq && v.phase == FileVersionPhase::kAfter) {
            target = &v;
          }
        }
      }
      if (target == nullptr) continue;  // unknown: left as it is
      if (now.at(name) == target->content) continue;
      // The latest "after" kept (else the latest of any phase) is what the
      // disk must hold, or someone else changed it.
      const ExpectedVersion* recorded = nullptr;
      for (const ExpectedVersion& v : kept_) {
        if (v.path == path && v.phase == FileVersionPhase::kAfter) recorded = &v;
      }
      if (recorded == nullptr) recorded = LatestKept(path);
      if (recorded->content != now.at(name)) plan.conflict = true;
      plan.files[name] = target->content;
    }
    return plan;
  }

  // The store as the steps left it, to start each rewind from (a rewind
  // records versions of its own): a copy of the folder, or on PostgreSQL a
  // database made from this one as a template.
  std::string DatabaseName() const {
    const size_t slash = location_.find('/', location_.find("://") + 3);
    return location_.substr(slash + 1, location_.find('?', slash) - slash - 1);
  }
  void SaveStore() {
    if (pg_) {
      PgQuery(pg_->cluster_uri(),
              "CREATE DATABASE " + DatabaseName() + "_pristine TEMPLATE " + DatabaseName());
      return;
    }
    std::filesystem::copy(store_, pristine_, std::filesystem::copy_options::recursive);
  }
  void RestoreStore() {
    if (pg_) {
      PgQuery(pg_->cluster_uri(), "DROP DATABASE " + DatabaseName() + " WITH (FORCE)");
      PgQuery(pg_->cluster_uri(),
              "CREATE DATABASE " + DatabaseName() + " TEMPLATE " + DatabaseName() + "_pristine");
      return;
    }
    std::filesystem::remove_all(store_);
    std::filesystem::copy(pristine_, store_, std::filesystem::copy_options::recursive);
  }
  void DropSavedStore() {
    if (pg_) PgQuery(pg_->cluster_uri(), "DROP DATABASE " + DatabaseName() + "_pristine");
  }

  int64_t ViewCount() {
    auto store = OpenStore();
    if (!store) return -1;
    auto session = store->GetSession(session_);
    EXPECT_TRUE(session) << session.error().ToString();
    return session ? session->message_count : -1;
  }

  void CheckRewinds() {
    const std::map<std::string, FileLines> final_state = disk_;
    const std::map<std::string, std::optional<std::string>> final_bytes = DiskBytes();
    const int64_t last = snapshots_.rbegin()->first;
    steps_ = last;
    int refused = 0;
    SaveStore();
    for (int64_t to = last; to >= 0; --to) {
      SCOPED_TRACE("rewind --to " + std::to_string(to));
      RestoreStore();
      Restore(final_state);
      ASSERT_EQ(DiskBytes(), final_bytes);
      const Planned plan = Plan(to, final_bytes);
      const std::string seq = std::to_string(to);
      CliRun r = Sdb({"--json", "rewind", session_, "--to", seq, "--code"});
      if (plan.conflict) {
        const int64_t view = steps_;  // the view as the steps left it: a message each
        ++refused;
        EXPECT_NE(r.exit_code, 0) << "an outside change must not be overwritten\n" << r.out;
        EXPECT_EQ(DiskBytes(), final_bytes) << "a refused rewind changes no file";
        EXPECT_EQ(ViewCount(), view) << "nor the conversation";
        r = Sdb({"--json", "rewind", session_, "--to", seq, "--code-only", "--force"});
        ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
        EXPECT_EQ(ViewCount(), view) << "--code-only leaves the conversation";
      } else {
        ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
        EXPECT_EQ(r.Json()["session"]["message_count"], to)
            << "the conversation ends at the seq (a message per seq)";
      }
      EXPECT_EQ(DiskBytes(), plan.files) << r.out;
      if (!GetParam().outside_changes) {
        // With only the agent writing, the rules give back the folder at the
        // seq, exactly: every file it wrote, created ones removed.
        const auto& at = snapshots_.at(to);
        for (const std::string& name : names_) {
          if (LatestKept(PathOf(name)) == nullptr) continue;
          EXPECT_EQ(ReadDisk(name), at.at(name)) << name;
        }
      }
      if (::testing::Test::HasFatalFailure()) break;
    }
    DropSavedStore();
    if (::testing::Test::HasFatalFailure()) return;
    if (GetParam().outside_changes) {
      // The seeds are chosen so the refusal is exercised.
      EXPECT_GT(refused, 0) << "no rewind met an outside change: pick another seed";
    }
  }

  std::unique_ptr<PgTestDatabase> pg_;
  std::string location_;
  std::string folder_ = dir_.Sub("work");
  std::string pristine_ = dir_.Sub("pristine-store");
  std::string session_;
  std::mt19937 rng_;
  std::vector<std::string> names_;
  std::map<std::string, FileLines> disk_;  // the folder now, by the model
  std::vector<ExpectedVersion> kept_;      // the versions the hook must have kept, in order
  std::map<int64_t, std::map<std::string, std::optional<std::string>>> snapshots_;  // by seq
  std::map<std::string, int64_t> call_seq_;
  int64_t steps_ = 0;  // the agent's steps: the session's messages
  int line_counter_ = 0;
  int calls_ = 0;
};

TEST_P(CheckpointRandomCli, RewindRestoresEveryVersionRefusesOutsideChangesAndBlameAgrees) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    auto session = store->CreateSession({});
    ASSERT_TRUE(session) << session.error().ToString();
    session_ = session->id;  // the hook's session_id: the store's own id
  }
  if (GetParam().outside_changes) {
    // Files there before the agent: no agent's lines.
    for (int i = 0; i < 3; ++i) {
      const std::string& name = names_[static_cast<size_t>(i)];
      disk_[name] = std::vector<Line>{{NewLine("before"), ""}, {NewLine("before"), ""}};
      WriteToDisk(name);
    }
  }
  snapshots_[0] = DiskBytes();
  RunSteps();
  if (HasFatalFailure()) return;
  if (GetParam().outside_changes) {
    // Last, a change from outside to a file the agent wrote: a rewind past
    // its last write must meet it, whatever the seed did before.
    for (const std::string& name : names_) {
      if (disk_[name] && LatestKept(PathOf(name)) != nullptr) {
        OutsideChange(name);
        break;
      }
    }
  }
  CheckVersionsKept();
  CheckBlame();
  if (HasFatalFailure()) return;
  CheckRewinds();
}

INSTANTIATE_TEST_SUITE_P(
    Sequences, CheckpointRandomCli,
    ::testing::Values(Scenario{.backend = "embedded", .seed = 1, .outside_changes = false},
                      Scenario{.backend = "embedded", .seed = 2},
                      Scenario{.backend = "postgres", .seed = 5, .steps = 12}),
    ScenarioName);

}  // namespace checkpoint_random_cli
}  // namespace sessiondb::testing
