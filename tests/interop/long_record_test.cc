// Long records in every JSON Lines importer that shares interop/long_record
// (codex, ac-dc, pixir; claude-code has its own in claude_code_test.cc): a
// record over the lean-parse threshold but within the 8 MiB a record keeps
// arrives whole, byte for byte, and a re-import adds nothing (its event ids
// are the short path's); a longer one keeps its first 8 MiB, ending in a
// note, with a reason; an embedded image whose base64 passes the 8 MiB keeps
// its descriptor (type, size, dimensions; not_stored with the reason) in its
// message, whose text stays whole. (Memory and time:
// bench/interop/long_record.py; the tests measure neither.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "blob/base64.h"
#include "interop/import_sink.h"
#include "interop_fixture.h"
#include "projection/window_checks.h"

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
    auto parsed = ParseImportFormat(format);
    EXPECT_TRUE(parsed) << parsed.error().ToString();
    if (!parsed) return ImportReport{};
    auto r = ImportPath(*store_, path.string(), {.format = *parsed});
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : ImportReport{};
  }

  static bool Skipped(const ImportReport& r, const std::string& where, const std::string& words) {
    for (const SkippedRecord& s : r.skipped) {
      if (s.where == where && s.reason.find(words) != std::string::npos) return true;
    }
    return false;
  }

  // Checks `p` is an image kept only as a descriptor of `bytes`, saying why.
  static void ExpectNotStoredImage(const Part& p, const std::string& bytes, const std::string& mime,
                                   int width, int height) {
    ASSERT_EQ(p.type, PartType::kImage);
    ASSERT_TRUE(p.resource.has_value());
    const Resource& res = *p.resource;
    EXPECT_EQ(res.mime, mime);
    EXPECT_EQ(res.size, static_cast<int64_t>(bytes.size()));
    EXPECT_EQ(res.width, width);
    EXPECT_EQ(res.height, height);
    EXPECT_TRUE(res.content_sha256.empty());
    EXPECT_NE(res.not_stored.find("an import reads at most 8 MiB of text of one record"),
              std::string::npos)
        << res.not_stored;
    EXPECT_NE(res.not_stored.find("--max-attachment-bytes does not"), std::string::npos);
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
  // Cut base64 whose first bytes are no image's: left out, as whole bytes would be.
  EXPECT_TRUE(Skipped(r, label + "7", "is said to be an image but its first bytes are"));
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

// A Claude Code image of 10 MiB of base64, in a user message and in a tool
// result, passes the 8 MiB a record keeps: each stays in its message as a
// descriptor (read from the base64's length and head while it is skipped),
// the text beside it whole; nothing is listed as cut, a re-import adds
// nothing, and every window of the session still replays.
TEST_F(LongRecordImport, ClaudeCodeImagesOverTheRecordBoundKeepTheirDescriptors) {
  const std::string sid = "0b9d1c2e-1111-4222-8333-944455556666";
  auto rec = [&](int i, int parent, const std::string& type, json message) {
    auto uuid = [](int n) { return "aaaaaaaa-0000-4000-8000-00000000000" + std::to_string(n); };
    return json{{"parentUuid", parent == 0 ? json(nullptr) : json(uuid(parent))},
                {"isSidechain", false},
                {"userType", "external"},
                {"cwd", "/home/dev/app"},
                {"sessionId", sid},
                {"version", "1.0.80"},
                {"type", type},
                {"message", std::move(message)},
                {"uuid", uuid(i)},
                {"timestamp", "2025-06-01T10:00:0" + std::to_string(i) + ".000Z"}}
               .dump() +
           "\n";
  };
  auto image = [](const std::string& bytes) {
    return json{
        {"type", "image"},
        {"source",
         {{"type", "base64"}, {"media_type", "image/png"}, {"data", blob::Base64Encode(bytes)}}}};
  };
  const std::string shot = MakePng(640, 480, "shot", size_t{15} << 19);  // 7.5 MiB
  const std::string photo = MakePng(800, 600, "photo", (size_t{15} << 19) + 1);
  std::string t = rec(1, 0, "user", {{"role", "user"}, {"content", "go"}});
  t += rec(2, 1, "assistant",
           {{"id", "msg_1"},
            {"role", "assistant"},
            {"model", "claude-x"},
            {"content", json::array({{{"type", "tool_use"},
                                      {"id", "toolu_01"},
                                      {"name", "Screenshot"},
                                      {"input", json::object()}}})}});
  t +=
      rec(3, 2, "user",  // line 3
          {{"role", "user"},
           {"content", json::array({{{"type", "tool_result"},
                                     {"tool_use_id", "toolu_01"},
                                     {"content", json::array({{{"type", "text"}, {"text", "taken"}},
                                                              image(shot)})}}})}});
  t += rec(4, 3, "assistant",
           {{"id", "msg_2"},
            {"role", "assistant"},
            {"model", "claude-x"},
            {"content", json::array({{{"type", "text"}, {"text", "I see the screen."}}})}});
  t += rec(
      5, 4, "user",  // line 5
      {{"role", "user"},
       {"content", json::array({{{"type", "text"}, {"text", "and this photo"}}, image(photo)})}});
  const auto file = dir_.path() / "projects" / "-home-dev-app" / (sid + ".jsonl");
  WriteFile(file, t);
  t.clear();
  ImportReport r = MustImport(file, "claude-code");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped.front().reason);
  EXPECT_EQ(r.attachments_not_stored, 2);
  ASSERT_EQ(r.not_stored.size(), 2u);
  EXPECT_EQ(r.not_stored[0].where, sid + ".jsonl:3");
  EXPECT_EQ(r.not_stored[1].where, sid + ".jsonl:5");
  std::vector<Event> ev = Events(*store_, sid);
  ASSERT_EQ(ev.size(), 5u);
  ASSERT_EQ(ev[2].message.parts.size(), 2u);
  EXPECT_EQ(ev[2].message.role, Role::kTool);
  EXPECT_EQ(ev[2].message.parts[0].type, PartType::kToolResult);
  EXPECT_EQ(ev[2].message.parts[0].text, "taken");
  ExpectNotStoredImage(ev[2].message.parts[1], shot, "image/png", 640, 480);
  ASSERT_EQ(ev[4].message.parts.size(), 2u);
  EXPECT_EQ(ev[4].message.role, Role::kUser);
  EXPECT_EQ(ev[4].message.parts[0].text, "and this photo");
  ExpectNotStoredImage(ev[4].message.parts[1], photo, "image/png", 800, 600);
  ImportReport again = MustImport(file, "claude-code");
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(again.sessions_unchanged, 1);
  ExpectEveryWindowReplays(*store_, "claude-code oversized images");
}

