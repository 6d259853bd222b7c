// The IndexBackend of a PostgreSQL store, used directly: full-text ranking
// and filters, the query forms, snippets, vectors, settings, the code
// memory's tables, the hook's race, huge texts, namespaces that never see
// each other's index, and a version 2 store indexed as it upgrades.

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "sessiondb/postgres_schema.h"
#include "store/index_backend.h"
#include "store/page_check.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

using store::IndexBackend;
using store::TextPhrase;
using store::TextQuery;

// One group per word: every word must occur.
TextQuery AllOf(std::initializer_list<std::string> words) {
  TextQuery q;
  for (const std::string& w : words) q.all_of.push_back({TextPhrase{.words = {w}}});
  return q;
}

class PgIndex : public PostgresStoreTest {
 protected:
  std::unique_ptr<IndexBackend> OpenIndex(Store* store) {
    auto index = store->OpenIndexBackend();
    EXPECT_TRUE(index) << index.error().ToString();
    return index ? std::move(*index) : nullptr;
  }
  void SetUp() override {
    PostgresStoreTest::SetUp();
    index_ = OpenIndex(store_.get());
    ASSERT_TRUE(index_);
  }
  void TearDown() override { index_.reset(); }

  std::unique_ptr<Store> OpenNamespace(const std::string& ns) {
    StoreOptions o = Options();
    o.namespace_name = ns;
    auto opened = Store::Open(pg_->uri(), o);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }

  // The documents ranked for `query`, best first.
  std::vector<int64_t> Ranked(const TextQuery& query, const SearchFilter& filter = {},
                              IndexBackend* index = nullptr) {
    auto r = (index ? index : index_.get())->RankKeyword(query, filter, 1000);
    EXPECT_TRUE(r) << r.error().ToString();
    std::vector<int64_t> ids;
    if (r) {
      for (const auto& d : r->docs) ids.push_back(d.doc_id);
    }
    return ids;
  }

  // The document of event `seq` of `session`, found through the index.
  int64_t DocOf(const std::string& session, int64_t seq) {
    auto newest = index_->NewestDocument();
    EXPECT_TRUE(newest);
    for (int64_t id = 1; newest && id <= *newest; ++id) {
      SearchHit hit;
      auto found = index_->LoadHitDetails(id, &hit);
      if (found && *found && hit.kind != HitKind::kCodeWrite && hit.session_id == session &&
          hit.seq == seq) {
        return id;
      }
    }
    ADD_FAILURE() << "no document for " << session << " seq " << seq;
    return 0;
  }

  store::StoredCodeWrite Write(const std::string& path, const std::string& code, int64_t time_ms,
                               const std::string& project = "") {
    return store::StoredCodeWrite{.file_path = path,
                                  .old_code = "",
                                  .new_code = code,
                                  .whole_file = true,
                                  .language = "cpp",
                                  .session_id = "s",
                                  .project = project,
                                  .tool = "Write",
                                  .time_ms = time_ms,
                                  .content_sha256 = "sha-" + path + "-" + code};
  }

  std::unique_ptr<IndexBackend> index_;
};

TEST_F(PgIndex, RanksByCoverDensityOverLengthAndNewerFirstOnTies) {
  const std::string s = NewSessionId();
  AppendText(s, "alpha and some other words");                          // 1
  AppendText(s, "alpha alpha alpha beta");                              // 2
  AppendText(s, "nothing to see here");                                 // 3
  AppendText(s, "beta and then alpha too");                             // 4
  AppendText(s, "alpha once in a message of many more words than it");  // 5
  auto r = index_->RankKeyword(AllOf({"alpha"}), {}, 100);
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->docs.size(), 4u);
  EXPECT_EQ(r->matches, 4);
  EXPECT_FALSE(r->bounded);
  EXPECT_EQ(r->docs[0].doc_id, DocOf(s, 2));  // three times: densest
  EXPECT_GT(r->docs[0].score, r->docs[1].score);
  EXPECT_EQ(r->docs[1].score, r->docs[2].score);
  EXPECT_EQ(r->docs[1].doc_id, DocOf(s, 4));  // a tie (as long, once each): the newer first
  EXPECT_EQ(r->docs[2].doc_id, DocOf(s, 1));
  // Once in a longer message ranks below once in a shorter one, as with
  // BM25 on the embedded store.
  EXPECT_EQ(r->docs[3].doc_id, DocOf(s, 5));
  EXPECT_GT(r->docs[2].score, r->docs[3].score);
  EXPECT_EQ(index_->Expression(AllOf({"alpha", "beta"})), "'alpha' & 'beta'");
  EXPECT_EQ(Ranked(AllOf({"alpha", "beta"})).size(), 2u);
  EXPECT_TRUE(Ranked(AllOf({"zebra"})).empty());
  EXPECT_TRUE(Ranked(TextQuery{}).empty());
}

TEST_F(PgIndex, OnlyTheNewestMatchesAreRankedWhenThereAreMoreThanTheCap) {
  const std::string s = NewSessionId();
  for (int i = 1; i <= 5; ++i) AppendText(s, i == 1 ? "common common common" : "common");
  auto r = index_->RankKeyword(AllOf({"common"}), {}, 2);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_TRUE(r->bounded);
  EXPECT_EQ(r->matches, 2);
  std::set<int64_t> got;
  for (const auto& d : r->docs) got.insert(d.doc_id);
  EXPECT_EQ(got, (std::set<int64_t>{DocOf(s, 4), DocOf(s, 5)}));  // not the best, older one
}

