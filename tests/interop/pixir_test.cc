// Pixir import: a .pixir/sessions/ folder generated here (an NDJSON log with
// messages, tool calls and results, a resource_view, provider usage, a
// history compaction, events without an equivalent, and the Session
// Resources folder), checked field by field; re-import; corrupt input.
#include <fstream>
#include <nlohmann/json.hpp>

#include "blob/sha256.h"
#include "interop/jsonl_reader.h"
#include "projection/window_checks.h"
#include "sessiondb/interop.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::MakePng;
using testing::TempDir;

constexpr char kSession[] = "ses_01jx5q7w3m2k8n4p";

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

struct PixirFixture {
  fs::path root;  // the .pixir folder
  fs::path sessions;
  std::string png = MakePng(6, 4, "pixir");
  std::string png_sha = blob::Sha256Hex(png);
  int64_t seq = 0;
  std::vector<json> lines;

  explicit PixirFixture(const fs::path& base)
      : root(base / ".pixir"), sessions(root / "sessions") {}

  fs::path ResourceFile(const std::string& rid, const std::string& sha) const {
    return sessions / kSession / "resources" / rid / (sha + ".png");
  }

  json Descriptor(const std::string& rid, const std::string& sha, const std::string& name) const {
    return {{"resource_id", rid},
            {"kind", "image"},
            {"name", name},
            {"mime_type", "image/png"},
            {"size_bytes", 10},
            {"content_sha256", sha},
            {"extension", "png"},
            {"source", "attachment"},
            {"store_ref",
             std::string("session://") + kSession + "/resources/" + rid + "/" + sha + ".png"}};
  }

  // Appends a canonical event (seq stamped) or an ephemeral one (seq null).
  void Event(const std::string& type, json data, const std::string& ts, bool ephemeral = false) {
    json e = {{"id", "evt_" + std::to_string(lines.size() + 1)},
              {"session_id", kSession},
              {"seq", ephemeral ? json(nullptr) : json(++seq)},
              {"ts", ts},
              {"type", type},
              {"data", std::move(data)}};
    lines.push_back(std::move(e));
  }

  void Build() {
    WriteFile(ResourceFile("res_a1", png_sha), png);
    json link = {{"resource_id", "res_l1"},
                 {"kind", "resource_link"},
                 {"name", "spec"},
                 {"mime_type", "application/pdf"},
                 {"declared_size_bytes", 2048},
                 {"uri", "https://example.com/spec.pdf"},
                 {"rehydratable", false}};
    Event("user_message",
          {{"text", "What does this screenshot show?"},
           {"resources", {Descriptor("res_a1", png_sha, "shot.png"), link}}},
          "2026-06-10T09:00:00.000Z");
    Event("provider_usage",
          {{"model", "gpt-5"},
           {"usage_summary",
            {{"input_tokens", 1200},
             {"output_tokens", 80},
             {"cached_tokens", 1000},
             {"reasoning_tokens", 16},
             {"total_tokens", 1280}}}},
          "2026-06-10T09:00:02.000Z");
    Event("reasoning",
          {{"item", {{"type", "reasoning"}, {"encrypted_content", "gAAA"}}}, {"model", "gpt-5"}},
          "2026-06-10T09:00:02.100Z");
    Event("tool_call",
          {{"call_id", "call_1"},
           {"name", "resource_view"},
           {"args", {{"resource_id", "res_a1"}, {"reason", "read the error dialog"}}}},
          "2026-06-10T09:00:02.200Z");
    Event("tool_result",
          {{"call_id", "call_1"},
           {"ok", true},
           {"output", "Rehydrated res_a1"},
           {"resource_view",
            {{"resource_id", "res_a1"},
             {"reason", "read the error dialog"},
             {"descriptor", Descriptor("res_a1", png_sha, "shot.png")}}}},
          "2026-06-10T09:00:02.300Z");
    Event("text_delta", {{"chunk", "The dia"}}, "2026-06-10T09:00:03.000Z", /*ephemeral=*/true);
    Event("provider_usage",
          {{"model", "gpt-5"}, {"usage_summary", {{"input_tokens", 2000}, {"output_tokens", 40}}}},
          "2026-06-10T09:00:04.000Z");
    Event("assistant_message", {{"text", "The dialog says the disk is full."}},
          "2026-06-10T09:00:04.100Z");
    Event("user_message", {{"text", "Thanks, now fix it"}}, "2026-06-10T09:01:00.000Z");
    Event("tool_call", {{"call_id", "call_2"}, {"name", "read"}, {"args", {{"path", "cfg.toml"}}}},
          "2026-06-10T09:01:01.000Z");
    Event("tool_result",
          {{"call_id", "call_2"},
           {"ok", false},
           {"error", {{"kind", "not_found"}, {"message", "cfg.toml does not exist"}}}},
          "2026-06-10T09:01:01.500Z");
    Event("assistant_message", {{"text", "Fixed."}}, "2026-06-10T09:01:05.000Z");
    Event("history_compaction",
          {{"strategy", "deterministic_v1"},
           {"range", {{"from_seq", 1}, {"to_seq", 7}}},
           {"source_event_count", 7},
           {"summary", "The user shared a screenshot of a disk-full dialog."},
           {"limitations", {"Not a semantic substitute.", "The Log remains authoritative."}}},
          "2026-06-10T09:02:00.000Z");
    Event("user_message", {{"text", "Continue"}}, "2026-06-10T09:03:00.000Z");
  }

