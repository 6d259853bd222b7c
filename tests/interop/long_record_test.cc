// Long records in every JSON Lines importer that shares interop/long_record
// (codex, ac-dc, pixir; claude-code has its own in claude_code_test.cc): a
// record over the lean-parse threshold but within the 8 MiB a record keeps
// arrives whole, byte for byte, and a re-import adds nothing (its event ids
// are the short path's); a longer one keeps its first 8 MiB, ending in a
// note, with a reason. (Memory and time: bench/interop/long_record.py; the
// tests measure neither.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "interop/import_sink.h"
#include "interop_fixture.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kNote =
    "[... cut by the import: sessiondb keeps 8 MiB of text of one record]";

// `mib` MiB of text with escapes, multi-byte characters and newlines.
std::string LongText(size_t mib, std::string_view tag) {
  std::string piece =
      std::string(tag) + ": a line of a long log, caf\xC3\xA9 \"quoted\" \\ tab\t\n";
  std::string out;
  while (out.size() < (mib << 20)) out += piece;
  return out;
}

class LongRecordImport : public InteropTest {
 protected:
  void SetUp() override { store_ = OpenStore("store"); }

  ImportReport MustImport(const std::filesystem::path& path, const std::string& format) {
    auto r = ImportPath(*store_, path.string(), {.format = format});
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : ImportReport{};
  }

  static bool Skipped(const ImportReport& r, const std::string& where, const std::string& words) {
    for (const SkippedRecord& s : r.skipped) {
      if (s.where == where && s.reason.find(words) != std::string::npos) return true;
    }
    return false;
  }

  // Checks `kept` is the start of `source` cut at 8 MiB and ending in the note.
  static void ExpectCut(const std::string& kept, const std::string& source) {
    ASSERT_TRUE(kept.ends_with(kNote));
    EXPECT_LE(kept.size(), (size_t{8} << 20) + kNote.size() + 1);
    const std::string head = kept.substr(0, kept.size() - kNote.size() - 1);
    EXPECT_GT(head.size(), (size_t{8} << 20) - 8);
    EXPECT_EQ(head, source.substr(0, head.size()));
  }

  std::unique_ptr<Store> store_;
};

TEST(StableEventId, AKeyInTwoPiecesNamesTheSameEventAsTheWholeKey) {
  EXPECT_EQ(interop::StableEventId("s1", "12/", "{\"a\":1}"),
            interop::StableEventId("s1", "12/{\"a\":1}"));
  EXPECT_NE(interop::StableEventId("s1", "12/", "{\"a\":1}"),
            interop::StableEventId("s2", "12/{\"a\":1}"));
}