TEST_F(PgIndex, PhrasesPrefixesAlternativesAndExclusions) {
  const std::string s = NewSessionId();
  AppendText(s, "the quick brown fox");  // 1
  AppendText(s, "brown, then quick");    // 2
  // Not "quickly": English stemming makes that "quick" on PostgreSQL.
  AppendText(s, "quickest done");                                      // 3
  AppendText(s, "rename snake_case in src/main.cc and obj.method()");  // 4
  const int64_t d1 = DocOf(s, 1), d2 = DocOf(s, 2), d3 = DocOf(s, 3), d4 = DocOf(s, 4);
  auto sorted = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  TextQuery phrase;
  phrase.all_of = {{TextPhrase{.words = {"quick", "brown"}}}};
  EXPECT_EQ(Ranked(phrase), (std::vector<int64_t>{d1}));
  TextQuery prefix;
  prefix.all_of = {{TextPhrase{.words = {"quick"}, .prefix = true}}};
  EXPECT_EQ(sorted(Ranked(prefix)), (std::vector<int64_t>{d1, d2, d3}));
  TextQuery any;
  any.all_of = {{TextPhrase{.words = {"fox"}}, TextPhrase{.words = {"done"}}}};
  EXPECT_EQ(sorted(Ranked(any)), (std::vector<int64_t>{d1, d3}));
  EXPECT_EQ(index_->Expression(any), "('fox' | 'done')");
  TextQuery but = AllOf({"quick"});
  but.none_of = {TextPhrase{.words = {"fox"}}};
  EXPECT_EQ(Ranked(but), (std::vector<int64_t>{d2}));
  // Words are split where FTS5 splits them: at '_', '/', '.', not kept as
  // PostgreSQL's file and host tokens.
  EXPECT_EQ(Ranked(AllOf({"snake_case"})), (std::vector<int64_t>{d4}));
  EXPECT_EQ(Ranked(AllOf({"main"})), (std::vector<int64_t>{d4}));
  EXPECT_EQ(Ranked(AllOf({"method"})), (std::vector<int64_t>{d4}));
  EXPECT_EQ(index_->Expression(AllOf({"snake_case"})), "('snake' <-> 'case')");
  EXPECT_TRUE(Ranked(AllOf({"case_snake"})).empty());
  // A word that is no word for the index matches nothing rather than failing.
  EXPECT_TRUE(Ranked(AllOf({"___"})).empty());
  // Whatever a word holds, it is a lexeme, never tsquery syntax.
  for (const std::string hostile : {"it's", "a\\b", "x:*", "&|!()<->", "—", "🙂", "''"}) {
    TextQuery q = AllOf({hostile});
    q.none_of = {TextPhrase{.words = {hostile}, .prefix = true}};
    auto r = index_->RankKeyword(q, {}, 10);
    ASSERT_TRUE(r) << hostile << ": " << r.error().ToString();
    EXPECT_TRUE(r->docs.empty()) << hostile;
    auto snippet = index_->MatchSnippet(q, d1);
    EXPECT_TRUE(snippet) << hostile;
  }
  // Its letters still count: "it's" is the phrase it <-> s.
  AppendText(s, "so it's done");
  EXPECT_EQ(Ranked(AllOf({"it's"})), (std::vector<int64_t>{DocOf(s, 5)}));
}

TEST_F(PgIndex, EachFilterHoldsTheRankingToWhatItNames) {
  auto a = store_->CreateSession({.id = "a", .metadata_json = R"({"project":"/work/app"})"});
  auto b = store_->CreateSession({.id = "b", .metadata_json = R"({"cwd":"/home/me/tool"})"});
  ASSERT_TRUE(a && b);
  now_ms_ = 1000;
  AppendText("a", "needle from the user", Role::kUser);  // a 1
  now_ms_ = 2000;
  AppendText("a", "needle from the assistant", Role::kAssistant);  // a 2
  now_ms_ = 3000;
  AppendText("b", "needle in the other session");  // b 1
  ASSERT_TRUE(store_->SetArchived("b", true).ok());
  auto code =
      index_->InsertCodeWrite(Write("/work/app/needle.cc", "int needle;", 2500, "/work/app"), {});
  ASSERT_TRUE(code) << code.error().ToString();
  auto code_doc = index_->NewestDocument();
  ASSERT_TRUE(code_doc);
  const int64_t a1 = DocOf("a", 1), a2 = DocOf("a", 2), b1 = DocOf("b", 1), c = *code_doc;
  auto check = [&](const SearchFilter& f, std::set<int64_t> want, const char* what) {
    auto got = Ranked(AllOf({"needle"}), f);
    EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()), want) << what;
    auto passing = index_->DocsPassingFilter(f);
    ASSERT_TRUE(passing) << passing.error().ToString();
    EXPECT_FALSE(passing->unfiltered) << what;
    EXPECT_EQ(std::set<int64_t>(passing->doc_ids.begin(), passing->doc_ids.end()), want) << what;
    EXPECT_TRUE(std::is_sorted(passing->doc_ids.begin(), passing->doc_ids.end())) << what;
    // The same, checked on candidates: named twice, unknown, in any order.
    const std::vector<int64_t> candidates = {c, b1, a1, a2, a1, c + 1000};
    auto among = index_->CandidatesPassingFilter(f, candidates);
    ASSERT_TRUE(among) << among.error().ToString();
    EXPECT_EQ(*among, std::vector<int64_t>(want.begin(), want.end())) << what;
    auto none = index_->CandidatesPassingFilter(f, std::vector<int64_t>{c + 1000});
    ASSERT_TRUE(none) << none.error().ToString();
    EXPECT_TRUE(none->empty()) << what;
  };
  EXPECT_EQ(Ranked(AllOf({"needle"})).size(), 4u);
  check({.session_id = "a"}, {a1, a2}, "session");
  check({.role = Role::kAssistant}, {a2}, "role");
  check({.since_ms = 2000}, {a2, b1, c}, "since");
  check({.until_ms = 2000}, {a1}, "until");
  check({.project = "/work/app"}, {a1, a2, c}, "project from metadata and the write");
  check({.project = "/home/me"}, {b1}, "project from cwd");
  check({.archived = ArchiveFilter::kActive}, {a1, a2, c}, "not archived");
  check({.archived = ArchiveFilter::kArchived}, {b1, c}, "archived (writes have no session)");
  check({.events = false}, {c}, "code writes only");
  check({.code_writes = false}, {a1, a2, b1}, "events only");
  auto all = index_->DocsPassingFilter({});
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->unfiltered);
  EXPECT_TRUE(Ranked(AllOf({"needle"}), {.events = false, .code_writes = false}).empty());
  // A hostile filter fails cleanly, never as a broken query.
  auto nul = index_->RankKeyword(AllOf({"needle"}), {.project = std::string("a\0b", 3)}, 10);
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().code(), StatusCode::kInvalidArgument);
  // A session whose metadata holds "\u0000" (which jsonb and json ->> refuse)
  // does not break the project filter for the others.
  ASSERT_TRUE(store_->CreateSession({.id = "z", .metadata_json = R"({"project":"x\u0000y"})"}));
  AppendText("z", "needle with odd metadata");
  check({.project = "/work/app"}, {a1, a2, c}, "project beside odd metadata");
}

