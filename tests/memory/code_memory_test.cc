// CodeMemory against a real store of each backend (an embedded directory and
// a PostgreSQL database): writes kept once, recall (one per file, at most 3,
// clean previews), churn tiers and warnings with a fake clock, the hook's
// seen state under racing processes' threads, and code writes learned from
// imported Claude Code and Codex history.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

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
    "def save_config(path, data):\n    with open(path, 'w') as f:\n        json.dump(data, f, indent=2)\n";

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
  for (int i = 0; i < 60; ++i) long_body += "    total += compute_checksum(block_" + std::to_string(i) + ")\n";
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

TEST_P(CodeMemoryTest, TiersAtTheirBoundaries) {
  auto edits = [&](const std::string& path, int n, int64_t age) {
    for (int i = 0; i < n; ++i) {
      Record({.file_path = path, .new_code = "x = " + std::to_string(i) + "\n",
              .time_ms = now_ - age - i});
    }
  };
  edits("/gold.py", 2, 2 * kDay);
  edits("/silver_low.py", 3, 2 * kDay);
  edits("/silver_high.py", 10, 2 * kDay);
  edits("/bronze_low.py", 11, 2 * kDay);
  edits("/bronze_high.py", 20, 2 * kDay);
  edits("/red.py", 21, 2 * kDay);
  edits("/hot4.py", 4, kHour);   // 4 in 24 h: silver
  edits("/hot5.py", 5, kHour);   // 5 in 24 h: red
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
    return CodeWrite{.file_path = file,
                     .old_code = "func Handle(w http.ResponseWriter) {\n\treturn\n}\n",
                     .new_code = "func Handle(w http.ResponseWriter) {\n\tlog(" +
                                 std::to_string(n) + ")\n}\n",
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
      // Each its own store and connection, like separate hook processes.
      auto memory = CodeMemory::Open(Location(), MemoryOptionsFor());
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
  auto found = (*index)->Search({.query = "helper", .mode = SearchMode::kKeyword,
                                 .filter = {.events = false}});
  ASSERT_TRUE(found);
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].kind, HitKind::kCodeWrite);
  EXPECT_EQ(found->hits[0].file_path, "/w/util.rs");
}

SESSIONDB_FOR_EACH_BACKEND(CodeMemoryTest);

}  // namespace
}  // namespace sessiondb::testing
