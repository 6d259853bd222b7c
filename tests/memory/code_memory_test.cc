// CodeMemory against a real store of each backend (an embedded directory and
// a PostgreSQL database): writes kept once, recall (one per file, at most 3,
// clean previews), churn tiers and warnings with a fake clock, the hook's
// seen state under racing processes' threads, and code writes learned from
// imported Claude Code and Codex history, each under its absolute path.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "sessiondb/interop.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kDay = 24 * kHour;

class CodeMemoryTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (HasFatalFailure()) return;
    memory_ = Open(*store_);
  }

  MemoryOptions MemoryOptionsFor(int64_t seen_capacity = 1000) {
    MemoryOptions options;
    options.clock = [this] { return now_.load(); };
    options.seen_capacity = seen_capacity;
    return options;
  }

  std::unique_ptr<CodeMemory> Open(Store& store, int64_t seen_capacity = 1000) {
    auto memory = CodeMemory::Open(store, MemoryOptionsFor(seen_capacity));
    EXPECT_TRUE(memory) << memory.error().message();
    return memory ? std::move(*memory) : nullptr;
  }

  RecordedWrite Record(CodeWrite w) {
    auto r = memory_->RecordWrite(w);
    EXPECT_TRUE(r) << r.error().message();
    return r ? *r : RecordedWrite{};
  }

  std::atomic<int64_t> now_{1'800'000'000'000};
  std::unique_ptr<CodeMemory> memory_;
};

const char* kPyV1 =
    "def load_config(path):\n    with open(path) as f:\n        return json.load(f)\n\n"
    "def save_config(path, data):\n    with open(path, 'w') as f:\n        json.dump(data, f)\n";
const char* kPyV2 =
    "def load_config(path):\n    with open(path) as f:\n        return json.load(f)\n\n"
    "def save_config(path, data):\n    with open(path, 'w') as f:\n        json.dump(data, f, "
    "indent=2)\n";

TEST_P(CodeMemoryTest, AWriteIsKeptOnceAndCountsItsFunctions) {
  RecordedWrite first = Record({.file_path = "/p/config.py", .new_code = kPyV1, .tool = "Write"});
  EXPECT_TRUE(first.recorded);
  EXPECT_EQ(first.functions, (std::vector<std::string>{"load_config", "save_config"}));
  RecordedWrite again = Record({.file_path = "/p/config.py", .new_code = kPyV1, .tool = "Write"});
  EXPECT_FALSE(again.recorded);
  EXPECT_EQ(again.code_id, first.code_id);
  // A whole-file write without its old version is compared with the last one kept.
  RecordedWrite second = Record({.file_path = "/p/config.py", .new_code = kPyV2, .tool = "Write"});
  EXPECT_TRUE(second.recorded);
  EXPECT_EQ(second.functions, (std::vector<std::string>{"save_config"}));

  auto file = memory_->FileChurn("/p/config.py");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->edits_30d, 2);  // the duplicate did not count
  auto functions = memory_->Hotspots({.functions = true});
  ASSERT_TRUE(functions);
  ASSERT_EQ(functions->size(), 2u);
  EXPECT_EQ((*functions)[0].function, "save_config");
  EXPECT_EQ((*functions)[0].edits_30d, 2);
  EXPECT_EQ((*functions)[1].function, "load_config");
  EXPECT_EQ((*functions)[1].edits_30d, 1);
}

TEST_P(CodeMemoryTest, BadWritesAreRefusedAndNothingIsKept) {
  auto no_path = memory_->RecordWrite({.new_code = "x = 1"});
  ASSERT_FALSE(no_path);
  EXPECT_EQ(no_path.error().code(), StatusCode::kInvalidArgument);
  auto no_code = memory_->RecordWrite({.file_path = "/a.py"});
  ASSERT_FALSE(no_code);
  auto hot = memory_->Hotspots({});
  ASSERT_TRUE(hot);
  EXPECT_TRUE(hot->empty());
}