TEST_F(PgIndex, HitDetailsNameTheEventOrTheWrite) {
  ASSERT_TRUE(store_->CreateSession({.id = "s", .title = "Deploy talk"}));
  now_ms_ = 4242;
  const AppendResult m = AppendText("s", "deploy now", Role::kAssistant);
  SearchHit hit;
  auto found = index_->LoadHitDetails(DocOf("s", 1), &hit);
  ASSERT_TRUE(found && *found);
  EXPECT_EQ(hit.kind, HitKind::kMessage);
  EXPECT_EQ(hit.session_title, "Deploy talk");
  EXPECT_EQ(hit.event_id, m.message_id);
  EXPECT_EQ(hit.role, Role::kAssistant);
  EXPECT_EQ(hit.time_ms, 4242);
  auto c = store_->Compact("s", {.from_seq = 1, .to_seq = 1, .summary = "deploy summary"});
  ASSERT_TRUE(c) << c.error().ToString();
  SearchHit summary;
  ASSERT_TRUE(*index_->LoadHitDetails(DocOf("s", 2), &summary));
  EXPECT_EQ(summary.kind, HitKind::kCompaction);
  EXPECT_EQ(Ranked(AllOf({"summary"})), (std::vector<int64_t>{DocOf("s", 2)}));
  auto w = index_->InsertCodeWrite(Write("src/x.cc", "x", 99), {});
  ASSERT_TRUE(w);
  SearchHit write;
  ASSERT_TRUE(*index_->LoadHitDetails(*index_->NewestDocument(), &write));
  EXPECT_EQ(write.kind, HitKind::kCodeWrite);
  EXPECT_EQ(write.code_id, w->code_id);
  EXPECT_EQ(write.file_path, "src/x.cc");
  EXPECT_EQ(write.time_ms, 99);
  EXPECT_FALSE(*index_->LoadHitDetails(999999, &write));
}

TEST_F(PgIndex, SnippetsHighlightTheMatchedWordsAtTheirBytes) {
  const std::string s = NewSessionId();
  AppendText(s, "Ünïcödé wörds first.\n\nThe deploy_script   failed on host-7!\nMore after.");
  auto snippet = index_->MatchSnippet(AllOf({"failed"}), DocOf(s, 1));
  ASSERT_TRUE(snippet) << snippet.error().ToString();
  ASSERT_EQ(snippet->highlights.size(), 1u) << snippet->text;
  const auto [b, e] = snippet->highlights[0];
  EXPECT_EQ(snippet->text.substr(b, e - b), "failed") << snippet->text;
  // Punctuation is the document's, whitespace folded onto one line.
  EXPECT_NE(snippet->text.find("deploy_script failed on host-7!"), std::string::npos)
      << snippet->text;
  EXPECT_EQ(snippet->text.find('\n'), std::string::npos);

  TextQuery two;
  two.all_of = {{TextPhrase{.words = {"wörds"}}, TextPhrase{.words = {"host"}}}};
  auto both = index_->MatchSnippet(two, DocOf(s, 1));
  ASSERT_TRUE(both);
  std::set<std::string> marked;
  for (auto [hb, he] : both->highlights) marked.insert(both->text.substr(hb, he - hb));
  EXPECT_EQ(marked, (std::set<std::string>{"wörds", "host"})) << both->text;
  // No snippet for a document that does not match, or is not there.
  EXPECT_TRUE(index_->MatchSnippet(AllOf({"absent"}), DocOf(s, 1))->text.empty());
  EXPECT_TRUE(index_->MatchSnippet(AllOf({"failed"}), 999999)->text.empty());
}