// The same for a Codex input_image: its type comes from the data URI's
// prefix and its head, its size from the length of the base64 after it.
TEST_F(LongRecordImport, CodexInputImageOverTheRecordBoundKeepsItsDescriptor) {
  const std::string sid = "0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7";
  auto line = [](const std::string& type, json payload) {
    return json{{"timestamp", "2025-10-29T00:59:38.317Z"},
                {"type", type},
                {"payload", std::move(payload)}}
               .dump() +
           "\n";
  };
  const std::string jpeg = MakeJpeg(1024, 768, std::string((size_t{15} << 19) + 2, 'j'));
  std::string t = line("session_meta", {{"id", sid}, {"cwd", "/home/dev/app"}});
  t += line(
      "response_item",  // line 2
      {{"type", "message"},
       {"role", "user"},
       {"content",
        json::array({{{"type", "input_text"}, {"text", "what is in it?"}},
                     {{"type", "input_image"},
                      {"image_url", "data:image/jpeg;base64," + blob::Base64Encode(jpeg)}}})}});
  t += line("response_item",
            {{"type", "message"},
             {"role", "assistant"},
             {"content", json::array({{{"type", "output_text"}, {"text", "A chart."}}})}});
  const auto file = dir_.path() / ("rollout-2025-10-29T00-59-38-" + sid + ".jsonl");
  WriteFile(file, t);
  t.clear();
  ImportReport r = MustImport(file, "codex");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped.front().reason);
  EXPECT_EQ(r.attachments_not_stored, 1);
  ASSERT_EQ(r.not_stored.size(), 1u);
  EXPECT_EQ(r.not_stored[0].where, file.filename().string() + ":2");
  std::vector<Event> ev = Events(*store_, sid);
  ASSERT_EQ(ev.size(), 2u);
  ASSERT_EQ(ev[0].message.parts.size(), 2u);
  EXPECT_EQ(ev[0].message.parts[0].text, "what is in it?");
  ExpectNotStoredImage(ev[0].message.parts[1], jpeg, "image/jpeg", 1024, 768);
  EXPECT_EQ(ev[1].message.Text(), "A chart.");
  EXPECT_EQ(MustImport(file, "codex").messages_added, 0);
  ExpectEveryWindowReplays(*store_, "codex oversized image");
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
