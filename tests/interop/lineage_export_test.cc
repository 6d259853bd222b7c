// Lineage in exports: the markdown and jsonl exports of a Store fork, of a
// side branch and a side chain an import made from one Claude Code
// transcript, of a sub-agent's transcript, and of a ChatGPT regeneration,
// say where each branched from.
#include <nlohmann/json.hpp>
#include <sstream>

#include "interop_fixture.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr char kSession[] = "4d5e6f70-1111-4222-8333-944455556666";

std::string Uuid(int n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "bbbbbbbb-0000-4000-8000-%012d", n);
  return buf;
}

json Record(const std::string& type, int uuid, int parent, json content, bool sidechain = false) {
  json message = {{"role", type}, {"content", std::move(content)}};
  if (type == "assistant") {
    message["id"] = "msg_" + std::to_string(uuid);
    message["model"] = "claude-sonnet-4-20250514";
  }
  return {{"parentUuid", parent ? json(Uuid(parent)) : json(nullptr)},
          {"isSidechain", sidechain},
          {"userType", "external"},
          {"cwd", "/home/dev/app"},
          {"sessionId", kSession},
          {"version", "1.0.98"},
          {"type", type},
          {"message", std::move(message)},
          {"uuid", Uuid(uuid)},
          {"timestamp", "2025-08-01T10:00:0" + std::to_string(uuid % 10) + ".000Z"}};
}

// A main line 1-2-3-4, a side chain (a Task's sub-agent, written in the
// same file) off 2, and a prompt edited after 2 (5, 6); the main line is
// written last.
std::string Transcript() {
  std::vector<json> r = {
      Record("user", 1, 0, "Plan the release"),
      Record("assistant", 2, 1, json::array({{{"type", "text"}, {"text", "Three steps."}}})),
      Record("user", 7, 2, "Find the changelog", /*sidechain=*/true),
      Record("assistant", 8, 7, json::array({{{"type", "text"}, {"text", "CHANGES.md"}}}),
             /*sidechain=*/true),
      Record("user", 5, 2, "Do step two first"),
      Record("assistant", 6, 5, json::array({{{"type", "text"}, {"text", "Step two done."}}})),
      Record("user", 3, 2, "Do step one"),
      Record("assistant", 4, 3, json::array({{{"type", "text"}, {"text", "Done."}}}))};
  std::string out;
  for (const json& j : r) out += j.dump() + "\n";
  return out;
}

class LineageExport : public InteropTest {
 protected:
  void SetUp() override {
    store_ = OpenStore("store");
    const fs::path project = dir_.path() / "projects" / "-home-dev-app";
    WriteFile(project / (std::string(kSession) + ".jsonl"), Transcript());
    WriteFile(
        project / kSession / "subagents" / "agent-a1b2.jsonl",
        Record("user", 20, 0, "Summarise CHANGES.md").dump() + "\n" +
            Record("assistant", 21, 20, json::array({{{"type", "text"}, {"text", "Two entries."}}}))
                .dump() +
            "\n");
    auto report = ImportPath(*store_, (dir_.path() / "projects").string(), {});
    ASSERT_TRUE(report) << report.error().ToString();
    ASSERT_EQ(report->sessions_added, 4);
  }

  // The session whose first message has `text`.
  std::string SessionStartingWith(const std::string& text) {
    ListOptions list{.limit = 100, .archived = ArchiveFilter::kAll};
    auto page = store_->ListSessions(list);
    EXPECT_TRUE(page) << page.error().ToString();
    for (const Session& s : page ? page->sessions : std::vector<Session>{}) {
      auto events = store_->ReadEvents(s.id);
      if (events && !events->empty() && events->front().message.Text() == text) return s.id;
    }
    ADD_FAILURE() << "no session starts with " << text;
    return "";
  }

  std::string Markdown(const std::string& id) {
    const fs::path out = dir_.path() / ("md-" + std::to_string(exports_++));
    auto r = ExportTo(*store_, out.string(), {.format = ExportFormat::kMarkdown, .sessions = {id}});
    EXPECT_TRUE(r) << r.error().ToString();
    return ReadFile(out / (id + ".md"));
  }