// A page of hits is loaded in one query (LoadPage): it must say what the
// per-document calls say, document by document, in the order asked.
TEST_F(PgIndex, APageLoadsWhatEachDocumentsCallsWouldInTheOrderAsked) {
  const std::string s = NewSessionId();
  AppendText(s, "the deploy failed on the first host");             // 1
  AppendText(s, "nothing about it here");                           // 2
  AppendText(s, "deployment notes: it failed again, then passed");  // 3
  auto w = index_->InsertCodeWrite(Write("src/deploy.cc", "int deploy_failed = 1;", 77), {});
  ASSERT_TRUE(w) << w.error().ToString();
  auto newest = index_->NewestDocument();
  ASSERT_TRUE(newest);
  const int64_t code_doc = *newest;
  TextQuery query = AllOf({"failed"});
  query.all_of.push_back({TextPhrase{.words = {"deploy"}, .prefix = true}});
  const std::vector<IndexBackend::PageRequest> asked = {
      {.doc_id = DocOf(s, 3), .keyword = true},   // matches
      {.doc_id = 999999, .keyword = true},        // not there
      {.doc_id = DocOf(s, 2), .keyword = true},   // does not match: no snippet
      {.doc_id = DocOf(s, 1), .keyword = false},  // its text, not a snippet
      {.doc_id = code_doc, .keyword = true},      // a code write
  };
  auto page = index_->LoadPage(query, asked);
  ASSERT_TRUE(page) << page.error().ToString();
  testing::ExpectPageAsEachDocument(*index_, query, asked, *page);
  EXPECT_FALSE((*page)[1].present);
  EXPECT_TRUE((*page)[2].snippet.text.empty());  // "failed" is not in it
  // The prefix's words are marked where they start: "deployment" by "deploy*".
  std::set<std::string> marked;
  for (auto [b, e] : (*page)[0].snippet.highlights) {
    marked.insert((*page)[0].snippet.text.substr(b, e - b));
  }
  EXPECT_EQ(marked, (std::set<std::string>{"deployment", "failed"})) << (*page)[0].snippet.text;
  EXPECT_EQ((*page)[4].hit.kind, HitKind::kCodeWrite);
  EXPECT_EQ((*page)[4].hit.file_path, "src/deploy.cc");
  EXPECT_FALSE((*page)[4].snippet.text.empty());
}

TEST_F(PgIndex, ToolCallsAndResultsAreSearchableTextOfTheirMessage) {
  const std::string s = NewSessionId();
  Message m;
  m.role = Role::kAssistant;
  m.parts = {Part::Text("looking"), Part::ToolCall("c1", "read_file", R"({"path":"zeppelin.txt"})"),
             Part::ToolResult("c1", "output mentions walrus\u0001 and a nul", false)};
  ASSERT_TRUE(store_->Append(s, m));
  const int64_t doc = DocOf(s, 1);
  EXPECT_EQ(Ranked(AllOf({"zeppelin"})), (std::vector<int64_t>{doc}));
  EXPECT_EQ(Ranked(AllOf({"walrus"})), (std::vector<int64_t>{doc}));
  auto text = index_->ReadDocumentText(doc);
  ASSERT_TRUE(text && *text);
  EXPECT_EQ(**text,
            "looking\nread_file {\"path\":\"zeppelin.txt\"}\n"
            "output mentions walrus\u0001 and a nul");
  EXPECT_FALSE(*index_->ReadDocumentText(999999));
}

TEST_F(PgIndex, DeletedSessionsAndPrunedTextAreNoLongerFound) {
  const std::string gone = NewSessionId();
  AppendText(gone, "ephemeral words");
  const int64_t gone_doc = DocOf(gone, 1);
  ASSERT_TRUE(index_->PutVectors("m", std::vector<store::EncodedVector>{{gone_doc, "v"}}).ok());
  ASSERT_TRUE(store_->DeleteSession(gone).ok());
  EXPECT_TRUE(Ranked(AllOf({"ephemeral"})).empty());
  SearchHit hit;
  EXPECT_FALSE(*index_->LoadHitDetails(gone_doc, &hit));
  EXPECT_EQ(*index_->VectorCount("m"), 0);  // its vector went with it
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_docs"), "0");

  // Purged archived sessions go the same way.
  const std::string archived = NewSessionId();
  AppendText(archived, "purgeable words");
  ASSERT_TRUE(store_->SetArchived(archived, true).ok());
  EXPECT_EQ(Ranked(AllOf({"purgeable"})).size(), 1u);
  now_ms_ += 1000;
  auto purged = store_->PurgeArchived(now_ms_);
  ASSERT_TRUE(purged) << purged.error().ToString();
  EXPECT_EQ(*purged, 1);
  EXPECT_TRUE(Ranked(AllOf({"purgeable"})).empty());
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_docs"), "0");

  // A deleted parent kept for its fork: hidden from search, its fork's own
  // events still found.
  const std::string parent = NewSessionId();
  AppendText(parent, "inherited words");
  auto fork = store_->ForkSession(parent, 1, {});
  ASSERT_TRUE(fork) << fork.error().ToString();
  AppendText(fork->id, "forked words");
  ASSERT_TRUE(store_->DeleteSession(parent).ok());
  EXPECT_TRUE(Ranked(AllOf({"inherited"})).empty());
  EXPECT_EQ(Ranked(AllOf({"forked"})).size(), 1u);

  // Pruned text is gone from the index, and its vectors with it.
  const std::string s = NewSessionId();
  AppendText(s, "prunable secret");
  AppendText(s, "kept words");
  const int64_t pruned_doc = DocOf(s, 1);
  ASSERT_TRUE(index_->PutVectors("m", std::vector<store::EncodedVector>{{pruned_doc, "v"}}).ok());
  auto c = store_->Compact(s, {.from_seq = 1, .to_seq = 1, .summary = "a summary"});
  ASSERT_TRUE(c) << c.error().ToString();
  auto pruned = store_->PruneCompaction(s, c->seq);
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  EXPECT_EQ(pruned->events_pruned, 1);
  EXPECT_TRUE(Ranked(AllOf({"secret"})).empty());
  EXPECT_EQ(Ranked(AllOf({"kept"})).size(), 1u);
  EXPECT_EQ(*index_->VectorCount("m"), 0);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_docs WHERE tsv IS NULL"), "0");
}

