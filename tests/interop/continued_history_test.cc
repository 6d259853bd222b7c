// Continued histories: a session goes out to another app (ac-dc, Agents.KT)
// or lives in one (Claude Code, Codex, ChatGPT), the conversation goes on
// there, and each import brings exactly what is new: every message present
// once, nothing lost because the store held more or fewer events than the
// source, and nothing added by importing an unchanged source again.
#include <map>
#include <nlohmann/json.hpp>

#include "interop/import_sink.h"
#include "interop_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ContinuedHistory : public InteropTest {
 protected:
  ImportReport Import(Store& store, const std::string& path, std::string_view format) {
    auto r = ImportPath(store, path, {.format = ParseImportFormat(format).value()});
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : ImportReport{};
  }

  // How many of the session's messages have each text (parts of text and
  // tool results joined).
  std::map<std::string, int> TextCounts(Store& store, const std::string& session) {
    std::map<std::string, int> counts;
    auto messages = store.ReadMessages(session);
    EXPECT_TRUE(messages) << messages.error().ToString();
    for (const Message& m : messages ? *messages : std::vector<Message>{}) {
      std::string text;
      for (const Part& p : m.parts) {
        if (p.type == PartType::kText || p.type == PartType::kToolResult) text += p.text;
      }
      ++counts[text];
    }
    return counts;
  }

  // Imports `path` after each of `steps` (each appends records as the app
  // would), checking that the step's texts arrive once, that nothing else
  // does, and that importing again adds nothing.
  void Continue(
      Store& store, const std::string& session, const std::string& path, const std::string& format,
      const std::vector<std::pair<std::vector<std::string>, std::function<void()>>>& steps) {
    std::map<std::string, int> expected = TextCounts(store, session);
    for (const auto& [texts, step] : steps) {
      step();
      const int64_t before = store.GetSession(session)->message_count;
      ImportReport r = Import(store, path, format);
      EXPECT_EQ(store.GetSession(session)->message_count - before, std::ssize(texts)) << format;
      EXPECT_GE(r.messages_added, std::ssize(texts)) << format;
      EXPECT_EQ(r.sessions_extended, 1) << format;
      EXPECT_EQ(r.records_skipped, 0) << format << ": " << r.skipped[0].reason;
      for (const std::string& t : texts) ++expected[t];
      EXPECT_EQ(TextCounts(store, session), expected) << format;
      ImportReport again = Import(store, path, format);
      EXPECT_EQ(again.messages_added, 0) << format;
      EXPECT_EQ(again.sessions_extended, 0) << format;
      EXPECT_EQ(TextCounts(store, session), expected) << format;
    }
  }
};

// ---- Exported, then continued in the app --------------------------------------

json AcdcLine(const std::string& id, const std::string& role, const std::string& content,
              const std::string& ts) {
  return {{"id", id},
          {"session_id", "chat-main"},
          {"timestamp", ts},
          {"role", role},
          {"content", content}};
}

void AppendLines(const fs::path& file, const std::vector<json>& records) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  for (const json& r : records) out << r.dump() << "\n";
}

