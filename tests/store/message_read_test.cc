// ReadMessages and ReadLastMessages build each Message straight from its row
// (Backend::ReadMessages), with no Event between. What they return must be
// exactly what the Event-based projection of the log gives: the messages of
// ApplyRewinds(ReadEvents(s)), field for field, on every kind of history
// (every optional field set or left out, tool calls, images, links, missing
// blobs, compactions and their prunes, rewinds, forks that read their
// parent's prefix, forks of forks), and for every page of it.
#include <algorithm>
#include <string>
#include <vector>

#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

// Every field of two parts, named in the failure.
void ExpectSamePart(const Part& got, const Part& want, const std::string& where) {
  EXPECT_EQ(got.type, want.type) << where;
  EXPECT_EQ(got.text, want.text) << where;
  EXPECT_EQ(got.resource.has_value(), want.resource.has_value()) << where;
  if (got.resource && want.resource) {
    EXPECT_EQ(*got.resource, *want.resource) << where;
  }
  EXPECT_EQ(got.source.has_value(), want.source.has_value()) << where;
  EXPECT_EQ(got.tool_call_id, want.tool_call_id) << where;
  EXPECT_EQ(got.tool_name, want.tool_name) << where;
  EXPECT_EQ(got.arguments_json, want.arguments_json) << where;
  EXPECT_EQ(got.is_error, want.is_error) << where;
  EXPECT_EQ(got.signature, want.signature) << where;
}

// Every field of two lists of messages, in order.
void ExpectSameMessages(const std::vector<Message>& got, const std::vector<Message>& want,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const Message& g = got[i];
    const Message& w = want[i];
    const std::string where =
        what + ", message " + std::to_string(i) + " (seq " + std::to_string(w.seq) + ")";
    EXPECT_EQ(g.id, w.id) << where;
    EXPECT_EQ(g.session_id, w.session_id) << where;
    EXPECT_EQ(g.seq, w.seq) << where;
    EXPECT_EQ(g.ts_ms, w.ts_ms) << where;
    EXPECT_EQ(g.role, w.role) << where;
    EXPECT_EQ(g.files, w.files) << where;
    EXPECT_EQ(g.files_modified, w.files_modified) << where;
    EXPECT_EQ(g.edit_results_json, w.edit_results_json) << where;
    EXPECT_EQ(g.model, w.model) << where;
    EXPECT_EQ(g.provider, w.provider) << where;
    EXPECT_EQ(g.usage, w.usage) << where;
    EXPECT_EQ(g.metadata_json, w.metadata_json) << where;
    EXPECT_EQ(g.pruned, w.pruned) << where;
    ASSERT_EQ(g.parts.size(), w.parts.size()) << where;
    for (size_t p = 0; p < g.parts.size(); ++p) {
      ExpectSamePart(g.parts[p], w.parts[p], where + ", part " + std::to_string(p));
    }
  }
}

class MessageReads : public BackendTest {
 protected:
  // The Event-based projection of the session's view: what ReadMessages
  // returned before it read messages straight from the rows.
  std::vector<Message> Projected(const std::string& s) {
    auto events = store_->ReadEvents(s);
    EXPECT_TRUE(events) << events.error().ToString();
    if (!events) return {};
    std::vector<Message> out;
    for (Event& e : ApplyRewinds(std::move(*events))) {
      if (e.type == EventType::kMessage) out.push_back(std::move(e.message));
    }
    return out;
  }

  // What VisitMessages(s, from) hands over, each view made a Message again:
  // the one it points to, or one text part.
  std::vector<Message> Visited(const std::string& s, int64_t from = 1) {
    std::vector<Message> out;
    Status visited = store_->VisitMessages(
        s,
        [&](const MessageView& v) {
          if (v.message != nullptr) {
            EXPECT_TRUE(v.text.empty());
            EXPECT_EQ(v.id, v.message->id);
            EXPECT_EQ(v.seq, v.message->seq);
            EXPECT_EQ(v.role, v.message->role);
            out.push_back(*v.message);
            return true;
          }
          Message& m = out.emplace_back();
          m.id = v.id;
          m.session_id = v.session_id;
          m.seq = v.seq;
          m.ts_ms = v.ts_ms;
          m.role = v.role;
          m.parts.push_back(Part::Text(std::string(v.text)));
          return true;
        },
        from);
    EXPECT_TRUE(visited.ok()) << visited.ToString();
    return out;
  }