TEST_F(PgIndex, VectorsArePutScannedInPagesCountedAndCleared) {
  const std::string s = NewSessionId();
  std::vector<Message> batch(2100);
  for (size_t i = 0; i < batch.size(); ++i) batch[i].parts = {Part::Text("v" + std::to_string(i))};
  ASSERT_TRUE(store_->AppendBatch(s, batch));
  auto newest = index_->NewestDocument();
  ASSERT_TRUE(newest);
  EXPECT_EQ(*index_->CountPendingEmbeddings("m"), 2100);
  auto pending = index_->PendingDocuments("m", 3);
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 3u);
  EXPECT_EQ((*pending)[0].text, "v0");
  EXPECT_LT((*pending)[0].doc_id, (*pending)[1].doc_id);

  const int64_t first = *newest - 2099;
  // Pending: the documents after the newest with a vector of the model.
  std::vector<store::EncodedVector> some;
  for (int64_t id = first; id < first + 1000; ++id) some.push_back({id, "some"});
  ASSERT_TRUE(index_->PutVectors("m", some).ok());
  EXPECT_EQ(*index_->CountPendingEmbeddings("m"), 1100);
  EXPECT_EQ(*index_->CountPendingEmbeddings("other"), 2100);

  // Every byte value survives; an empty vector means "no text", not a vector.
  const std::string bytes("\x00\x01\xff\x80'\"\\x", 8);
  std::vector<store::EncodedVector> vectors;
  for (int64_t id = first; id <= *newest; ++id) {
    vectors.push_back({id, id == first + 1 ? "" : bytes + std::to_string(id)});
  }
  vectors.push_back({*newest + 100, "no such document"});
  ASSERT_TRUE(index_->PutVectors("m", vectors).ok());
  EXPECT_EQ(*index_->VectorCount("m"), 2099);
  EXPECT_EQ(*index_->VectorCount("other"), 0);
  EXPECT_EQ(*index_->CountPendingEmbeddings("m"), 0);
  std::vector<int64_t> seen;
  bool bytes_ok = true;
  auto last = index_->ScanVectors("m", 0, [&](int64_t id, std::string_view v) {
    seen.push_back(id);
    bytes_ok = bytes_ok && v == bytes + std::to_string(id);
  });
  ASSERT_TRUE(last) << last.error().ToString();
  EXPECT_EQ(*last, *newest);
  EXPECT_EQ(seen.size(), 2099u);  // more than one page of 2048
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(std::count(seen.begin(), seen.end(), first + 1), 0);
  EXPECT_TRUE(bytes_ok);
  seen.clear();
  EXPECT_EQ(*index_->ScanVectors("m", *newest - 1,
                                 [&](int64_t id, std::string_view) { seen.push_back(id); }),
            *newest);
  EXPECT_EQ(seen, (std::vector<int64_t>{*newest}));
  EXPECT_EQ(*index_->ScanVectors("m", *newest, [](int64_t, std::string_view) {}), *newest);
  // Replacing keeps one vector per document and model.
  ASSERT_TRUE(index_->PutVectors("m", std::vector<store::EncodedVector>{{first, "new"}}).ok());
  EXPECT_EQ(*index_->VectorCount("m"), 2099);

  ASSERT_TRUE(index_->SetMeta("hnsw:m", "1 2 3").ok());
  ASSERT_TRUE(index_->SetMeta("learned", "7").ok());
  ASSERT_TRUE(index_->ClearVectors().ok());
  EXPECT_EQ(*index_->VectorCount("m"), 0);
  EXPECT_EQ(*index_->CountPendingEmbeddings("m"), 2100);
  EXPECT_FALSE(*index_->GetMeta("hnsw:m"));
  EXPECT_EQ(**index_->GetMeta("learned"), "7");
  // Not the database: a folder of this machine's cache (pg_vector_cache.h).
  EXPECT_NE(index_->FilesDirectory(), "");
}

TEST_F(PgIndex, MetaKeepsTheLastValueOfEachKey) {
  EXPECT_FALSE(*index_->GetMeta("k"));
  ASSERT_TRUE(index_->SetMeta("k", "1").ok());
  ASSERT_TRUE(index_->SetMeta("k", "2").ok());
  EXPECT_EQ(**index_->GetMeta("k"), "2");
  EXPECT_EQ(index_->SetMeta(std::string("a\0b", 3), "x").code(), StatusCode::kInvalidArgument);
}

