// What every JSON Lines importer gains from the shared reader
// (interop/jsonl_reader.h): a history saved by an editor that puts a
// byte-order mark first keeps its first record, a record holding a byte that
// is not UTF-8 comes in with U+FFFD in its place, and a line that is not a
// JSON object is skipped with the reason it has. Shown on ac-dc (which reads
// each line twice) and Codex; claude_code_test.cc has the same for Claude
// Code.
#include <nlohmann/json.hpp>

#include "interop/interop_test_support.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::string_view kFffd = "\xEF\xBF\xBD";

json AcdcRecord(const std::string& id, const std::string& role, const std::string& content) {
  return {{"id", id},
          {"session_id", "sess_1719500000000_f0e1d2"},
          {"timestamp", "2024-06-27T15:00:00Z"},
          {"role", role},
          {"content", content}};
}

bool SkippedAt(const ImportReport& r, const std::string& where, const std::string& words) {
  for (const auto& s : r.skipped) {
    if (s.where == where && s.reason.find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(LineEncoding, AcdcKeepsTheRecordAfterAByteOrderMarkAndRepairsBadBytes) {
  TempDir dir;
  const std::string folder = dir.Sub(".ac-dc");
  std::filesystem::create_directories(folder);
  std::string bad = AcdcRecord("1719500001000-bbbb", "assistant", "naive").dump();
  bad.replace(bad.find("naive"), 5, "na\xEFve");  // Latin-1 ï, as an old tool wrote it
  WriteFile(folder + "/history.jsonl",
            std::string(kBom) + AcdcRecord("1719500000000-aaaa", "user", "first").dump() + "\n" +
                bad + "\n");
  auto store = OpenTestStore(dir);
  // Detection reads the first line as the import does.
  EXPECT_EQ(DetectImportFormat(folder).value_or(ImportFormat::kSnapshot), ImportFormat::kAcdc);
  ImportReport r = MustImport(*store, folder, "ac-dc");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  EXPECT_EQ(r.messages_added, 2);
  std::vector<Event> ev = EventsOf(*store, "sess_1719500000000_f0e1d2");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].message.Text(), "first");
  EXPECT_EQ(ev[1].message.Text(), "na" + std::string(kFffd) + "ve");
}

TEST(LineEncoding, AcdcNamesALineThatIsJsonButNotAnObject) {
  TempDir dir;
  const std::string folder = dir.Sub(".ac-dc");
  std::filesystem::create_directories(folder);
  WriteFile(folder + "/history.jsonl", AcdcRecord("1719500000000-aaaa", "user", "first").dump() +
                                           "\n" + "[\"an\", \"array\"]\n" +
                                           "{\"role\": \"user\"}\n");
  auto store = OpenTestStore(dir);
  ImportReport r = MustImport(*store, folder, "ac-dc");
  EXPECT_TRUE(SkippedAt(r, "history.jsonl:2", "JSON but an array, not an object"))
      << (r.skipped.empty() ? "" : r.skipped[0].reason);
  EXPECT_FALSE(SkippedAt(r, "history.jsonl:2", "session_id"));
  EXPECT_TRUE(SkippedAt(r, "history.jsonl:3", "no session_id"));
  EXPECT_EQ(r.records_skipped, 2);
}

json CodexLine(const std::string& ts, const std::string& type, json payload) {
  return {{"timestamp", ts}, {"type", type}, {"payload", std::move(payload)}};
}

TEST(LineEncoding, CodexKeepsTheRecordAfterAByteOrderMarkAndRepairsBadBytes) {
  TempDir dir;
  const std::string id = "0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7";
  const std::string file = dir.Sub("rollout-2025-10-29T00-59-38-" + id + ".jsonl");
  std::string answer =
      CodexLine(
          "2025-10-29T00:59:41.000Z", "response_item",
          {{"type", "message"},
           {"role", "assistant"},
           {"content", json::array({{{"type", "output_text"}, {"text", "r\xC3\xA9sum\xC3\xA9"}}})}})
          .dump();
  answer.replace(answer.find("r\xC3\xA9sum"), 6, "r\xE9sum");  // one byte where two belong
  WriteFile(file,
            std::string(kBom) +
                CodexLine("2025-10-29T00:59:38.317Z", "session_meta",
                          {{"id", id}, {"cwd", "/home/dev/app"}, {"model_provider", "openai"}})
                    .dump() +
                "\n" +
                CodexLine("2025-10-29T00:59:40.000Z", "response_item",
                          {{"type", "message"},
                           {"role", "user"},
                           {"content", json::array({{{"type", "input_text"}, {"text", "hi"}}})}})
                    .dump() +
                "\n" + answer + "\n");
  auto store = OpenTestStore(dir);
  ImportReport r = MustImport(*store, file, "codex");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  // The session is named by its session_meta, which sat behind the mark.
  auto session = store->GetSession(id);
  ASSERT_TRUE(session.has_value());
  EXPECT_EQ(json::parse(session->metadata_json).value("cwd", ""), "/home/dev/app");
  std::vector<Event> ev = EventsOf(*store, id);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].message.Text(), "r" + std::string(kFffd) + "sum\xC3\xA9");
}

}  // namespace
}  // namespace sessiondb::testing