TEST_F(LongRecordImport, CodexLongLinesArriveWholeAndHugeOnesAreCutWithANote) {
  const std::string sid = "0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7";
  auto line = [](const std::string& type, json payload) {
    return json{{"timestamp", "2025-10-29T00:59:38.317Z"},
                {"type", type},
                {"payload", std::move(payload)}}
               .dump() +
           "\n";
  };
  const std::string answer = LongText(5, "answer");
  const std::string output = LongText(5, "output");
  const std::string patch = LongText(5, "patch");
  const std::string huge = LongText(10, "huge");
  std::string t = line("session_meta", {{"id", sid}, {"cwd", "/home/dev/app"}});
  t +=
      line("response_item", {{"type", "message"},
                             {"role", "user"},
                             {"content", json::array({{{"type", "input_text"}, {"text", "go"}}})}});
  t += line("response_item",
            {{"type", "message"},
             {"role", "assistant"},
             {"content", json::array({{{"type", "output_text"}, {"text", answer}}})}});
  t += line(
      "response_item",
      {{"type", "custom_tool_call"}, {"call_id", "c1"}, {"name", "apply_patch"}, {"input", patch}});
  t += line("response_item",
            {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", output}});
  t += line("response_item",  // line 6
            {{"type", "message"},
             {"role", "assistant"},
             {"content", json::array({{{"type", "output_text"}, {"text", huge}}})}});
  t += line("response_item",  // line 7
            {{"type", "message"},
             {"role", "user"},
             {"content", json::array({{{"type", "input_text"}, {"text", "look"}},
                                      {{"type", "input_image"},
                                       {"image_url", "data:image/png;base64," +
                                                         std::string(size_t{9} << 20, 'A')}}})}});
  const auto file = dir_.path() / ("rollout-2025-10-29T00-59-38-" + sid + ".jsonl");
  WriteFile(file, t);
  t.clear();
  ImportReport r = MustImport(file, "codex");
  const std::string label = file.filename().string() + ":";
  EXPECT_TRUE(Skipped(r, label + "6", "8 MiB of text the import keeps of one record"));
  EXPECT_TRUE(Skipped(r, label + "7", "input_image is over the 8 MiB"));
  std::vector<Event> ev = Events(*store_, sid);
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[1].message.Text(), answer);
  ASSERT_EQ(ev[2].message.parts.size(), 1u);
  EXPECT_EQ(ev[2].message.parts[0].arguments_json, (json{{"input", patch}}.dump()));
  ASSERT_EQ(ev[3].message.parts.size(), 1u);
  EXPECT_EQ(ev[3].message.parts[0].text, output);
  ExpectCut(ev[4].message.Text(), huge);
  EXPECT_EQ(ev[5].message.Text(), "look");
  EXPECT_EQ(MustImport(file, "codex").messages_added, 0);
}

TEST_F(LongRecordImport, AcdcLongRecordsArriveWholeAndHugeOnesAreCutWithANote) {
  auto rec = [](int i, const std::string& role, const std::string& text) {
    return json{{"id", "1719500000000-000" + std::to_string(i)},
                {"session_id", "sess_1719500000000_f0e1d2"},
                {"timestamp", "2024-06-27T15:00:00Z"},
                {"role", role},
                {"content", text}}
               .dump() +
           "\n";
  };
  const std::string answer = LongText(5, "answer");
  const std::string huge = LongText(10, "huge");
  // A record without an id is named by its line's bytes, long or not.
  json unnamed = {{"session_id", "sess_1719500000000_f0e1d2"},
                  {"timestamp", "2024-06-27T15:00:02Z"},
                  {"role", "user"},
                  {"content", answer}};
  const std::string t = rec(1, "user", "go") + rec(2, "assistant", answer) +
                        rec(3, "assistant", huge) + unnamed.dump() + "\n";
  const auto root = dir_.path() / ".ac-dc";
  WriteFile(root / "history.jsonl", t);
  ImportReport r = MustImport(root, "ac-dc");
  EXPECT_TRUE(Skipped(r, "history.jsonl:3", "8 MiB of text the import keeps of one record"));
  std::vector<Event> ev = Events(*store_, "sess_1719500000000_f0e1d2");
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[1].message.Text(), answer);
  ExpectCut(ev[2].message.Text(), huge);
  EXPECT_EQ(ev[3].message.Text(), answer);
  EXPECT_EQ(MustImport(root, "ac-dc").messages_added, 0);
}

TEST_F(LongRecordImport, PixirLongEventsArriveWholeAndHugeOnesAreCutWithANote) {
  const std::string sid = "s-0001";
  int seq = 0;
  auto ev = [&](const std::string& type, json data) {
    ++seq;
    return json{
               {"id", "evt_" + std::to_string(seq)}, {"session_id", sid}, {"seq", seq},
               {"ts", "2025-06-01T10:00:00Z"},       {"type", type},      {"data", std::move(data)}}
               .dump() +
           "\n";
  };
  const std::string answer = LongText(5, "answer");
  const std::string content = LongText(5, "content");
  const std::string output = LongText(5, "output");
  const std::string huge = LongText(10, "huge");
  std::string t = ev("user_message", {{"text", "go"}});
  t += ev("assistant_message", {{"text", answer}});
  t += ev("tool_call", {{"call_id", "c1"}, {"name", "write"}, {"args", {{"content", content}}}});
  t += ev("tool_result", {{"call_id", "c1"}, {"ok", true}, {"output", output}});
  t += ev("assistant_message", {{"text", huge}});  // line 5
  const auto file = dir_.path() / ".pixir" / "sessions" / (sid + ".ndjson");
  WriteFile(file, t);
  t.clear();
  ImportReport r = MustImport(file, "pixir");
  EXPECT_TRUE(Skipped(r, sid + ".ndjson:5", "8 MiB of text the import keeps of one record"));
  std::vector<Event> events = Events(*store_, sid);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[1].message.Text(), answer);
  ASSERT_EQ(events[2].message.parts.size(), 1u);
  EXPECT_EQ(events[2].message.parts[0].arguments_json, (json{{"content", content}}.dump()));
  ASSERT_EQ(events[3].message.parts.size(), 1u);
  EXPECT_EQ(events[3].message.parts[0].text, output);
  ExpectCut(events[4].message.Text(), huge);
  EXPECT_EQ(MustImport(file, "pixir").messages_added, 0);
}

}  // namespace
}  // namespace sessiondb::testing