  void Write(const std::string& tail = "") const {
    std::string text;
    for (const json& e : lines) text += e.dump() + "\n";
    WriteFile(sessions / (std::string(kSession) + ".ndjson"), text + tail);
  }
};

std::unique_ptr<Store> OpenStore(const TempDir& tmp) {
  auto store = Store::Open(tmp.Sub("store"));
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  return std::move(*store);
}

bool HasSkip(const ImportReport& r, const std::string& where, const std::string& words) {
  for (const SkippedRecord& s : r.skipped) {
    if (s.where == where && s.reason.find(words) != std::string::npos) return true;
  }
  return false;
}

std::string Where(int line) { return std::string(kSession) + ".ndjson:" + std::to_string(line); }

TEST(PixirImport, MapsEveryEventTypeWithAnEquivalent) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  fx.Build();
  fx.Write();
  EXPECT_EQ(DetectImportFormat(fx.root.string()).value_or(ImportFormat::kSnapshot),
            ImportFormat::kPixir);
  EXPECT_EQ(DetectImportFormat((fx.sessions / (std::string(kSession) + ".ndjson")).string())
                .value_or(ImportFormat::kSnapshot),
            ImportFormat::kPixir);
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.root.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->format, ImportFormat::kPixir);
  EXPECT_EQ(report->sessions_added, 1);
  EXPECT_EQ(report->messages_added, 9);
  EXPECT_EQ(report->images_added, 1);
  EXPECT_TRUE(HasSkip(*report, Where(3), "'reasoning' events have no sessiondb equivalent"));
  EXPECT_EQ(report->records_skipped, 1);  // the text_delta goes silently

  auto events = store->ReadEvents(kSession);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 11u);
  const auto& ev = *events;

  // 1: the user's message, its image from the resources folder, the link as a descriptor.
  const Message& user = ev[0].message;
  EXPECT_EQ(user.role, Role::kUser);
  EXPECT_EQ(ev[0].ts_ms, 1781082000000);
  ASSERT_EQ(user.parts.size(), 3u);
  EXPECT_EQ(user.parts[0].text, "What does this screenshot show?");
  ASSERT_TRUE(user.parts[1].resource.has_value());
  EXPECT_EQ(user.parts[1].type, PartType::kImage);
  EXPECT_EQ(user.parts[1].resource->content_sha256, fx.png_sha);
  EXPECT_EQ(user.parts[1].resource->width, 6);
  EXPECT_EQ(store->ReadBlob(fx.png_sha).value_or(""), fx.png);
  EXPECT_EQ(user.parts[2].type, PartType::kResourceLink);
  ASSERT_TRUE(user.parts[2].resource.has_value());
  EXPECT_EQ(user.parts[2].resource->uri, "https://example.com/spec.pdf");

  // 2-3: the tool call carries the usage recorded before it; the result follows.
  EXPECT_EQ(ev[1].message.role, Role::kAssistant);
  ASSERT_EQ(ev[1].message.parts.size(), 1u);
  EXPECT_EQ(ev[1].message.parts[0].type, PartType::kToolCall);
  EXPECT_EQ(ev[1].message.parts[0].tool_name, "resource_view");
  EXPECT_EQ(json::parse(ev[1].message.parts[0].arguments_json)["resource_id"], "res_a1");
  ASSERT_TRUE(ev[1].message.usage.has_value());
  EXPECT_EQ(ev[1].message.usage->input_tokens, 1200);
  EXPECT_EQ(ev[1].message.usage->cached_tokens, 1000);
  EXPECT_EQ(ev[1].message.usage->reasoning_tokens, 16);
  EXPECT_EQ(ev[1].message.model, "gpt-5");
  EXPECT_EQ(ev[2].message.role, Role::kTool);
  EXPECT_EQ(ev[2].message.parts[0].tool_call_id, "call_1");
  EXPECT_EQ(ev[2].message.parts[0].text, "Rehydrated res_a1");
  EXPECT_FALSE(ev[2].message.parts[0].is_error);

  // 4: the resource view names the very resource the user's message stored.
  ASSERT_EQ(ev[3].type, EventType::kResourceView);
  EXPECT_EQ(ev[3].resource_view.resource_id, user.parts[1].resource->resource_id);
  EXPECT_EQ(ev[3].resource_view.resource, *user.parts[1].resource);
  EXPECT_EQ(ev[3].resource_view.message_seq, 1);
  EXPECT_EQ(ev[3].resource_view.reason, "read the error dialog");

  // 5: the answer, with the second usage.
  EXPECT_EQ(ev[4].message.Text(), "The dialog says the disk is full.");
  ASSERT_TRUE(ev[4].message.usage.has_value());
  EXPECT_EQ(ev[4].message.usage->input_tokens, 2000);

  // 8: a failed tool result.
  EXPECT_EQ(ev[7].message.role, Role::kTool);
  EXPECT_TRUE(ev[7].message.parts[0].is_error);
  EXPECT_NE(ev[7].message.parts[0].text.find("cfg.toml does not exist"), std::string::npos);

  // 10: the compaction, its Pixir range 1..7 mapped onto our seqs 1..5.
  ASSERT_EQ(ev[9].type, EventType::kCompaction);
  EXPECT_EQ(ev[9].compaction.from_seq, 1);
  EXPECT_EQ(ev[9].compaction.to_seq, 5);
  EXPECT_EQ(ev[9].compaction.summary, "The user shared a screenshot of a disk-full dialog.");
  EXPECT_EQ(ev[9].compaction.strategy, "deterministic_v1");
  EXPECT_NE(ev[9].compaction.limitations.find("The Log remains authoritative."), std::string::npos);
  EXPECT_EQ(ev[10].message.Text(), "Continue");

  auto usage = store->GetUsage(kSession);
  ASSERT_TRUE(usage.has_value());
  EXPECT_EQ(usage->turns, 2);
  EXPECT_EQ(usage->total.input_tokens, 3200);
}