// The store's chat-main holds tool calls, a resource view and a compaction,
// which ac-dc cannot hold: the export has fewer records than the store has
// events, so counting them told the import the new ones were there already.
TEST_F(ContinuedHistory, AnAcdcExportContinuedInAcdcComesBackWhole) {
  auto store = OpenStore("store");
  FillSample(*store);
  const fs::path out = dir_.path() / "out" / ".ac-dc";
  ASSERT_TRUE(
      ExportTo(*store, out.string(), {.format = ExportFormat::kAcdc, .sessions = {"chat-main"}}));
  // Nothing new yet: the export itself comes back as nothing.
  ImportReport same = Import(*store, out.string(), "ac-dc");
  EXPECT_EQ(same.messages_added, 0);
  EXPECT_EQ(same.sessions_unchanged, 1);

  const fs::path history = out / "history.jsonl";
  Continue(
      *store, "chat-main", out.string(), "ac-dc",
      {{{"And a bird?"},
        [&] {
          AppendLines(history, {AcdcLine("1750000100000-0b1d0001", "user", "And a bird?",
                                         "2025-06-15T15:08:20Z")});
        }},
       {{"No bird.", "Thanks again"}, [&] {
          AppendLines(
              history,
              {AcdcLine("1750000101000-0b1d0002", "assistant", "No bird.", "2025-06-15T15:08:21Z"),
               AcdcLine("1750000102000-0b1d0003", "user", "Thanks again", "2025-06-15T15:08:22Z")});
        }}});
  // The new messages follow the store's own events, in the app's order.
  auto messages = store->ReadMessages("chat-main");
  ASSERT_TRUE(messages);
  ASSERT_GE(messages->size(), 3u);
  EXPECT_EQ((*messages)[messages->size() - 3].Text(), "And a bird?");
  EXPECT_EQ(messages->back().Text(), "Thanks again");
}

// Agents.KT messages have no ids: they are known by role, content and tool
// calls (and their count among equal ones), not by their index.
TEST_F(ContinuedHistory, AnAgentsKtExportContinuedInAgentsKtComesBackWhole) {
  auto store = OpenStore("store");
  FillSample(*store);
  const fs::path out = dir_.path() / "kt";
  ASSERT_TRUE(ExportTo(*store, out.string(),
                       {.format = ExportFormat::kAgentsKt, .sessions = {"chat-main"}}));
  fs::path file;
  for (const auto& entry : fs::directory_iterator(out)) file = entry.path();
  ImportReport same = Import(*store, out.string(), "agents-kt");
  EXPECT_EQ(same.messages_added, 0);
  EXPECT_EQ(same.sessions_unchanged, 1);

  auto add = [&](const std::vector<json>& messages) {
    json doc = json::parse(ReadFile(file));
    for (const json& m : messages) doc["messages"].push_back(m);
    WriteFile(file, doc.dump());
  };
  Continue(*store, "chat-main", out.string(), "agents-kt",
           {{{"Is it a tabby?"},
             [&] {
               add({{{"role", "user"}, {"content", "Is it a tabby?"}}});
             }},
            // The same words again are a new message, not the one before.
            {{"Yes, a tabby.", "Is it a tabby?"}, [&] {
               add({{{"role", "assistant"}, {"content", "Yes, a tabby."}},
                    {{"role", "user"}, {"content", "Is it a tabby?"}}});
             }}});
}

// A session copied by snapshot and then continued in both stores: the
// second snapshot brings what the first store added, after what this store
// added meanwhile; judged by seq, the first new event looked held already.
TEST_F(ContinuedHistory, ASnapshotOfASessionThatWentOnInBothStoresMergesWhole) {
  auto a = OpenStore("a");
  FillSample(*a);
  auto b = OpenStore("b");
  const std::string first = dir_.Sub("first.json");
  ASSERT_TRUE(ExportTo(*a, first, {.format = ExportFormat::kSnapshot, .sessions = {"chat-main"}}));
  ASSERT_EQ(Import(*b, first, "snapshot").sessions_added, 1);

  ASSERT_TRUE(b->Append("chat-main", Msg(Role::kUser, {Part::Text("noted here")})));
  ASSERT_TRUE(a->Append("chat-main", Msg(Role::kUser, {Part::Text("from a, one")})));
  auto compaction = a->Compact("chat-main", {.from_seq = 1, .to_seq = 8, .summary = "so far"});
  ASSERT_TRUE(compaction) << compaction.error().ToString();
  ASSERT_TRUE(a->Append("chat-main", Msg(Role::kAssistant, {Part::Text("from a, two")})));
  const std::string second = dir_.Sub("second.json");
  ASSERT_TRUE(ExportTo(*a, second, {.format = ExportFormat::kSnapshot, .sessions = {"chat-main"}}));

  ImportReport r = Import(*b, second, "snapshot");
  EXPECT_EQ(r.sessions_extended, 1);
  EXPECT_EQ(r.messages_added, 2);
  std::vector<Event> events = Events(*b, "chat-main");
  ASSERT_EQ(events.size(), 11u);
  EXPECT_EQ(events[7].message.Text(), "noted here");
  EXPECT_EQ(events[8].message.Text(), "from a, one");
  EXPECT_EQ(events[8].id, Events(*a, "chat-main")[7].id);
  ASSERT_EQ(events[9].type, EventType::kCompaction);
  EXPECT_EQ(events[9].seq, 10);
  // a's 1..8 are b's 1..7 and 9.
  EXPECT_EQ(events[9].compaction.from_seq, 1);
  EXPECT_EQ(events[9].compaction.to_seq, 9);
  EXPECT_EQ(events[10].message.Text(), "from a, two");
  ImportReport again = Import(*b, second, "snapshot");
  EXPECT_EQ(again.sessions_unchanged, 1);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(Events(*b, "chat-main").size(), 11u);
}

