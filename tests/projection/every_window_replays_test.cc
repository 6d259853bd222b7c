// Every window replays: whatever was imported or appended, any window a
// harness may ask for projects to a request each provider accepts. The
// histories are every format's (foreign_histories.h, the interop test
// samples, any fixture file under tests/interop/fixtures or
// tests/golden/interop), imported, and the realistic store of the interop
// suites (interop_fixture.h) with its snapshot export imported again. The
// windows of each session: all of it, what ReadForProjection gives (from the
// last compaction on), the last N events for every N, random ranges of the
// log, forks at random points (with a new message), and random compactions
// and prunes of a copy. Each window is projected in all three shapes and
// checked by the validators of request_validators.h, which also refuse any
// other provider's reasoning fields; no projection may hold reasoning text.
//
// The random choices come from a fixed seed, so a failure repeats; the
// number of windows is bounded so the test runs in a few seconds.
#include <algorithm>
#include <map>
#include <random>

#include "interop/interop_fixture.h"
#include "projection/foreign_histories.h"
#include "projection/request_validators.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

constexpr ProviderFormat kFormats[] = {ProviderFormat::kAnthropic, ProviderFormat::kOpenAiChat,
                                       ProviderFormat::kOpenAiResponses};

// The body without the blocks and items that carry reasoning back to the
// provider that wrote it (Anthropic thinking blocks, Responses reasoning
// items), counted in `*carried` by type: reasoning may travel only there.
std::string WithoutReasoning(const std::string& body, std::map<std::string, int>* carried) {
  nlohmann::json j = nlohmann::json::parse(body);
  auto strip = [carried](nlohmann::json& list) {
    if (!list.is_array()) return;
    for (size_t i = list.size(); i-- > 0;) {
      const std::string type = list[i].is_object() ? list[i].value("type", "") : "";
      if (type == "thinking" || type == "reasoning") {
        ++(*carried)[type];
        list.erase(i);
      }
    }
  };
  if (j.contains("input")) strip(j["input"]);
  if (j.contains("messages")) {
    for (nlohmann::json& m : j["messages"]) {
      if (m.contains("content")) strip(m["content"]);
    }
  }
  return j.dump();
}

class EveryWindowReplays : public InteropTest {
 protected:
  // Projects `events` in every shape and checks each request.
  void CheckWindow(Store& store, std::span<const Event> events, const std::string& label) {
    for (ProviderFormat format : kFormats) {
      Result<std::string> body =
          BuildProjection(events, {.format = format},
                          [&store](const Resource& r) { return store.ReadBlob(r.content_sha256); });
      ASSERT_TRUE(body) << label << ": " << body.error().ToString();
      ++projections_;
      if (IsEmptyConversation(format, *body)) {
        ++empty_;
        continue;
      }
      std::vector<std::string> problems = RequestProblems(format, *body);
      EXPECT_TRUE(problems.empty())
          << label << " as " << ProviderFormatName(format) << ": " << problems.front()
          << (problems.size() > 1 ? " (+" + std::to_string(problems.size() - 1) + " more)" : "")
          << "\n"
          << body->substr(0, 3000);
      EXPECT_EQ(WithoutReasoning(*body, &replayed_reasoning_).find(kReasoningMarker),
                std::string::npos)
          << label << " as " << ProviderFormatName(format) << ": reasoning turned into text";
      if (!problems.empty()) ++invalid_;
    }
  }

  // Every window of session `id`.
  void CheckSession(Store& store, const std::string& id, const std::string& label) {
    Result<std::vector<Event>> read = store.ReadEvents(id);
    ASSERT_TRUE(read) << read.error().ToString();
    const std::vector<Event>& events = *read;
    ++sessions_;
    CheckWindow(store, events, label + " whole");
    Result<std::vector<Event>> resume = store.ReadForProjection(id);
    ASSERT_TRUE(resume) << resume.error().ToString();
    CheckWindow(store, *resume, label + " from its last compaction");
    const size_t n = events.size();
    for (size_t k = 1; k < n; ++k) {
      CheckWindow(store, std::span(events).subspan(n - k), label + " last " + std::to_string(k));
    }
    for (int i = 0; i < 12 && n > 1; ++i) {
      size_t a = Pick(n), b = Pick(n);
      if (a > b) std::swap(a, b);
      CheckWindow(
          store, std::span(events).subspan(a, b - a + 1),
          label + " seqs " + std::to_string(events[a].seq) + ".." + std::to_string(events[b].seq));
    }
    CheckForks(store, id, events, label);
    CheckCompactions(store, id, events, label);
  }

  // Forks at random points, each with a new user message.
  void CheckForks(Store& store, const std::string& id, const std::vector<Event>& events,
                  const std::string& label) {
    for (int i = 0; i < 3 && !events.empty(); ++i) {
      const int64_t at = events[Pick(events.size())].seq;
      auto fork = store.ForkSession(id, at, NewSession{});
      ASSERT_TRUE(fork) << fork.error().ToString();
      ASSERT_TRUE(store.Append(fork->id, Msg(Role::kUser, {Part::Text("and now?")})));
      Result<std::vector<Event>> forked = store.ReadForProjection(fork->id);
      ASSERT_TRUE(forked) << forked.error().ToString();
      CheckWindow(store, *forked, label + " forked at " + std::to_string(at));
    }
  }