  // ReadMessages whole and in pages, VisitMessages from every seq, and
  // ReadLastMessages of every count, against the projection and its slices.
  void ExpectReadsMatchProjection(const std::string& s) {
    const std::vector<Message> want = Projected(s);
    auto all = store_->ReadMessages(s);
    ASSERT_TRUE(all) << all.error().ToString();
    ExpectSameMessages(*all, want, "ReadMessages(" + s + ")");
    ExpectSameMessages(Visited(s), want, "VisitMessages(" + s + ")");

    const int64_t n = std::ssize(want);
    for (int64_t from = 1; from <= (n == 0 ? 1 : want.back().seq + 1); ++from) {
      for (int64_t limit : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, n, int64_t{-1}}) {
        std::vector<Message> slice;
        for (const Message& m : want) {
          if (m.seq >= from && (limit < 0 || std::ssize(slice) < limit)) slice.push_back(m);
        }
        auto page = store_->ReadMessages(s, from, limit);
        ASSERT_TRUE(page) << page.error().ToString();
        ExpectSameMessages(
            *page, slice,
            "ReadMessages(" + s + ", " + std::to_string(from) + ", " + std::to_string(limit) + ")");
        if (limit < 0) {
          ExpectSameMessages(Visited(s, from), slice,
                             "VisitMessages(" + s + ", " + std::to_string(from) + ")");
        }
      }
    }
    for (int64_t count = 0; count <= n + 1; ++count) {
      const auto first = want.begin() + std::max<int64_t>(0, n - count);
      auto last = store_->ReadLastMessages(s, count);
      ASSERT_TRUE(last) << last.error().ToString();
      ExpectSameMessages(*last, {first, want.end()},
                         "ReadLastMessages(" + s + ", " + std::to_string(count) + ")");
    }
  }

  // A message with every optional field and every kind of part.
  Message Everything(const std::string& salt) {
    Message m;
    m.role = Role::kAssistant;
    m.parts = {Part::Reasoning("thinking " + salt, "sig-" + salt), Part::Text("the answer " + salt),
               Part::ToolCall("call-" + salt, "read_file", R"({"path":"/src/a.cc"})"),
               Part::ImageFromBytes(MakePng(8, 4, salt), "image/png", salt + ".png"),
               Part::Link("https://example.com/" + salt, "a link", "text/html", 1234)};
    m.files = {"/src/a.cc", "/src/b.cc"};
    m.files_modified = {"/src/a.cc"};
    m.edit_results_json = R"([{"file":"/src/a.cc","ok":true}])";
    m.model = "gpt-test";
    m.provider = "openai";
    m.usage =
        Usage{.input_tokens = 11, .output_tokens = 7, .cached_tokens = 3, .reasoning_tokens = 2};
    m.metadata_json = R"({"turn":")" + salt + R"("})";
    return m;
  }

  Message ToolResult(const std::string& salt, bool is_error) {
    Message m;
    m.role = Role::kTool;
    m.parts = {Part::ToolResult("call-" + salt, "output of " + salt, is_error)};
    return m;
  }

  void MustAppend(const std::string& s, const Message& m) {
    auto r = store_->Append(s, m);
    ASSERT_TRUE(r) << r.error().ToString();
  }

  std::vector<std::string> Texts(const std::vector<Message>& messages) {
    std::vector<std::string> out;
    for (const Message& m : messages) out.push_back(m.Text());
    return out;
  }
};
SESSIONDB_FOR_EACH_BACKEND(MessageReads);

TEST_P(MessageReads, EveryFieldAndPartReadsAsTheEventProjectionHasIt) {
  const std::string s = NewSessionId();
  AppendText(s, "plain, no optional field");
  MustAppend(s, Everything("a"));
  MustAppend(s, ToolResult("a", /*is_error=*/false));
  MustAppend(s, ToolResult("b", /*is_error=*/true));
  Message call_only;  // no text part at all
  call_only.role = Role::kAssistant;
  call_only.parts = {Part::ToolCall("call-only", "list_files", "{}")};
  MustAppend(s, call_only);
  AppendText(s, "unicode: déjà vu ✓", Role::kSystem);
  ExpectReadsMatchProjection(s);
  auto read = store_->ReadMessages(s);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 6u);
  EXPECT_EQ((*read)[1].parts.size(), 5u);
  EXPECT_EQ((*read)[1].usage->output_tokens, 7);
  EXPECT_EQ((*read)[3].parts[0].is_error, true);
  EXPECT_EQ((*read)[5].Text(), "unicode: déjà vu ✓");
}

TEST_P(MessageReads, AMissingBlobIsFlaggedAndWarnedOnceAMessageAsBefore) {
  const std::string s = NewSessionId();
  MustAppend(s, Everything("gone"));
  MustAppend(s, Everything("kept"));
  auto read = store_->ReadMessages(s);
  ASSERT_TRUE(read);
  const std::string gone = (*read)[0].parts[3].resource->content_sha256;
  RemoveBlob(gone);
  warnings_.clear();
  ExpectReadsMatchProjection(s);
  warnings_.clear();
  read = store_->ReadMessages(s);
  ASSERT_TRUE(read);
  EXPECT_TRUE((*read)[0].parts[3].resource->missing);
  EXPECT_FALSE((*read)[1].parts[3].resource->missing);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find(gone), std::string::npos) << warnings_[0];
}

