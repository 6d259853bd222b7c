// CodeMemory::LearnFromHistory on a store of each backend: the tool calls
// are read a page of messages at a time, so a history longer than a page is
// learned whole, from a watermark that survives what the scan itself adds,
// and a watermark that is not a number (a damaged or hostile meta value)
// starts the scan over instead of failing.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "sessiondb/memory.h"
#include "sessiondb/store.h"
#include "store/index_backend.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

Message WriteCall(const std::string& path, const std::string& code) {
  Message m;
  m.role = Role::kAssistant;
  m.parts.push_back(Part::ToolCall("t-" + path, "Write",
                                   nlohmann::json{{"file_path", path}, {"content", code}}.dump()));
  return m;
}

class LearnFromHistory : public BackendTest {
 protected:
  void SetUp() override {
    // The store stamps messages with its clock; the memory counts churn back
    // from the wall clock (its default): make them one.
    now_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    BackendTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->CreateSession({.id = "s", .metadata_json = R"({"cwd":"/repo"})"}));
    auto backend = store_->OpenIndexBackend();
    ASSERT_TRUE(backend) << backend.error().message();
    backend_ = std::move(*backend);
  }

  std::unique_ptr<store::IndexBackend> backend_;
};

TEST_P(LearnFromHistory, LearnsEveryCallOfAHistoryLongerThanAPage) {
  // 600 messages with a Write each: more than two pages of 256.
  std::vector<Message> messages;
  for (int i = 0; i < 600; ++i) {
    messages.push_back(
        WriteCall("/repo/f" + std::to_string(i) + ".py",
                  "def f" + std::to_string(i) + "():\n    return " + std::to_string(i) + "\n"));
  }
  ASSERT_TRUE(store_->AppendBatch("s", messages));
  auto newest = backend_->NewestDocument();
  ASSERT_TRUE(newest);

  auto memory = CodeMemory::Open(*store_);
  ASSERT_TRUE(memory) << memory.error().message();
  std::vector<std::pair<int64_t, int64_t>> reports;
  auto scan = (*memory)->LearnFromHistory(
      [&](int64_t done, int64_t total) { reports.emplace_back(done, total); });
  ASSERT_TRUE(scan) << scan.error().message();
  EXPECT_EQ(scan->tool_calls_scanned, 600);
  EXPECT_EQ(scan->writes_found, 600);
  EXPECT_EQ(scan->writes_recorded, 600);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back(), (std::pair<int64_t, int64_t>{600, 600}));
  EXPECT_GE(reports.size(), 4u);  // start, each of the three pages, end

  // The watermark is the newest document read at the start, not the code
  // writes' documents the scan itself added.
  auto mark = backend_->GetMeta("memory:learned_doc_id");
  ASSERT_TRUE(mark);
  ASSERT_TRUE(mark->has_value());
  EXPECT_EQ(**mark, std::to_string(*newest));

  auto hot = (*memory)->Hotspots({.path_prefix = "/repo/", .limit = 1000});
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->size(), 600u);

  // Only what came since is read next time.
  ASSERT_TRUE(store_->Append("s", WriteCall("/repo/late.py", "def late():\n    pass\n")));
  auto again = (*memory)->LearnFromHistory();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->tool_calls_scanned, 1);
  EXPECT_EQ(again->writes_recorded, 1);
}

TEST_P(LearnFromHistory, AWatermarkThatIsNotANumberStartsOver) {
  ASSERT_TRUE(store_->Append("s", WriteCall("/repo/a.py", "def a():\n    pass\n")));
  ASSERT_TRUE(backend_->SetMeta("memory:learned_doc_id", "garbage; DROP TABLE").ok());
  auto memory = CodeMemory::Open(*store_);
  ASSERT_TRUE(memory);
  auto scan = (*memory)->LearnFromHistory();
  ASSERT_TRUE(scan) << scan.error().message();
  EXPECT_EQ(scan->writes_recorded, 1);
}

SESSIONDB_FOR_EACH_BACKEND(LearnFromHistory);

}  // namespace
}  // namespace sessiondb::testing