TEST_P(CodeMemoryTest, RecallGivesAtMostThreeFilesOneWriteEachWithCleanPreviews) {
  std::string long_body;
  for (int i = 0; i < 60; ++i)
    long_body += "    total += compute_checksum(block_" + std::to_string(i) + ")\n";
  for (const char* f : {"/a/checksum.py", "/b/checksum.py", "/c/checksum.py", "/d/checksum.py"}) {
    Record({.file_path = f, .new_code = "def compute_checksum(block):\n" + long_body});
  }
  // A second write to the same file: still one entry for that file.
  Record({.file_path = "/a/checksum.py",
          .new_code = "def compute_checksum(block):\n    return crc32(block)\n"});
  Record({.file_path = "/z/unrelated.go", .new_code = "func main() { fmt.Println(\"hi\") }\n"});

  auto recalled = memory_->Recall("/new/checksum.py", "def compute_checksum(data):\n    pass\n", 3);
  ASSERT_TRUE(recalled) << recalled.error().message();
  ASSERT_EQ(recalled->size(), 3u);
  std::set<std::string> files;
  for (const RecalledCode& r : *recalled) {
    EXPECT_TRUE(files.insert(r.file_path).second) << "twice: " << r.file_path;
    EXPECT_NE(r.file_path, "/z/unrelated.go");
    EXPECT_LE(r.preview.size(), 400u + std::string("\n... (truncated)").size());
    // The long bodies are cut; /a's best write may be its short second one.
    if (r.file_path != "/a/checksum.py") {
      EXPECT_TRUE(r.preview.ends_with("\n... (truncated)")) << r.preview;
      EXPECT_EQ(r.preview.find("block_59"), std::string::npos);
    }
  }
  auto none = memory_->Recall("/x.py", "zzqv_nothing_like_it", 3);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

// Reserved words are in nearly every write: sharing only them is not being
// alike (and each made recall walk every write's index entry).
TEST_P(CodeMemoryTest, RecallDoesNotMatchOnReservedWordsAlone) {
  Record({.file_path = "/a/alpha.py", .new_code = "def alpha_one(x):\n    return self.x\n"});
  Record({.file_path = "/b/beta.ts",
          .new_code = "export function beta_two(): number {\n  return this.count;\n}\n"});
  auto none = memory_->Recall("/c/gamma.py", "def gamma_three(y):\n    return self.y\n", 3);
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_TRUE(none->empty()) << none->front().file_path;
  auto none_ts =
      memory_->Recall("/c/delta.ts", "export function delta(): void { return this.z; }", 3);
  ASSERT_TRUE(none_ts) << none_ts.error().message();
  EXPECT_TRUE(none_ts->empty()) << none_ts->front().file_path;
  // A shared identifier still finds its write.
  auto found = memory_->Recall("/c/gamma.py", "def gamma(y):\n    return alpha_one(y)\n", 3);
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().file_path, "/a/alpha.py");
}