TEST_P(MessageReads, CompactionsAndTheirPrunesReadAsTheEventProjection) {
  const std::string s = NewSessionId();
  for (int i = 1; i <= 3; ++i) AppendText(s, "m" + std::to_string(i));
  MustAppend(s, Everything("c"));  // 4
  auto c = store_->Compact(s, {.from_seq = 1, .to_seq = 4, .summary = "all of it"});
  ASSERT_TRUE(c) << c.error().ToString();  // 5
  AppendText(s, "after");                  // 6
  ExpectReadsMatchProjection(s);
  auto pruned = store_->PruneCompaction(s, c->seq);
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  ExpectReadsMatchProjection(s);
  auto read = store_->ReadMessages(s);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 5u);
  EXPECT_TRUE((*read)[0].pruned);
  EXPECT_TRUE((*read)[3].pruned);
  EXPECT_FALSE((*read)[4].pruned);
  EXPECT_EQ((*read)[4].Text(), "after");
}

TEST_P(MessageReads, RewoundViewsReadAsTheEventProjection) {
  const std::string s = NewSessionId();
  for (int i = 1; i <= 4; ++i) AppendText(s, "m" + std::to_string(i));
  ASSERT_TRUE(store_->Rewind(s, 2));  // 5: view 1 2
  AppendText(s, "m6");                // 6
  MustAppend(s, Everything("r"));     // 7
  ASSERT_TRUE(store_->Rewind(s, 6));  // 8: view 1 2 6
  AppendText(s, "m9");                // 9
  ASSERT_TRUE(store_->Rewind(s, 1));  // 10: view 1
  AppendText(s, "m11");               // 11
  AppendText(s, "m12");               // 12: view 1 11 12
  ExpectReadsMatchProjection(s);
  auto read = store_->ReadMessages(s);
  ASSERT_TRUE(read);
  EXPECT_EQ(Texts(*read), (std::vector<std::string>{"m1", "m11", "m12"}));
}

TEST_P(MessageReads, ForksReadTheirParentsPrefixAsTheEventProjection) {
  const std::string root = NewSessionId();
  for (int i = 1; i <= 3; ++i) AppendText(root, "r" + std::to_string(i));
  MustAppend(root, Everything("root"));  // 4
  ASSERT_TRUE(store_->Rewind(root, 3));  // 5: view 1 2 3
  AppendText(root, "r6");                // 6
  AppendText(root, "r7");                // 7, past the fork point
  auto fork = store_->ForkSession(root, 6, {});
  ASSERT_TRUE(fork) << fork.error().ToString();
  AppendText(fork->id, "f7");
  MustAppend(fork->id, ToolResult("fork", false));
  auto grandchild = store_->ForkSession(fork->id, 7, {});
  ASSERT_TRUE(grandchild) << grandchild.error().ToString();
  ASSERT_TRUE(store_->Rewind(grandchild->id, 2));  // 8: view 1 2
  AppendText(grandchild->id, "g9");
  auto empty_fork = store_->ForkSession(root, 0, {});
  ASSERT_TRUE(empty_fork) << empty_fork.error().ToString();

  for (const std::string& s : {root, fork->id, grandchild->id, empty_fork->id}) {
    ExpectReadsMatchProjection(s);
  }
  auto read = store_->ReadMessages(fork->id);
  ASSERT_TRUE(read);
  // A tool result's output is not a text part: Text() leaves it out.
  EXPECT_EQ(Texts(*read), (std::vector<std::string>{"r1", "r2", "r3", "r6", "f7", ""}));
  EXPECT_EQ((*read)[5].parts.at(0).text, "output of fork");
  EXPECT_EQ((*read)[0].session_id, root);  // the parent's messages are the parent's
  EXPECT_EQ((*read)[4].session_id, fork->id);
  read = store_->ReadMessages(grandchild->id);
  ASSERT_TRUE(read);
  EXPECT_EQ(Texts(*read), (std::vector<std::string>{"r1", "r2", "g9"}));
  EXPECT_TRUE(store_->ReadMessages(empty_fork->id)->empty());
}