TEST(PixirImport, EveryWindowOfTheSampleReplays) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  fx.Build();
  fx.Write();
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.root.string(), {.format = ImportFormat::kPixir}));
  testing::ExpectEveryWindowReplays(*store, "pixir sample");
}

TEST(PixirImport, ReimportingAddsNothing) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  fx.Build();
  fx.Write();
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.root.string(), {}).has_value());
  auto before = store->ReadEvents(kSession);
  auto again = ImportPath(*store, fx.root.string(), {});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->sessions_unchanged, 1);
  EXPECT_EQ(again->sessions_added, 0);
  EXPECT_EQ(again->messages_added, 0);
  EXPECT_EQ(again->images_added, 0);
  auto after = store->ReadEvents(kSession);
  ASSERT_EQ(after->size(), before->size());
  for (size_t i = 0; i < after->size(); ++i) EXPECT_EQ((*after)[i].id, (*before)[i].id);
  // A log that has grown adds its tail.
  fx.Event("assistant_message", {{"text", "Continuing."}}, "2026-06-10T09:03:05.000Z");
  fx.Write();
  auto grown = ImportPath(*store, fx.root.string(), {});
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(grown->sessions_extended, 1);
  EXPECT_EQ(grown->messages_added, 1);
  EXPECT_EQ(store->ReadEvents(kSession)->size(), before->size() + 1);
}