TEST_P(CodeMemoryTest, TiersAtTheirBoundaries) {
  auto edits = [&](const std::string& path, int n, int64_t age) {
    for (int i = 0; i < n; ++i) {
      Record({.file_path = path,
              .new_code = "x = " + std::to_string(i) + "\n",
              .time_ms = now_ - age - i});
    }
  };
  edits("/gold.py", 2, 2 * kDay);
  edits("/silver_low.py", 3, 2 * kDay);
  edits("/silver_high.py", 10, 2 * kDay);
  edits("/bronze_low.py", 11, 2 * kDay);
  edits("/bronze_high.py", 20, 2 * kDay);
  edits("/red.py", 21, 2 * kDay);
  edits("/hot4.py", 4, kHour);      // 4 in 24 h: silver
  edits("/hot5.py", 5, kHour);      // 5 in 24 h: red
  edits("/old.py", 30, 31 * kDay);  // older than 30 days: gold
  std::map<std::string, std::string> tier;
  for (const char* f : {"/gold.py", "/silver_low.py", "/silver_high.py", "/bronze_low.py",
                        "/bronze_high.py", "/red.py", "/hot4.py", "/hot5.py", "/old.py"}) {
    auto c = memory_->FileChurn(f);
    ASSERT_TRUE(c);
    tier[f] = std::string(ChurnTierName(c->tier));
  }
  EXPECT_EQ(tier["/gold.py"], "gold");
  EXPECT_EQ(tier["/silver_low.py"], "silver");
  EXPECT_EQ(tier["/silver_high.py"], "silver");
  EXPECT_EQ(tier["/bronze_low.py"], "bronze");
  EXPECT_EQ(tier["/bronze_high.py"], "bronze");
  EXPECT_EQ(tier["/red.py"], "red");
  EXPECT_EQ(tier["/hot4.py"], "silver");
  EXPECT_EQ(tier["/hot5.py"], "red");
  EXPECT_EQ(tier["/old.py"], "gold");

  auto hot = memory_->Hotspots({.limit = 2});
  ASSERT_TRUE(hot);
  ASSERT_EQ(hot->size(), 2u);
  EXPECT_EQ((*hot)[0].file_path, "/red.py");
  EXPECT_EQ((*hot)[1].file_path, "/bronze_high.py");
}

TEST_P(CodeMemoryTest, WarnsBeforeTheThirdEditOfAFunctionIn24Hours) {
  const std::string file = "/svc/handler.go";
  auto edit = [&](int n) {
    return CodeWrite{
        .file_path = file,
        .old_code = "func Handle(w http.ResponseWriter) {\n\treturn\n}\n",
        .new_code = "func Handle(w http.ResponseWriter) {\n\tlog(" + std::to_string(n) + ")\n}\n",
        .whole_file = false};
  };
  auto before_first = memory_->Warnings(edit(1));
  ASSERT_TRUE(before_first);
  EXPECT_TRUE(before_first->empty());
  Record(edit(1));
  auto before_second = memory_->Warnings(edit(2));
  ASSERT_TRUE(before_second);
  EXPECT_TRUE(before_second->empty());
  Record(edit(2));
  auto before_third = memory_->Warnings(edit(3));
  ASSERT_TRUE(before_third);
  ASSERT_EQ(before_third->size(), 1u);
  EXPECT_EQ((*before_third)[0].function, "Handle");
  EXPECT_NE((*before_third)[0].message.find("edited 2 times in the last 24 hours"),
            std::string::npos);
  // A day later the count starts again.
  now_ += kDay + 1;
  auto next_day = memory_->Warnings(edit(4));
  ASSERT_TRUE(next_day);
  EXPECT_TRUE(next_day->empty());
}

TEST_P(CodeMemoryTest, FirstSightingIsExactlyOnceUnderRacingThreads) {
  constexpr int kThreads = 8;
  std::atomic<int> firsts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      // Each its own store and connection, like separate hook processes
      // (opened with the fixture's options: an encrypted store needs its key).
      auto store = Store::Open(Location(), Options());
      ASSERT_TRUE(store) << store.error().message();
      auto memory = CodeMemory::Open(**store, MemoryOptionsFor());
      ASSERT_TRUE(memory) << memory.error().message();
      auto first = (*memory)->FirstSighting("content\n/a.py\nabc");
      ASSERT_TRUE(first) << first.error().message();
      if (*first) ++firsts;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(firsts.load(), 1);
}

TEST_P(CodeMemoryTest, SeenStateIsBounded) {
  auto memory = Open(*store_, /*seen_capacity=*/3);
  for (const char* k : {"k1", "k2", "k3", "k4"}) {
    now_ += 1;
    auto first = memory->FirstSighting(k);
    ASSERT_TRUE(first);
    EXPECT_TRUE(*first);
  }
  // k1 rolled off the window: it counts as new again; k4 is remembered.
  auto k4 = memory->FirstSighting("k4");
  ASSERT_TRUE(k4);
  EXPECT_FALSE(*k4);
  now_ += 1;
  auto k1 = memory->FirstSighting("k1");
  ASSERT_TRUE(k1);
  EXPECT_TRUE(*k1);
}