// ---- Histories that live in their app --------------------------------------

json ClaudeLine(const std::string& type, int uuid, int parent, const std::string& text) {
  auto id = [](int n) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "cccccccc-0000-4000-8000-%012d", n);
    return std::string(buf);
  };
  return {
      {"parentUuid", parent ? json(id(parent)) : json(nullptr)},
      {"isSidechain", false},
      {"userType", "external"},
      {"cwd", "/home/dev/app"},
      {"sessionId", "0b9d1c2e-dddd-4222-8333-944455556666"},
      {"version", "1.0.80"},
      {"type", type},
      {"message", {{"role", type}, {"content", json::array({{{"type", "text"}, {"text", text}}})}}},
      {"uuid", id(uuid)},
      {"timestamp", "2025-06-01T10:00:0" + std::to_string(uuid) + ".000Z"}};
}

TEST_F(ContinuedHistory, AClaudeCodeTranscriptThatGoesOnComesInOnce) {
  auto store = OpenStore("store");
  const fs::path file =
      dir_.path() / "projects" / "-home-dev-app" / "0b9d1c2e-dddd-4222-8333-944455556666.jsonl";
  fs::create_directories(file.parent_path());
  AppendLines(file, {ClaudeLine("user", 1, 0, "Hello"), ClaudeLine("assistant", 2, 1, "Hi")});
  EXPECT_EQ(Import(*store, file.string(), "claude-code").messages_added, 2);
  Continue(
      *store, "0b9d1c2e-dddd-4222-8333-944455556666", file.string(), "claude-code",
      {{{"Run the tests"}, [&] { AppendLines(file, {ClaudeLine("user", 3, 2, "Run the tests")}); }},
       {{"All green", "Thanks"}, [&] {
          AppendLines(file, {ClaudeLine("assistant", 4, 3, "All green"),
                             ClaudeLine("user", 5, 4, "Thanks")});
        }}});
}

json CodexLine(const std::string& ts, const std::string& type, json payload) {
  return {{"timestamp", ts}, {"type", type}, {"payload", std::move(payload)}};
}

json CodexMessage(const std::string& ts, const std::string& role, const std::string& text) {
  return CodexLine(
      ts, "response_item",
      {{"type", "message"},
       {"role", role},
       {"content",
        json::array({{{"type", role == "user" ? "input_text" : "output_text"}, {"text", text}}})}});
}