  // The lineage of each line of the jsonl export of `id` (all alike).
  json JsonlLineage(const std::string& id) {
    const fs::path out = dir_.path() / ("lines-" + std::to_string(exports_++) + ".jsonl");
    auto r = ExportTo(*store_, out.string(), {.format = ExportFormat::kJsonl, .sessions = {id}});
    EXPECT_TRUE(r) << r.error().ToString();
    std::istringstream in(ReadFile(out));
    std::vector<json> seen;
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line);
      seen.push_back(j.contains("lineage") ? j["lineage"] : json());
    }
    EXPECT_FALSE(seen.empty());
    for (const json& l : seen) EXPECT_EQ(l, seen.front());
    return seen.empty() ? json() : seen.front();
  }

  static bool Has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
  }

  std::unique_ptr<Store> store_;
  int exports_ = 0;
};

TEST_F(LineageExport, AnImportedSideBranchNamesItsSessionAndRecord) {
  const std::string main = SessionStartingWith("Plan the release");
  const std::string branch = SessionStartingWith("Do step two first");
  EXPECT_TRUE(Has(Markdown(branch),
                  "- Branched from: `" + main + "` at its source record `" + Uuid(2) + "`\n"));
  EXPECT_EQ(JsonlLineage(branch),
            json({{"kind", "branch"}, {"parent_session_id", main}, {"at_source_record", Uuid(2)}}));
  // The main line has no lineage.
  EXPECT_FALSE(Has(Markdown(main), "from: `"));
  EXPECT_TRUE(JsonlLineage(main).is_null());
}

TEST_F(LineageExport, ASideChainSaysSo) {
  const std::string main = SessionStartingWith("Plan the release");
  const std::string chain = SessionStartingWith("Find the changelog");
  EXPECT_TRUE(Has(Markdown(chain),
                  "- Side chain of: `" + main + "` at its source record `" + Uuid(2) + "`\n"));
  EXPECT_EQ(JsonlLineage(chain)["sidechain"], true);
}

TEST_F(LineageExport, ASubAgentTranscriptNamesTheSessionThatRanIt) {
  const std::string main = SessionStartingWith("Plan the release");
  const std::string agent = SessionStartingWith("Summarise CHANGES.md");
  EXPECT_TRUE(Has(Markdown(agent), "- Sub-agent of: `" + main + "` (agent `a1b2`)\n"));
  EXPECT_EQ(JsonlLineage(agent),
            json({{"kind", "subagent"}, {"parent_session_id", main}, {"agent_id", "a1b2"}}));
}

TEST_F(LineageExport, AStoreForkNamesItsParentSeqAndEvent) {
  const std::string main = SessionStartingWith("Plan the release");
  auto events = store_->ReadEvents(main);
  ASSERT_TRUE(events && events->size() >= 2);
  auto fork = store_->ForkSession(main, 2, NewSession{.id = "what-if"});
  ASSERT_TRUE(fork) << fork.error().ToString();
  ASSERT_TRUE(store_->Append("what-if", Msg(Role::kUser, {Part::Text("What if we wait?")})));
  const std::string event_id = (*events)[1].id;
  EXPECT_TRUE(Has(Markdown("what-if"),
                  "- Forked from: `" + main + "` after event 2 (`" + event_id + "`)\n"));
  EXPECT_EQ(JsonlLineage("what-if"), json({{"kind", "fork"},
                                           {"parent_session_id", main},
                                           {"at_seq", 2},
                                           {"at_event_id", event_id}}));
}

// ChatGPT names the node a regenerated answer branched at.
TEST_F(LineageExport, AChatGptRegenerationNamesItsNode) {
  ASSERT_TRUE(store_->CreateSession(NewSession{
      .id = "regen",
      .metadata_json =
          R"({"source":"chatgpt","forked_from":"chatgpt-main","fork_node":"u1-node"})"}));
  ASSERT_TRUE(store_->Append("regen", Msg(Role::kAssistant, {Part::Text("A kitten.")})));
  EXPECT_TRUE(
      Has(Markdown("regen"), "- Branched from: `chatgpt-main` at its source record `u1-node`\n"));
  EXPECT_EQ(JsonlLineage("regen")["at_source_record"], "u1-node");
}

}  // namespace
}  // namespace sessiondb::testing