TEST_P(CodeMemoryTest, AMemoryOnTheStoresConnectionWorksBetweenTheStoresCalls) {
  MemoryOptions options = MemoryOptionsFor();
  options.share_store_connection = true;
  auto shared = CodeMemory::Open(*store_, options);
  ASSERT_TRUE(shared) << shared.error().message();
  CodeMemory& memory = **shared;
  // Its writes and the store's, in turn on one thread, as the hook makes them.
  auto first = memory.RecordWrite({.file_path = "/repo/config.py", .new_code = kPyV1});
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_TRUE(first->recorded);
  const std::string session = NewSessionId();
  AppendText(session, "the config loader reads JSON");
  auto second = memory.RecordWrite(
      {.file_path = "/repo/other.py", .new_code = "def load_other(path):\n    return path\n"});
  ASSERT_TRUE(second) << second.error().message();
  auto seen = memory.FirstSighting("content\n/repo/config.py\nabc");
  ASSERT_TRUE(seen) << seen.error().message();
  EXPECT_TRUE(*seen);
  AppendText(session, "and saves it back");

  auto recalled = memory.Recall("/elsewhere/config.py", kPyV1);
  ASSERT_TRUE(recalled) << recalled.error().message();
  ASSERT_FALSE(recalled->empty());
  EXPECT_EQ(recalled->front().file_path, "/repo/config.py");
  auto log = store_->ReadMessages(session);
  ASSERT_TRUE(log) << log.error().message();
  ASSERT_EQ(log->size(), 2u);
  EXPECT_EQ(log->back().Text(), "and saves it back");

  // Committed, not held in a transaction of the shared connection: a memory
  // on a connection of its own sees every write and the seen key.
  auto own = CodeMemory::Open(*store_, MemoryOptionsFor());
  ASSERT_TRUE(own) << own.error().message();
  auto again = (*own)->RecordWrite({.file_path = "/repo/config.py", .new_code = kPyV1});
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_FALSE(again->recorded);
  auto seen_again = (*own)->FirstSighting("content\n/repo/config.py\nabc");
  ASSERT_TRUE(seen_again) << seen_again.error().message();
  EXPECT_FALSE(*seen_again);
}

TEST_P(CodeMemoryTest, LearnsWritesFromClaudeCodeAndCodexHistory) {
  // The store stamps messages with its clock; churn counts back from the
  // memory's: make them one.
  now_ = now_ms_;
  ASSERT_TRUE(store_->CreateSession({.id = "cc", .metadata_json = R"({"cwd":"/repo"})"}));
  Message write;
  write.role = Role::kAssistant;
  write.parts.push_back(Part::ToolCall(
      "t1", "Write", R"j({"file_path":"/repo/app.py","content":"def main():\n    run()\n"})j"));
  write.parts.push_back(Part::ToolCall(
      "t2", "Edit",
      R"j({"file_path":"/repo/app.py","old_string":"run()","new_string":"run(fast=True)"})j"));
  ASSERT_TRUE(store_->Append("cc", write));
  ASSERT_TRUE(store_->CreateSession({.id = "codex"}));
  Message patch;
  patch.role = Role::kAssistant;
  // As the Codex importer stores a custom_tool_call: {"input": the patch}.
  const std::string patch_text =
      "*** Begin Patch\n*** Add File: /w/util.rs\n+fn helper() -> u32 {\n+    42\n+}\n"
      "*** End Patch\n";
  patch.parts.push_back(
      Part::ToolCall("p1", "apply_patch", nlohmann::json{{"input", patch_text}}.dump()));
  ASSERT_TRUE(store_->Append("codex", patch));

  auto scan = memory_->LearnFromHistory();
  ASSERT_TRUE(scan) << scan.error().message();
  EXPECT_EQ(scan->writes_found, 3);
  EXPECT_EQ(scan->writes_recorded, 3);
  auto again = memory_->LearnFromHistory();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->writes_recorded, 0);  // idempotent

  auto hot = memory_->Hotspots({});
  ASSERT_TRUE(hot);
  std::map<std::string, int64_t> edits;
  for (const ChurnEntry& e : *hot) edits[e.file_path] = e.edits_30d;
  EXPECT_EQ(edits["/repo/app.py"], 2);
  EXPECT_EQ(edits["/w/util.rs"], 1);

  // Code writes are searchable like messages.
  auto index = SearchIndex::Open(*store_, {.embedder = {.from_environment = false}});
  ASSERT_TRUE(index);
  auto found = (*index)->Search(
      {.query = "helper", .mode = SearchMode::kKeyword, .filter = {.events = false}});
  ASSERT_TRUE(found);
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].kind, HitKind::kCodeWrite);
  EXPECT_EQ(found->hits[0].file_path, "/w/util.rs");
}