  // A random compaction of a fork of the whole session, then its prune.
  void CheckCompactions(Store& store, const std::string& id, const std::vector<Event>& events,
                        const std::string& label) {
    if (events.size() < 2) return;
    auto copy = store.ForkSession(id, events.back().seq, NewSession{});
    ASSERT_TRUE(copy) << copy.error().ToString();
    // The fork's own events can be pruned, the inherited ones cannot: give it
    // a tail of its own made of the session's messages again.
    for (const Event& e : events) {
      if (e.type != EventType::kMessage || e.message.pruned) continue;
      Message m = e.message;
      m.id.clear();
      for (Part& p : m.parts) {
        if (p.resource) p = Part::Text("[attachment]");
      }
      ASSERT_TRUE(store.Append(copy->id, m)) << label;
    }
    auto session = store.GetSession(copy->id);
    ASSERT_TRUE(session);
    const int64_t last = session->last_seq;
    for (int i = 0; i < 2; ++i) {
      int64_t from = 1 + static_cast<int64_t>(Pick(static_cast<size_t>(last)));
      int64_t to = 1 + static_cast<int64_t>(Pick(static_cast<size_t>(last)));
      if (from > to) std::swap(from, to);
      auto c = store.Compact(
          copy->id,
          CompactionRequest{
              .from_seq = from, .to_seq = to, .summary = "what happened", .strategy = "test"});
      ASSERT_TRUE(c) << c.error().ToString();
      const std::string what =
          label + " compacted " + std::to_string(from) + ".." + std::to_string(to);
      Result<std::vector<Event>> compacted = store.ReadForProjection(copy->id);
      ASSERT_TRUE(compacted);
      CheckWindow(store, *compacted, what);
      auto all = store.ReadEvents(copy->id);
      ASSERT_TRUE(all);
      const size_t k = Pick(all->size());
      CheckWindow(store, std::span(*all).subspan(k), what + ", from index " + std::to_string(k));
      ASSERT_TRUE(store.PruneCompaction(copy->id, c->seq));
      Result<std::vector<Event>> pruned = store.ReadEvents(copy->id);
      ASSERT_TRUE(pruned);
      CheckWindow(store, *pruned, what + " and pruned");
    }
  }

  // Every session the store holds (forks made by the checks included once).
  void CheckStore(Store& store, const std::string& label) {
    ListOptions list{.limit = 1000, .archived = ArchiveFilter::kAll};
    auto page = store.ListSessions(list);
    ASSERT_TRUE(page) << page.error().ToString();
    for (const Session& s : page->sessions) CheckSession(store, s.id, label + " " + s.id);
  }

  void ImportAndCheck(const ForeignHistory& h) {
    auto store = OpenStore("store-" + std::to_string(stores_++));
    ASSERT_TRUE(store);
    auto report = ImportPath(*store, h.path.string(), {.format = h.format});
    ASSERT_TRUE(report) << h.format << " " << h.name << ": " << report.error().ToString();
    EXPECT_GT(report->sessions_added, 0) << h.format << " " << h.name;
    CheckStore(*store, h.format + " (" + h.name + ")");
  }

  void TearDown() override {
    RecordProperty("sessions", sessions_);
    RecordProperty("projections", projections_);
    RecordProperty("empty", empty_);
  }

  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::mt19937_64 rng_{0x5e551011};
  int stores_ = 0;
  int sessions_ = 0;
  int projections_ = 0;
  int empty_ = 0;
  int invalid_ = 0;
  std::map<std::string, int> replayed_reasoning_;  // thinking blocks, reasoning items
};

TEST_F(EveryWindowReplays, ForEveryForeignFormat) {
  for (const ForeignHistory& h : WriteForeignHistories(dir_.path() / "histories")) {
    SCOPED_TRACE(h.format + ": " + h.name);
    ImportAndCheck(h);
  }
  EXPECT_GT(sessions_, 9);
  // The signed thinking of Claude Code and the encrypted reasoning of Codex
  // went back to their own providers.
  EXPECT_GT(replayed_reasoning_["thinking"], 0);
  EXPECT_GT(replayed_reasoning_["reasoning"], 0);
  EXPECT_EQ(invalid_, 0) << "of " << projections_ << " projections";
  // An empty window is one whose every event projects to nothing; they are rare.
  EXPECT_LT(empty_, projections_ / 10);
}

TEST_F(EveryWindowReplays, ForTheInteropSampleAndItsSnapshot) {
  auto store = OpenStore("sample");
  ASSERT_TRUE(store);
  FillSample(*store);
  CheckStore(*store, "sample");
  const fs::path snapshot = dir_.path() / "sample.json";
  ASSERT_TRUE(ExportTo(*store, snapshot.string(), {.format = "snapshot"}));
  auto copy = OpenStore("from-snapshot");
  ASSERT_TRUE(ImportPath(*copy, snapshot.string(), {.format = "snapshot"}));
  CheckStore(*copy, "snapshot");
  EXPECT_EQ(invalid_, 0) << "of " << projections_ << " projections";
}

// Fixture files of the interop suites, whatever formats they hold.
TEST_F(EveryWindowReplays, ForEveryFixtureFile) {
  const fs::path tests = fs::path(SESSIONDB_TESTDATA_DIR).parent_path();
  int files = 0;
  for (const fs::path& root : {tests / "golden" / "interop", tests / "interop" / "fixtures"}) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    // One import per folder below the format's: each is one history.
    for (const auto& format_dir : fs::directory_iterator(root, ec)) {
      if (!format_dir.is_directory()) continue;
      for (const auto& entry : fs::directory_iterator(format_dir.path(), ec)) {
        const std::string format = format_dir.path().filename().string();
        auto store = OpenStore("fixture-" + std::to_string(files++));
        auto report = ImportPath(*store, entry.path().string(), {});
        if (!report) continue;  // a fixture of what must be refused
        CheckStore(*store, format + " " + entry.path().filename().string());
      }
    }
  }
  EXPECT_GT(files, 0);
  EXPECT_EQ(invalid_, 0) << "of " << projections_ << " projections";
}

}  // namespace
}  // namespace sessiondb::testing