TEST(PixirImport, CorruptLinesAndResourcesAreSkippedWithReasonsAndTheRestImports) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  // Line 1: an image whose file is gone, one whose bytes are not what its
  // name (the SHA-256) says, and one whose hash is right but that is no image.
  const std::string text = "plain text, not a picture";
  const std::string text_sha = blob::Sha256Hex(text);
  WriteFile(fx.ResourceFile("res_txt", text_sha), text);
  const std::string other_sha = blob::Sha256Hex("something else");
  WriteFile(fx.ResourceFile("res_bad", other_sha), MakePng(3, 3, "swapped"));
  WriteFile(fx.ResourceFile("res_ok", fx.png_sha), fx.png);
  fx.Event("user_message",
           {{"text", "Three pictures"},
            {"resources",
             {fx.Descriptor("res_gone", fx.png_sha, "gone.png"),
              fx.Descriptor("res_bad", other_sha, "bad.png"),
              fx.Descriptor("res_txt", text_sha, "txt.png"),
              fx.Descriptor("res_ok", fx.png_sha, "ok.png")}}},
           "2026-06-10T09:00:00Z");
  fx.Event("assistant_message", {{"text", "I see one."}}, "2026-06-10T09:00:01Z");
  // Line 3: only a picture, and it is not one: the sink drops the whole
  // message, which must not shift the compaction range below.
  fx.Event("user_message",
           {{"text", ""}, {"resources", {fx.Descriptor("res_txt", text_sha, "t.png")}}},
           "2026-06-10T09:00:01.500Z");
  // Line 4: an answer lost to a provider error.
  fx.Event("assistant_message", {{"text", ""}}, "2026-06-10T09:00:01.600Z");
  std::string tail = "{not json at all\n";                      // line 5
  tail += std::string(interop::kMaxLineBytes + 1, ' ') + "\n";  // line 6
  tail += json{{"id", "evt_x"},
               {"session_id", kSession},
               {"seq", 5},  // line 7
               {"ts", "2026-06-10T09:00:02Z"},
               {"type", "user_message"},
               {"data", {{"text", "after the damage"}}}}
              .dump() +
          "\n";
  tail += json{{"id", "evt_c"},
               {"session_id", kSession},
               {"seq", 6},  // line 8
               {"ts", "2026-06-10T09:00:03Z"},
               {"type", "history_compaction"},
               {"data", {{"summary", "s"}, {"range", {{"from_seq", 2}, {"to_seq", 5}}}}}}
              .dump() +
          "\n";
  tail += R"({"id":"evt_y","session_id":")" + std::string(kSession) + R"(","seq":7,"ts":"20)";
  fx.Write(tail);

  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.root.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_TRUE(HasSkip(*report, Where(1), "missing"));
  EXPECT_TRUE(HasSkip(*report, Where(1), "do not hash"));
  EXPECT_TRUE(HasSkip(*report, Where(1), "said to be an image"));
  EXPECT_TRUE(HasSkip(*report, Where(3), "nothing is left of the message"));
  EXPECT_TRUE(HasSkip(*report, Where(4), "no text"));
  EXPECT_TRUE(HasSkip(*report, Where(5), "the line is not valid JSON (parse error"));
  EXPECT_TRUE(HasSkip(*report, Where(6), "longer than"));
  EXPECT_TRUE(HasSkip(*report, Where(9), "truncated"));
  EXPECT_EQ(report->records_skipped, 9);
  EXPECT_EQ(report->messages_added, 3);
  EXPECT_EQ(report->images_added, 1);

  auto msgs = store->ReadMessages(kSession);
  ASSERT_TRUE(msgs.has_value());
  ASSERT_EQ(msgs->size(), 3u);
  ASSERT_EQ((*msgs)[0].parts.size(), 2u);
  EXPECT_EQ((*msgs)[0].parts[1].resource->content_sha256, fx.png_sha);
  EXPECT_EQ((*msgs)[2].Text(), "after the damage");
  // The compaction's Pixir range 2..5 is our 2..3: the dropped message took no seq.
  auto events = store->ReadEvents(kSession);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 4u);
  ASSERT_EQ((*events)[3].type, EventType::kCompaction);
  EXPECT_EQ((*events)[3].compaction.from_seq, 2);
  EXPECT_EQ((*events)[3].compaction.to_seq, 3);
}

// A log with no message to show (only events without an equivalent, an
// ephemeral one, a user message whose only attachment is unusable), and an
// empty log, became empty "New Session" sessions; now they make none, and
// what was left out is still listed.
TEST(PixirImport, ALogWithNothingToShowMakesNoSession) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  const std::string text = "plain text, not a picture";
  const std::string text_sha = blob::Sha256Hex(text);
  WriteFile(fx.ResourceFile("res_txt", text_sha), text);
  fx.Event("skill_activation", {{"skill", "review"}}, "2026-06-10T09:00:00Z");
  fx.Event("status", {{"state", "thinking"}}, "2026-06-10T09:00:01Z", /*ephemeral=*/true);
  fx.Event("user_message",
           {{"text", ""}, {"resources", {fx.Descriptor("res_txt", text_sha, "t.png")}}},
           "2026-06-10T09:00:02Z");
  fx.Event("turn_failed", {{"error", "provider unavailable"}}, "2026-06-10T09:00:03Z");
  fx.Write();
  WriteFile(fx.sessions / "ses_empty.ndjson", "");
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.root.string(), {.format = ImportFormat::kPixir});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 0);
  auto listed = store->ListSessions({.limit = 10});
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->sessions.empty());
  EXPECT_TRUE(HasSkip(*report, Where(1), "no sessiondb equivalent"));
  EXPECT_TRUE(HasSkip(*report, Where(3), "said to be an image"));
  EXPECT_TRUE(HasSkip(*report, Where(3), "nothing is left of the message"));
  EXPECT_TRUE(HasSkip(*report, Where(4), "no sessiondb equivalent"));
  // Once the log holds a message, it is a session.
  fx.Event("user_message", {{"text", "Hello?"}}, "2026-06-10T09:01:00Z");
  fx.Write();
  auto again = ImportPath(*store, fx.root.string(), {.format = ImportFormat::kPixir});
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(again->sessions_added, 1);
  auto msgs = store->ReadMessages(kSession);
  ASSERT_TRUE(msgs.has_value());
  ASSERT_EQ(msgs->size(), 1u);
  EXPECT_EQ((*msgs)[0].Text(), "Hello?");
}