// PostgreSQL reads a history a page of 2,000 rows at a time: reads that
// cross pages, and a fork's parent prefix and its own rows, both longer
// than a page, with non-messages among them, read as the projection has it.
TEST_P(MessageReads, HistoriesLongerThanAPageReadWholeAndInSlices) {
  const std::string root = NewSessionId();
  auto batch = [&](const std::string& s, const std::string& prefix, int count) {
    std::vector<Message> messages;
    for (int i = 0; i < count; ++i) {
      Message& m = messages.emplace_back();
      m.role = i % 2 ? Role::kAssistant : Role::kUser;
      m.parts.push_back(Part::Text(prefix + std::to_string(i)));
    }
    auto appended = store_->AppendBatch(s, messages);
    ASSERT_TRUE(appended) << appended.error().ToString();
  };
  batch(root, "a", 2500);
  ASSERT_TRUE(store_->Rewind(root, 2400));  // 2501, a non-message inside the prefix
  batch(root, "b", 1700);                   // 2502..4201
  auto fork = store_->ForkSession(root, 4100, {});
  ASSERT_TRUE(fork) << fork.error().ToString();
  batch(fork->id, "f", 2100);

  const std::vector<Message> want = Projected(fork->id);
  ASSERT_EQ(want.size(), 2400u + 1599u + 2100u);
  auto all = store_->ReadMessages(fork->id);
  ASSERT_TRUE(all) << all.error().ToString();
  ExpectSameMessages(*all, want, "ReadMessages(fork)");
  // The embedded store visits a thousand rows at a time.
  ExpectSameMessages(Visited(fork->id), want, "VisitMessages(fork)");
  ExpectSameMessages(Visited(fork->id, 2001), {want.begin() + 2000, want.end()},
                     "VisitMessages(fork, 2001)");
  auto last = store_->ReadLastMessages(fork->id, 4500);
  ASSERT_TRUE(last) << last.error().ToString();
  ExpectSameMessages(*last, {want.end() - 4500, want.end()}, "ReadLastMessages(fork, 4500)");
  for (auto [from, limit] : {std::pair<int64_t, int64_t>{1999, 2003}, {2001, -1}, {3000, 4001}}) {
    std::vector<Message> slice;
    for (const Message& m : want) {
      if (m.seq >= from && (limit < 0 || std::ssize(slice) < limit)) slice.push_back(m);
    }
    auto page = store_->ReadMessages(fork->id, from, limit);
    ASSERT_TRUE(page) << page.error().ToString();
    ExpectSameMessages(*page, slice, "ReadMessages(fork, " + std::to_string(from) + ")");
  }
}

// The embedded store hands a message of one text part over from its row,
// builds the rest; the visitor may stop the read, and may call the store
// while it runs (no lock is held), even to append.
TEST_P(MessageReads, VisitMessagesBuildsOnlyWhatIsMoreThanTextAndMayCallTheStore) {
  const std::string s = NewSessionId();
  for (int i = 1; i <= 3; ++i) AppendText(s, "plain " + std::to_string(i));
  MustAppend(s, Everything("v"));
  AppendText(s, "plain 5");
  std::vector<bool> built;
  std::vector<std::string> texts;
  Status visited = store_->VisitMessages(s, [&](const MessageView& v) {
    built.push_back(v.message != nullptr);
    texts.push_back(v.message != nullptr ? v.message->Text() : std::string(v.text));
    auto session = store_->GetSession(s);  // no deadlock: nothing is held
    EXPECT_TRUE(session) << session.error().ToString();
    return true;
  });
  ASSERT_TRUE(visited.ok()) << visited.ToString();
  EXPECT_EQ(texts,
            (std::vector<std::string>{"plain 1", "plain 2", "plain 3", "the answer v", "plain 5"}));
  if (embedded()) {
    EXPECT_EQ(built, (std::vector<bool>{false, false, false, true, false}));
  } else {
    EXPECT_EQ(built, std::vector<bool>(5, true)) << "PostgreSQL builds every Message";
  }

  int seen = 0;
  visited = store_->VisitMessages(s, [&](const MessageView& v) {
    ++seen;
    if (v.seq == 2) AppendText(s, "appended while visiting");
    return v.seq < 2;
  });
  ASSERT_TRUE(visited.ok()) << visited.ToString();
  EXPECT_EQ(seen, 2) << "false stops the read";
  EXPECT_EQ(store_->ReadMessages(s)->back().Text(), "appended while visiting");

  Status missing =
      store_->VisitMessages("no-such-session", [](const MessageView&) { return true; });
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
}

TEST_P(MessageReads, AMissingSessionIsNotFoundOnBothReads) {
  auto read = store_->ReadMessages("no-such-session");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), StatusCode::kNotFound);
  auto last = store_->ReadLastMessages("no-such-session", 3);
  ASSERT_FALSE(last);
  EXPECT_EQ(last.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sessiondb::testing