// A relative path and its absolute twin are one file; with no absolute
// project there is nothing true to resolve it against, and it stays as
// written (kept once all the same).
TEST_P(CodeMemoryTest, ARelativePathIsRecordedUnderTheProject) {
  Record({.file_path = "src/./app.py", .new_code = kPyV1, .project = "/home/dev/app"});
  Record({.file_path = "/home/dev//app/src/app.py", .new_code = kPyV2, .project = "/elsewhere"});
  auto churn = memory_->FileChurn("/home/dev/app/src/../src/app.py");
  ASSERT_TRUE(churn);
  EXPECT_EQ(churn->file_path, "/home/dev/app/src/app.py");
  EXPECT_EQ(churn->edits_30d, 2);
  EXPECT_TRUE(Record({.file_path = "lib/x.py", .new_code = kPyV1}).recorded);
  EXPECT_FALSE(Record({.file_path = "lib/x.py", .new_code = kPyV1}).recorded);
  auto hot = memory_->Hotspots({});
  ASSERT_TRUE(hot);
  std::map<std::string, int64_t> edits;
  for (const ChurnEntry& e : *hot) edits[e.file_path] = e.edits_30d;
  EXPECT_EQ(edits,
            (std::map<std::string, int64_t>{{"/home/dev/app/src/app.py", 2}, {"lib/x.py", 1}}));
}