// A log whose file name is not UTF-8: the name went into the session's
// metadata and its dump() ended the process. Its events (whose session id
// is UTF-8, so not this log's) are skipped with reasons, and the rest of
// the folder imports.
TEST(PixirImport, ALogNamedInLatin1DoesNotEndTheImport) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  fx.Build();
  fx.Write();
  WriteFile(fx.sessions / "ses_caf\xE9.ndjson", json{{"id", "evt_1"},
                                                     {"session_id", "ses_caf\xC3\xA9"},
                                                     {"seq", 1},
                                                     {"ts", "2026-06-10T09:00:00Z"},
                                                     {"type", "user_message"},
                                                     {"data", {{"text", "hi"}}}}
                                                        .dump() +
                                                    "\n");
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.root.string(), {.format = ImportFormat::kPixir});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  // The log's session is its events' (UTF-8) id; the name is kept repaired.
  EXPECT_EQ(report->sessions_added, 2);
  EXPECT_EQ(report->records_skipped, 1);  // the fixture's 'reasoning' event, as ever
  bool found = false;
  auto listed = store->ListSessions({.limit = 10});
  ASSERT_TRUE(listed.has_value());
  for (const Session& s : listed->sessions) {
    const json meta = json::parse(s.metadata_json);
    if (meta["pixir_session_id"] != "ses_caf\xC3\xA9") continue;
    found = true;
    EXPECT_EQ(meta["source_file"], "ses_caf\xEF\xBF\xBD.ndjson");
  }
  EXPECT_TRUE(found);
}

// Pixir's published example is a log whose file name is not its events'
// session_id: every event was skipped ("belongs to session ..., not this
// log's") and nothing imported. The log's session is its events' id, and
// its resources are found under that id.
TEST(PixirImport, ALogNamedOtherThanItsSessionImportsUnderItsEventsId) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  fx.Build();
  std::string text;
  for (const json& e : fx.lines) text += e.dump() + "\n";
  WriteFile(fx.sessions / "example-session.ndjson", text);
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, (fx.sessions / "example-session.ndjson").string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->format, ImportFormat::kPixir);
  EXPECT_EQ(report->sessions_added, 1);
  EXPECT_EQ(report->messages_added, 9);
  EXPECT_EQ(report->records_skipped, 1);  // the 'reasoning' event, as for any log
  EXPECT_EQ(report->images_added, 1);
  auto session = store->GetSession(kSession);
  ASSERT_TRUE(session.has_value());
  const json meta = json::parse(session->metadata_json);
  EXPECT_EQ(meta["pixir_session_id"], kSession);
  EXPECT_EQ(meta["source_file"], "example-session.ndjson");
  auto msgs = store->ReadMessages(kSession);
  ASSERT_TRUE(msgs.has_value());
  ASSERT_FALSE(msgs->empty());
  EXPECT_EQ((*msgs)[0].Text(), "What does this screenshot show?");
}

// A .pixir folder whose first log by name is empty (a session started and
// left) was not recognised ("not in a format sessiondb recognises"). The
// first log with a line decides.
TEST(PixirImport, AFolderWhoseFirstLogIsEmptyIsStillDetected) {
  TempDir tmp;
  PixirFixture fx(tmp.path());
  fx.Build();
  fx.Write();
  WriteFile(fx.sessions / "ses_000empty.ndjson", "");
  WriteFile(fx.sessions / "ses_001blank.ndjson", "\n\n");
  auto detected = DetectImportFormat(fx.root.string());
  ASSERT_TRUE(detected.has_value()) << detected.error().ToString();
  EXPECT_EQ(*detected, ImportFormat::kPixir);
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.root.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 1);
  EXPECT_EQ(report->messages_added, 9);
}

}  // namespace
}  // namespace sessiondb