TEST_F(PgIndex, ACodeWriteIsKeptOnceAndIsADocument) {
  auto first =
      index_->InsertCodeWrite(Write("src/engine.cc", "void Ignite() {}", 1000), {"Ignite"});
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_TRUE(first->recorded);
  EXPECT_EQ(first->functions, (std::vector<std::string>{"Ignite"}));
  auto again =
      index_->InsertCodeWrite(Write("src/engine.cc", "void Ignite() {}", 2000), {"Ignite"});
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->recorded);
  EXPECT_EQ(again->code_id, first->code_id);
  EXPECT_EQ(index_->CountEdits("src/engine.cc", "", 0, 0)->edits_30d, 1);
  EXPECT_EQ(index_->CountEdits("src/engine.cc", "Ignite", 0, 0)->edits_30d, 1);

  auto fragment = Write("src/engine.cc", "Ignite();", 3000);
  fragment.whole_file = false;
  ASSERT_TRUE(index_->InsertCodeWrite(fragment, {}));
  auto second = index_->InsertCodeWrite(Write("src/engine.cc", "void Ignite(int) {}", 2500), {});
  ASSERT_TRUE(second);
  EXPECT_EQ(**index_->LastWholeFile("src/engine.cc"), "void Ignite(int) {}");
  EXPECT_FALSE(*index_->LastWholeFile("src/other.cc"));

  // Found by a word of its path or its code, held to code writes.
  const auto by_path = Ranked(AllOf({"engine"}), {.events = false});
  EXPECT_EQ(by_path.size(), 3u);
  auto kept = index_->CodeWriteOfDocument(by_path.back());
  ASSERT_TRUE(kept && *kept);
  EXPECT_EQ((*kept)->file_path, "src/engine.cc");
  EXPECT_EQ((*kept)->session_id, "s");
  const std::string s = NewSessionId();
  AppendText(s, "a message about engine");
  SearchHit message;
  EXPECT_FALSE(*index_->CodeWriteOfDocument(DocOf(s, 1)));
  EXPECT_EQ(Ranked(AllOf({"engine"})).size(), 4u);
  auto doc_text = index_->ReadDocumentText(by_path.back());
  ASSERT_TRUE(doc_text && *doc_text);
  EXPECT_EQ((*doc_text)->substr(0, 14), "src/engine.cc\n");
  // NUL cannot be kept in PostgreSQL text: refused, not cut.
  auto nul = index_->InsertCodeWrite(Write("src/bin.cc", std::string("a\0b", 3), 1), {});
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(PgIndex, ChurnCountsEditsPerFileAndFunction) {
  constexpr int64_t kDay = 86'400'000;
  const int64_t now = 100 * kDay;
  auto write = [&](const std::string& path, const std::string& code, int64_t at,
                   std::vector<std::string> functions) {
    auto r = index_->InsertCodeWrite(Write(path, code, at), functions);
    ASSERT_TRUE(r && r->recorded) << path << code;
  };
  write("src/a.cc", "1", now - 40 * kDay, {"Old"});  // outside 30 days
  write("src/a.cc", "2", now - 10 * kDay, {"F", "G"});
  write("src/a.cc", "3", now - 1000, {"F"});
  write("src/b.cc", "1", now - 2000, {});
  write("src/b.cc", "2", now - 3000, {});
  write("lib/c.cc", "1", now - 5 * kDay, {"F"});
  auto a = index_->CountEdits("src/a.cc", "", now - 30 * kDay, now - kDay);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->edits_30d, 2);
  EXPECT_EQ(a->edits_24h, 1);
  EXPECT_EQ(index_->CountEdits("src/a.cc", "F", now - 30 * kDay, now - kDay)->edits_30d, 2);
  EXPECT_EQ(index_->CountEdits("src/a.cc", "Old", now - 30 * kDay, now - kDay)->edits_30d, 0);

  auto files = index_->CountHotspots("src/", false, 10, now - 30 * kDay, now - kDay);
  ASSERT_TRUE(files) << files.error().ToString();
  ASSERT_EQ(files->size(), 2u);
  // Two each: b.cc first, with two in the last day against a.cc's one.
  EXPECT_EQ((*files)[0].file_path, "src/b.cc");
  EXPECT_EQ((*files)[0].edits_24h, 2);
  EXPECT_EQ((*files)[1].file_path, "src/a.cc");
  EXPECT_EQ((*files)[1].edits_30d, 2);
  EXPECT_EQ((*files)[1].function, "");
  auto functions = index_->CountHotspots("", true, 10, now - 30 * kDay, now - kDay);
  ASSERT_TRUE(functions);
  ASSERT_EQ(functions->size(), 3u);
  EXPECT_EQ((*functions)[0].function, "F");
  EXPECT_EQ((*functions)[0].file_path, "src/a.cc");
  EXPECT_EQ((*functions)[0].edits_30d, 2);
  EXPECT_EQ((*functions)[1].file_path, "lib/c.cc");  // 1 each, then by path
  EXPECT_EQ((*functions)[2].function, "G");
  EXPECT_EQ(index_->CountHotspots("", true, 1, now - 30 * kDay, now - kDay)->size(), 1u);
}

