// WindowChecker: the windows of each session, each projected in the three
// shapes and validated.
#include "projection/window_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "projection/request_validators.h"
#include "sessiondb/projection.h"

namespace sessiondb::testing {
namespace {

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

Message UserText(const std::string& text) {
  Message m;
  m.role = Role::kUser;
  m.parts = {Part::Text(text)};
  return m;
}

}  // namespace

void WindowChecker::CheckWindow(Store& store, std::span<const Event> events,
                                const std::string& label) {
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
    EXPECT_TRUE(problems.empty()) << label << " as " << ProviderFormatName(format) << ": "
                                  << problems.front()
                                  << (problems.size() > 1
                                          ? " (+" + std::to_string(problems.size() - 1) + " more)"
                                          : "")
                                  << "\n"
                                  << body->substr(0, 3000);
    EXPECT_EQ(WithoutReasoning(*body, &replayed_).find(kReasoningMarker), std::string::npos)
        << label << " as " << ProviderFormatName(format) << ": reasoning turned into text";
    if (!problems.empty()) ++invalid_;
  }
}

void WindowChecker::CheckSession(Store& store, const std::string& id, const std::string& label) {
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
void WindowChecker::CheckForks(Store& store, const std::string& id,
                               const std::vector<Event>& events, const std::string& label) {
  for (int i = 0; i < 3 && !events.empty(); ++i) {
    const int64_t at = events[Pick(events.size())].seq;
    auto fork = store.ForkSession(id, at, NewSession{});
    ASSERT_TRUE(fork) << fork.error().ToString();
    ASSERT_TRUE(store.Append(fork->id, UserText("and now?")));
    Result<std::vector<Event>> forked = store.ReadForProjection(fork->id);
    ASSERT_TRUE(forked) << forked.error().ToString();
    CheckWindow(store, *forked, label + " forked at " + std::to_string(at));
  }
}

// Random compactions of a copy of the session, each then pruned.
void WindowChecker::CheckCompactions(Store& store, const std::string& id,
                                     const std::vector<Event>& events, const std::string& label) {
  if (events.size() < 2) return;
  auto copy = store.ForkSession(id, events.back().seq, NewSession{});
  ASSERT_TRUE(copy) << copy.error().ToString();
  // The fork's own events can be pruned, the inherited ones cannot: give it
  // a tail of its own made of the session's messages again (their tool call
  // ids now appear twice in the copy, as in a history that reuses them).
  for (const Event& e : events) {
    if (e.type != EventType::kMessage || e.message.pruned) continue;
    Message m = e.message;
    m.id.clear();
    for (Part& p : m.parts) {
      if (p.resource) p = Part::Text("[attachment]");
    }
    (void)store.Append(copy->id, m);  // one the store refuses is not a window
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

void WindowChecker::CheckStore(Store& store, const std::string& label) {
  ListOptions list{.limit = 1000, .archived = ArchiveFilter::kAll};
  auto page = store.ListSessions(list);
  ASSERT_TRUE(page) << page.error().ToString();
  for (const Session& s : page->sessions) CheckSession(store, s.id, label + " " + s.id);
}

void ExpectEveryWindowReplays(Store& store, const std::string& label) {
  WindowChecker checker;
  checker.CheckStore(store, label);
  EXPECT_GT(checker.sessions(), 0) << label;
  EXPECT_EQ(checker.invalid(), 0) << label << ": of " << checker.projections() << " projections";
}

}  // namespace sessiondb::testing