TEST_F(ContinuedHistory, ACodexRolloutThatGoesOnComesInOnce) {
  auto store = OpenStore("store");
  const std::string id = "0199a2b3-c4d5-7e6f-8091-00000000abcd";
  const fs::path file = dir_.path() / "sessions" / "2025" / "10" / "29" /
                        ("rollout-2025-10-29T00-59-38-" + id + ".jsonl");
  fs::create_directories(file.parent_path());
  AppendLines(file, {CodexLine("2025-10-29T00:59:38.317Z", "session_meta",
                               {{"id", id},
                                {"timestamp", "2025-10-29T00:59:38.308Z"},
                                {"cwd", "/home/dev/app"},
                                {"originator", "codex_cli_rs"}}),
                     CodexMessage("2025-10-29T00:59:39.000Z", "user", "Fix the build"),
                     CodexMessage("2025-10-29T00:59:40.000Z", "assistant", "Fixed.")});
  EXPECT_EQ(Import(*store, file.string(), "codex").messages_added, 2);
  Continue(*store, id, file.string(), "codex",
           {{{"Now the docs"},
             [&] {
               AppendLines(file,
                           {CodexMessage("2025-10-29T01:00:00.000Z", "user", "Now the docs")});
             }},
            {{"Done.", "Fixed."}, [&] {
               // The same words as an earlier line are a new record.
               AppendLines(file, {CodexMessage("2025-10-29T01:00:01.000Z", "assistant", "Done."),
                                  CodexMessage("2025-10-29T01:00:02.000Z", "assistant", "Fixed.")});
             }}});
}

// A ChatGPT conversation: nodes linked by parent, the active line ending at
// current_node.
json GptNode(const std::string& id, const char* parent, std::vector<std::string> children,
             const std::string& role, double t, const std::string& text) {
  json message = {{"id", id},
                  {"author", {{"role", role}, {"name", nullptr}, {"metadata", json::object()}}},
                  {"create_time", t},
                  {"content", {{"content_type", "text"}, {"parts", {text}}}},
                  {"status", "finished_successfully"},
                  {"recipient", "all"},
                  {"metadata", json::object()}};
  return {{"id", id},
          {"message", std::move(message)},
          {"parent", parent ? json(parent) : json(nullptr)},
          {"children", std::move(children)}};
}

// Regenerating an answer changes the active line in its middle: the new
// answer stands where the old one stood. Matching by place took it for the
// old one and dropped it; by identity it comes in (after the store's events),
// and what follows it too.
TEST_F(ContinuedHistory, AChatGptConversationWithARegeneratedAnswerComesInWhole) {
  auto store = OpenStore("store");
  const std::string conv = "67f0c1d2-bbbb-8000-9000-0123456789ab";
  json mapping = json::object();
  mapping["root"] = {
      {"id", "root"}, {"message", nullptr}, {"parent", nullptr}, {"children", {"u1"}}};
  mapping["u1"] = GptNode("u1", "root", {"a1"}, "user", 1717000001.0, "Name a colour");
  mapping["a1"] = GptNode("a1", "u1", {}, "assistant", 1717000002.0, "Red.");
  auto write = [&](const std::string& current) {
    json c = {{"title", "Colours"}, {"create_time", 1717000000.0}, {"update_time", 1717000009.0},
              {"mapping", mapping}, {"current_node", current},     {"conversation_id", conv},
              {"id", conv}};
    WriteFile(dir_.path() / "gpt" / "conversations.json", json::array({c}).dump());
  };
  write("a1");
  const std::string folder = (dir_.path() / "gpt").string();
  EXPECT_EQ(Import(*store, folder, "chatgpt").messages_added, 2);
  Continue(*store, conv, folder, "chatgpt",
           {{{"Blue."},
             [&] {
               mapping["u1"]["children"] = {"a1", "a1b"};
               mapping["a1b"] = GptNode("a1b", "u1", {}, "assistant", 1717000003.0, "Blue.");
               write("a1b");
             }},
            {{"Why blue?", "It is calm."}, [&] {
               mapping["a1b"]["children"] = {"u2"};
               mapping["u2"] = GptNode("u2", "a1b", {"a2"}, "user", 1717000004.0, "Why blue?");
               mapping["a2"] = GptNode("a2", "u2", {}, "assistant", 1717000005.0, "It is calm.");
               write("a2");
             }}});
  // The answer regenerated away is also where ChatGPT keeps it: on a branch.
  auto page = store->ListSessions({.limit = 10});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->sessions.size(), 2u);
  const Session& branch = page->sessions[0].id == conv ? page->sessions[1] : page->sessions[0];
  EXPECT_EQ(TextCounts(*store, branch.id), (std::map<std::string, int>{{"Red.", 1}}));
}