TEST_F(PgIndex, FirstSightingIsTrueForExactlyOneOfTwoRacingConnections) {
  auto other_store = OpenNamespace("default");
  ASSERT_TRUE(other_store);
  auto other = OpenIndex(other_store.get());
  ASSERT_TRUE(other);
  for (int round = 0; round < 20; ++round) {
    const std::string key = "write-" + std::to_string(round);
    std::atomic<int> ready{0};
    bool firsts[2] = {false, false};
    auto race = [&](IndexBackend* index, int slot) {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      auto r = index->FirstSighting(key, 1000 + round, 1000);
      EXPECT_TRUE(r) << r.error().ToString();
      firsts[slot] = r && *r;
    };
    std::thread t1(race, index_.get(), 0);
    std::thread t2(race, other.get(), 1);
    t1.join();
    t2.join();
    EXPECT_EQ(firsts[0] + firsts[1], 1) << key;
    EXPECT_FALSE(*index_->FirstSighting(key, 5000, 1000));
  }
  // Only the newest `capacity` keys are kept: the oldest is new again.
  ASSERT_TRUE(*index_->FirstSighting("k1", 10'000, 2));
  ASSERT_TRUE(*index_->FirstSighting("k2", 10'001, 2));
  ASSERT_TRUE(*index_->FirstSighting("k3", 10'002, 2));
  EXPECT_FALSE(*index_->FirstSighting("k3", 10'003, 2));
  EXPECT_FALSE(*index_->FirstSighting("k2", 10'003, 2));
  EXPECT_TRUE(*index_->FirstSighting("k1", 10'004, 2));
}

TEST_F(PgIndex, ToolCallsAfterPagesThroughMessagesWithToolCalls) {
  ASSERT_TRUE(store_->CreateSession({.id = "s", .metadata_json = R"({"cwd":"/repo"})"}));
  auto call = [&](const std::string& name, const std::string& args, const std::string& output) {
    Message m;
    m.role = Role::kAssistant;
    m.parts = {Part::ToolCall("c", name, args), Part::ToolResult("c", output, false)};
    ASSERT_TRUE(store_->Append("s", m));
  };
  now_ms_ = 111;
  call("Write", R"({"file_path":"a.cc","content":"x"})", "ok");
  AppendText("s", "no tools here");
  Message two;
  two.role = Role::kAssistant;
  two.parts = {Part::ToolCall("c1", "Edit", R"({"n":1})"), Part::ToolCall("c2", "Read", "{}")};
  ASSERT_TRUE(store_->Append("s", two));
  // An output holding "\u0000" once escaped: jsonb would refuse the body.
  call("Write", R"({"file_path":"b.cc"})", std::string("bad\0byte", 8));

  auto page = index_->ToolCallsAfter(0, 2);
  ASSERT_TRUE(page) << page.error().ToString();
  ASSERT_EQ(page->size(), 3u);  // two messages: one call, then two
  EXPECT_EQ((*page)[0].name, "Write");
  EXPECT_EQ((*page)[0].arguments, R"({"file_path":"a.cc","content":"x"})");
  EXPECT_EQ((*page)[0].session_id, "s");
  EXPECT_EQ((*page)[0].project, "/repo");
  EXPECT_EQ((*page)[0].time_ms, 111);
  EXPECT_EQ((*page)[1].name, "Edit");
  EXPECT_EQ((*page)[2].name, "Read");
  EXPECT_EQ((*page)[1].doc_id, (*page)[2].doc_id);
  EXPECT_LT((*page)[0].doc_id, (*page)[1].doc_id);
  auto rest = index_->ToolCallsAfter(page->back().doc_id, 2);
  ASSERT_TRUE(rest) << rest.error().ToString();
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].arguments, R"({"file_path":"b.cc"})");
  EXPECT_TRUE(index_->ToolCallsAfter((*rest)[0].doc_id, 2)->empty());
}

TEST_F(PgIndex, AHugeMessageIsStoredAndFoundByItsFirstWords) {
  // 2 MiB: distinct short words (the densest tsvector), a 3000-byte word.
  std::string text = "opening words of the giant ";
  text += std::string(3000, 'w') + " ";
  for (int i = 0; text.size() < 2 * 1024 * 1024; ++i) text += "x" + std::to_string(i) + " ";
  const std::string s = NewSessionId();
  AppendText(s, text);
  const int64_t doc = DocOf(s, 1);
  EXPECT_EQ(Ranked(AllOf({"giant"})), (std::vector<int64_t>{doc}));
  EXPECT_EQ(Ranked(AllOf({"x100"})), (std::vector<int64_t>{doc}));
  auto snippet = index_->MatchSnippet(AllOf({"giant"}), doc);
  ASSERT_TRUE(snippet) << snippet.error().ToString();
  ASSERT_FALSE(snippet->highlights.empty());
  EXPECT_EQ(snippet->text.substr(snippet->highlights[0].first, 5), "giant");
  auto read = index_->ReadDocumentText(doc);
  ASSERT_TRUE(read && *read);
  EXPECT_EQ((*read)->size(), text.size());  // the document is whole; only its index is capped
  // A restore of the same size goes through the same path.
  auto events = store_->ReadEvents(s, 1, -1);
  ASSERT_TRUE(events);
  Session copy = *store_->GetSession(s);
  copy.id = "copy";
  std::vector<Event> renamed = *events;
  for (Event& e : renamed) {
    e.session_id = "copy";
    e.id.clear();
    e.message.id.clear();
  }
  Status restored = store_->RestoreSession(copy, renamed, nullptr);
  ASSERT_TRUE(restored.ok()) << restored.ToString();
  EXPECT_EQ(Ranked(AllOf({"giant"})).size(), 2u);
}

TEST_F(PgIndex, NamespacesNeverSeeEachOthersIndex) {
  auto a_store = OpenNamespace("team-a");
  auto b_store = OpenNamespace("team-b");
  ASSERT_TRUE(a_store && b_store);
  auto a = OpenIndex(a_store.get());
  auto b = OpenIndex(b_store.get());
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a_store->CreateSession({.id = "same"}));
  ASSERT_TRUE(b_store->CreateSession({.id = "same"}));
  Message m;
  m.parts = {Part::Text("classified plans"), Part::ToolCall("c", "Write", R"({"x":1})")};
  ASSERT_TRUE(a_store->Append("same", m));
  auto write = a->InsertCodeWrite(Write("src/plans.cc", "classified", 1000), {"F"});
  ASSERT_TRUE(write && write->recorded);
  const int64_t a_newest = *a->NewestDocument();
  ASSERT_EQ(a_newest, 2);
  ASSERT_TRUE(a->PutVectors("m", std::vector<store::EncodedVector>{{1, "va"}, {2, "vb"}}).ok());
  ASSERT_TRUE(a->SetMeta("learned", "2").ok());
  ASSERT_TRUE(*a->FirstSighting("hook-key", 1000, 100));

  // b sees nothing of a's, by query or by a's document ids.
  EXPECT_TRUE(Ranked(AllOf({"classified"}), {}, b.get()).empty());
  EXPECT_TRUE(b->DocsPassingFilter({.session_id = "same"})->doc_ids.empty());
  for (int64_t id : {int64_t{1}, int64_t{2}}) {
    SearchHit hit;
    EXPECT_FALSE(*b->LoadHitDetails(id, &hit));
    EXPECT_FALSE(*b->ReadDocumentText(id));
    EXPECT_TRUE(b->MatchSnippet(AllOf({"classified"}), id)->text.empty());
    EXPECT_FALSE(*b->CodeWriteOfDocument(id));
  }
  EXPECT_EQ(*b->NewestDocument(), 0);
  EXPECT_EQ(*b->VectorCount("m"), 0);
  EXPECT_EQ(*b->ScanVectors("m", 0, [](int64_t, std::string_view) { ADD_FAILURE(); }), 0);
  EXPECT_EQ(*b->CountPendingEmbeddings("m"), 0);
  EXPECT_TRUE(b->PendingDocuments("m", 10)->empty());
  EXPECT_FALSE(*b->GetMeta("learned"));
  EXPECT_FALSE(*b->LastWholeFile("src/plans.cc"));
  EXPECT_EQ(b->CountEdits("src/plans.cc", "", 0, 0)->edits_30d, 0);
  EXPECT_TRUE(b->CountHotspots("", false, 10, 0, 0)->empty());
  EXPECT_TRUE(b->ToolCallsAfter(0, 10)->empty());
  // Vectors b puts on a's document ids land nowhere.
  ASSERT_TRUE(b->PutVectors("m", std::vector<store::EncodedVector>{{1, "vx"}}).ok());
  EXPECT_EQ(*b->VectorCount("m"), 0);
  // The same key, the same write: new to b.
  EXPECT_TRUE(*b->FirstSighting("hook-key", 1000, 100));
  auto b_write = b->InsertCodeWrite(Write("src/plans.cc", "classified", 1000), {});
  ASSERT_TRUE(b_write);
  EXPECT_TRUE(b_write->recorded);
  // b clearing and rebuilding its index leaves a's alone.
  ASSERT_TRUE(b->ClearVectors().ok());
  ASSERT_TRUE(b->RebuildKeywordIndex().ok());
  EXPECT_EQ(*a->VectorCount("m"), 2);
  EXPECT_EQ(**a->GetMeta("learned"), "2");
  EXPECT_EQ(Ranked(AllOf({"classified"}), {}, a.get()).size(), 2u);
  EXPECT_EQ(Ranked(AllOf({"classified"}), {}, b.get()).size(), 1u);  // b's own write
  EXPECT_FALSE(*a->FirstSighting("hook-key", 2000, 100));
}

TEST_F(PgIndex, RebuildingTheKeywordIndexRestoresLostDocuments) {
  const std::string s = NewSessionId();
  AppendText(s, "recoverable words");
  ASSERT_TRUE(index_->InsertCodeWrite(Write("src/r.cc", "recoverable", 1), {}));
  pg_->Query("DELETE FROM search_docs");
  pg_->Query("INSERT INTO search_docs (namespace, session_id, seq) VALUES ('default', 'x', 9)");
  EXPECT_TRUE(Ranked(AllOf({"recoverable"})).empty());
  ASSERT_TRUE(index_->RebuildKeywordIndex().ok());
  EXPECT_EQ(Ranked(AllOf({"recoverable"})).size(), 2u);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_docs"), "2");  // the stray one is gone
}

// A version 2 store: the current store with what later versions added
// taken away (the tables and trigger functions of the 2 -> 3 migration, the
// trash column and ledger of 3 -> 4, ..., the file versions of 8 -> 9),
// which is exactly what version 2 wrote.
TEST_F(PgIndex, AVersion2StoreIsSearchableOnceItUpgrades) {
  ASSERT_TRUE(store_->CreateSession({.id = "old"}));
  AppendText("old", "legacy conversation");
  Message m;
  m.role = Role::kAssistant;
  m.parts = {Part::ToolCall("c", "grep_tool", R"({"pattern":"obsolete"})")};
  ASSERT_TRUE(store_->Append("old", m));
  auto other = OpenNamespace("team-b");
  ASSERT_TRUE(other && other->CreateSession({.id = "old"}));
  Message b_message;
  b_message.parts = {Part::Text("legacy of team b")};
  ASSERT_TRUE(other->Append("old", b_message));
  other.reset();
  index_.reset();
  store_.reset();
  pg_->Query(
      "ALTER TABLE blobs DROP COLUMN location; DROP TABLE blob_uploads;"
      "ALTER TABLE usage_totals DROP COLUMN cache_write_tokens; DROP TABLE usage_days;"
      "ALTER TABLE blobs DROP COLUMN digest; ALTER TABLE blob_refs DROP COLUMN digest;"
      "DROP TABLE forget_ledger; ALTER TABLE sessions DROP COLUMN trashed_ms;"
      "DROP TABLE file_versions;"
      "DROP TABLE search_docs, embeddings, code_writes, code_edits, hook_seen, index_meta;"
      "DROP FUNCTION sessiondb_events_removed, sessiondb_events_changed,"
      " sessiondb_code_writes_removed, sessiondb_search_docs_removed CASCADE;"
      "UPDATE sessiondb_meta SET value = '2' WHERE key = 'schema_version'");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'events'::regclass"
                       " AND NOT tgisinternal"),
            "0");

  Reopen();
  EXPECT_EQ(pg_->Query("SELECT value FROM sessiondb_meta WHERE key = 'schema_version'"),
            std::to_string(kPostgresSchemaVersion));
  index_ = OpenIndex(store_.get());
  ASSERT_TRUE(index_);
  EXPECT_EQ(Ranked(AllOf({"legacy"})), (std::vector<int64_t>{DocOf("old", 1)}));
  EXPECT_EQ(Ranked(AllOf({"obsolete"})), (std::vector<int64_t>{DocOf("old", 2)}));
  // The other namespace's events got documents too, indexed when it opens.
  auto b = OpenNamespace("team-b");
  ASSERT_TRUE(b);
  auto b_index = OpenIndex(b.get());
  EXPECT_EQ(Ranked(AllOf({"legacy"}), {}, b_index.get()).size(), 1u);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_docs WHERE tsv IS NULL"), "0");
  // New appends are indexed as they are written.
  AppendText("old", "fresh words");
  EXPECT_EQ(Ranked(AllOf({"fresh"})).size(), 1u);
}

}  // namespace
}  // namespace sessiondb::testing