// Writes a file of `text` under `dir` and returns its path.
std::string WriteSource(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.Sub(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string CodexPatch(const std::string& path, const std::string& from, const std::string& to) {
  return "*** Begin Patch\n*** Update File: " + path + "\n@@\n-" + from + "\n+" + to +
         "\n*** End Patch\n";
}

// 2025-10-29T00:59:38Z, when the sources below were written, and a day later.
constexpr int64_t kSourceTimeMs = 1761699578000;
constexpr int64_t kDayAfterSourceMs = kSourceTimeMs + kDay;

// Codex apply_patch names files relative to the session's folder; they were
// recorded so, and churn counted "src/app.css" and the same file written by
// absolute path as two files, and `churn --path /home/dev/app` missed every
// Codex edit. Imported and learned, each write is under its absolute path:
// against the session's cwd, a shell call's own workdir, a later turn's cwd.
TEST_P(CodeMemoryTest, CodexWritesAreRecordedByAbsolutePath) {
  now_ = kDayAfterSourceMs;
  now_ms_ = kSourceTimeMs;  // the store's clock, for the Claude Code edit
  using nlohmann::json;
  auto line = [](const std::string& ts, const std::string& type, json payload) {
    return json{{"timestamp", ts}, {"type", type}, {"payload", std::move(payload)}}.dump() + "\n";
  };
  auto user = [](const std::string& text) {
    return json{{"type", "message"},
                {"role", "user"},
                {"content", json::array({{{"type", "input_text"}, {"text", text}}})}};
  };
  std::string t = line("2025-10-29T00:59:38.317Z", "session_meta",
                       {{"id", "0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7"}, {"cwd", "/home/dev/app"}});
  t += line("2025-10-29T00:59:39.000Z", "turn_context",
            {{"cwd", "/home/dev/app"}, {"model", "gpt-5-codex"}});
  t += line("2025-10-29T00:59:40.000Z", "response_item", user("Use grid"));
  t += line("2025-10-29T00:59:41.000Z", "response_item",
            {{"type", "custom_tool_call"},
             {"call_id", "c1"},
             {"name", "apply_patch"},
             {"input", CodexPatch("src/app.css", "display: flex", "display: grid")}});
  t += line("2025-10-29T00:59:42.000Z", "response_item",
            {{"type", "function_call"},
             {"call_id", "c2"},
             {"name", "shell"},
             {"arguments",
              json{{"command",
                    json::array({"apply_patch", CodexPatch("./app.css", "gap: 0", "gap: 1rem")})},
                   {"workdir", "/home/dev/app/src"}}
                  .dump()}});
  t += line("2025-10-29T01:00:00.000Z", "turn_context",
            {{"cwd", "/home/dev/app/web"}, {"model", "gpt-5-codex"}});
  t += line("2025-10-29T01:00:01.000Z", "response_item",
            {{"type", "custom_tool_call"},
             {"call_id", "c3"},
             {"name", "apply_patch"},
             {"input", CodexPatch("index.html", "<div>", "<main>")}});
  TempDir source;
  const std::string file = WriteSource(source, "rollout-2025-10-29T00-59-38-0199a2b3.jsonl", t);
  auto imported = ImportPath(*store_, file, {.format = ImportFormat::kCodex});
  ASSERT_TRUE(imported) << imported.error().message();
  // Claude Code wrote the same file by absolute path.
  ASSERT_TRUE(store_->CreateSession({.id = "cc", .metadata_json = R"({"cwd":"/home/dev/app"})"}));
  Message edit;
  edit.role = Role::kAssistant;
  edit.parts.push_back(Part::ToolCall("t1", "Edit",
                                      json{{"file_path", "/home/dev/app/src/app.css"},
                                           {"old_string", "color: red"},
                                           {"new_string", "color: blue"}}
                                          .dump()));
  ASSERT_TRUE(store_->Append("cc", edit));

  auto scan = memory_->LearnFromHistory();
  ASSERT_TRUE(scan) << scan.error().message();
  EXPECT_EQ(scan->writes_recorded, 4);
  auto hot = memory_->Hotspots({.path_prefix = "/home/dev/app/"});
  ASSERT_TRUE(hot);
  std::map<std::string, int64_t> edits;
  for (const ChurnEntry& e : *hot) edits[e.file_path] = e.edits_30d;
  EXPECT_EQ(edits, (std::map<std::string, int64_t>{{"/home/dev/app/src/app.css", 3},
                                                   {"/home/dev/app/web/index.html", 1}}));
  // `churn --path` with the file's own path finds the Codex edits.
  auto one = memory_->Hotspots({.path_prefix = "/home/dev/app/src/app.css"});
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].edits_30d, 3);
  // Imported and learned again: nothing counts twice.
  ASSERT_TRUE(ImportPath(*store_, file, {.format = ImportFormat::kCodex}));
  auto again = memory_->LearnFromHistory();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->writes_recorded, 0);
  auto churn = memory_->FileChurn("/home/dev/app/src/app.css");
  ASSERT_TRUE(churn);
  EXPECT_EQ(churn->edits_30d, 3);
}