// ---- Stores written by earlier imports ----------------------------------------

// Agents.KT and id-less Extremis messages were once named by their index
// ("messages[1]", "index-1"). A store imported then must gain nothing when
// the same file comes in again, and only what is new when it has grown: the
// sink recognises its messages by their fingerprint too.
TEST_F(ContinuedHistory, MessagesImportedUnderTheirIndexAreStillRecognised) {
  auto store = OpenStore("store");
  // What the earlier Agents.KT import stored for [user "one", assistant "two"].
  {
    ImportReport report;
    interop::ImportSink sink(*store, &report);
    ASSERT_TRUE(sink.BeginSession({.id = "kt-old"}).ok());
    const std::vector<std::pair<Role, std::string>> old = {{Role::kUser, "one"},
                                                           {Role::kAssistant, "two"}};
    for (size_t i = 0; i < old.size(); ++i) {
      Event e;
      e.id = interop::StableEventId("kt-old", "messages[" + std::to_string(i) + "]");
      e.ts_ms = 1'000;
      e.message.role = old[i].first;
      e.message.parts = {Part::Text(old[i].second)};
      ASSERT_TRUE(sink.Add(std::move(e), "old").ok());
    }
    ASSERT_TRUE(sink.EndSession().ok());
    ASSERT_TRUE(sink.Finish().ok());
  }
  const fs::path file = dir_.path() / "kt" / "old.json";
  json doc = {
      {"requestId", "r"},
      {"sessionId", "kt-old"},
      {"messages",
       {{{"role", "user"}, {"content", "one"}}, {{"role", "assistant"}, {"content", "two"}}}}};
  WriteFile(file, doc.dump());
  EXPECT_EQ(Import(*store, file.parent_path().string(), "agents-kt").messages_added, 0);
  Continue(*store, "kt-old", file.parent_path().string(), "agents-kt",
           {{{"three"}, [&] {
               doc["messages"].push_back({{"role", "user"}, {"content", "three"}});
               WriteFile(file, doc.dump());
             }}});
}

// Extremis messages without an id are known by role, time and text: one
// added before them no longer makes them look new (or them it).
TEST_F(ContinuedHistory, ExtremisMessagesWithoutIdsAreKnownByContentNotPlace) {
  auto store = OpenStore("store");
  const std::string sid = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F";
  const fs::path dir = dir_.path() / "Extremis" / "sessions";
  json messages = {
      {{"role", "user"}, {"content", "Summarise this"}, {"timestamp", "2025-01-15T10:30:00Z"}},
      {{"role", "assistant"}, {"content", "Done."}, {"timestamp", "2025-01-15T10:30:05Z"}}};
  auto write = [&] {
    WriteFile(dir / (sid + ".json"), json{{"id", sid},
                                          {"version", 1},
                                          {"title", "t"},
                                          {"messages", messages},
                                          {"createdAt", "2025-01-15T10:30:00Z"}}
                                         .dump());
  };
  write();
  WriteFile(dir / "index.json",
            json{{"version", 1}, {"sessions", {{{"id", sid}, {"title", "t"}}}}}.dump());
  EXPECT_EQ(Import(*store, dir.string(), "extremis").messages_added, 2);
  Continue(
      *store, sid, dir.string(), "extremis",
      {{{"Shorter please", "Done."}, [&] {
          // One before the others (an edit), one at the end with the
          // same words as an earlier answer.
          messages.insert(messages.begin(), json{{"role", "user"},
                                                 {"content", "Shorter please"},
                                                 {"timestamp", "2025-01-15T10:29:00Z"}});
          messages.push_back(
              {{"role", "assistant"}, {"content", "Done."}, {"timestamp", "2025-01-15T10:31:00Z"}});
          write();
        }}});
}

}  // namespace
}  // namespace sessiondb::testing