// Claude Code names files by absolute path, but a record's cwd is where its
// tool ran: a relative path (or one with "." and "..") is resolved against
// it, and a record that ran elsewhere than the session says so.
TEST_P(CodeMemoryTest, ClaudeCodeWritesAreResolvedAgainstTheRecordsCwd) {
  now_ = kDayAfterSourceMs;
  using nlohmann::json;
  const std::string session = "0b9d1c2e-1111-4222-8333-944455556666";
  auto record = [&](const std::string& uuid, const json& parent, const std::string& cwd,
                    const std::string& type, json message) {
    return json{{"parentUuid", parent},   {"isSidechain", false},
                {"userType", "external"}, {"cwd", cwd},
                {"sessionId", session},   {"version", "1.0.80"},
                {"type", type},           {"message", std::move(message)},
                {"uuid", uuid},           {"timestamp", "2025-10-29T01:00:00.000Z"}}
               .dump() +
           "\n";
  };
  auto tool_use = [](const std::string& id, const std::string& name, json input) {
    return json{
        {"id", "msg_" + id},
        {"role", "assistant"},
        {"model", "claude-x"},
        {"content",
         json::array(
             {{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", std::move(input)}}})}};
  };
  std::string t = record("u1", nullptr, "/home/dev/app", "user",
                         {{"role", "user"}, {"content", "fix the page"}});
  t += record("a1", "u1", "/home/dev/app", "assistant",
              tool_use("toolu_1", "Edit",
                       {{"file_path", "/home/dev/app/src//./app.css"},
                        {"old_string", "color: red"},
                        {"new_string", "color: blue"}}));
  t += record("a2", "a1", "/home/dev/app/web", "assistant",
              tool_use("toolu_2", "Write",
                       {{"file_path", "../src/app.css"}, {"content", "body { color: blue; }\n"}}));
  TempDir source;
  const std::string file = WriteSource(source, session + ".jsonl", t);
  auto imported = ImportPath(*store_, file, {.format = ImportFormat::kClaudeCode});
  ASSERT_TRUE(imported) << imported.error().message();
  auto scan = memory_->LearnFromHistory();
  ASSERT_TRUE(scan) << scan.error().message();
  EXPECT_EQ(scan->writes_recorded, 2);
  auto hot = memory_->Hotspots({});
  ASSERT_TRUE(hot);
  std::map<std::string, int64_t> edits;
  for (const ChurnEntry& e : *hot) edits[e.file_path] = e.edits_30d;
  EXPECT_EQ(edits, (std::map<std::string, int64_t>{{"/home/dev/app/src/app.css", 2}}));
}

SESSIONDB_FOR_EACH_BACKEND(CodeMemoryTest);

// The descriptors this process holds open on `path`.
int OpenDescriptorsOf(const std::string& path) {
  int n = 0;
  const std::filesystem::path wanted = std::filesystem::canonical(path);
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(fd.path(), ec);
    if (!ec && target == wanted) ++n;
  }
  return n;
}

using EmbeddedCodeMemory = EmbeddedStoreTest;

// What sharing is for: the hook's process opens the database (and reads its
// schema) once. A memory of its own opens a second connection.
TEST_F(EmbeddedCodeMemory, OnTheStoresConnectionOpensTheDatabaseNoSecondTime) {
  const std::string db = StoreDir() + "/sessiondb.db";
  const int store_only = OpenDescriptorsOf(db);
  ASSERT_GE(store_only, 1);
  {
    auto shared = CodeMemory::Open(*store_, {.share_store_connection = true});
    ASSERT_TRUE(shared) << shared.error().message();
    ASSERT_TRUE((*shared)->RecordWrite({.file_path = "/a.py", .new_code = "x = 1\n"}));
    EXPECT_EQ(OpenDescriptorsOf(db), store_only);
  }
  auto own = CodeMemory::Open(*store_);
  ASSERT_TRUE(own) << own.error().message();
  EXPECT_EQ(OpenDescriptorsOf(db), store_only + 1);
}

}  // namespace
}  // namespace sessiondb::testing
