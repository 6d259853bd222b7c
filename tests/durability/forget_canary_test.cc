// Erasure that proves itself (forget.h, docs/retention.md): unique words
// and image bytes planted in every place a session's content can be (text,
// reasoning, tool input and output, title, metadata, a fork, a compaction
// summary, a draft, a code write, embeddings and the saved vector index),
// then erased; not one may be left in any file of the embedded store, nor in
// any row or heap file of the PostgreSQL store after its own cleanup. Slow:
// PostgreSQL's cleanup rewrites every table (VACUUM FULL) and the scan reads
// the database's files.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sessiondb/forget.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "store/canary_scan.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class ForgetCanary : public BackendTest {
 protected:
  Message TextMessage(Role role, const std::string& text) {
    Message m;
    m.role = role;
    m.parts.push_back(Part::Text(text));
    return m;
  }

  int64_t Append(const std::string& session, const Message& m) {
    now_ms_ += 1000;
    auto r = store_->Append(session, m);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? r->seq : 0;
  }

  std::unique_ptr<SearchIndex> Index() {
    SearchOptions options;
    options.embedder.from_environment = false;
    options.approximate_threshold = 1;  // an HNSW file on disk however small the store
    auto index = SearchIndex::Open(*store_, options);
    EXPECT_TRUE(index) << index.error().ToString();
    return index ? std::move(*index) : nullptr;
  }

  std::vector<std::string> Hits(const std::string& q) {
    auto index = Index();
    if (!index) return {};
    auto r = index->Search({.query = q, .mode = SearchMode::kKeyword});
    EXPECT_TRUE(r) << r.error().ToString();
    std::vector<std::string> out;
    if (!r) return out;
    for (const SearchHit& h : r->hits) out.push_back(h.session_id + "#" + std::to_string(h.seq));
    return out;
  }

  std::vector<LedgerEntry> Ledger() {
    auto l = store_->ReadLedger({});
    EXPECT_TRUE(l) << l.error().ToString();
    return l ? *l : std::vector<LedgerEntry>{};
  }
};

// Plants a unique word in every place a session's content can be, erases,
// then looks for each word in every byte the store keeps.
TEST_P(ForgetCanary, ErasureLeavesNoByteOfTheErasedDataInTheStore) {
  const std::string png = MakePng(6, 6, "canarypngbytes0f9e");
  auto created = store_->CreateSession(
      {.id = "secret",
       .title = "canarytitle1q2w",
       .metadata_json = R"({"project":"/src/canaryproj","note":"canarymeta3e4r"})"});
  ASSERT_TRUE(created) << created.error().ToString();
  Message user = TextMessage(Role::kUser, "canarytext5t6y about the plan");
  user.parts.push_back(Part::ImageFromBytes(png, "image/png"));
  Append("secret", user);
  Message assistant;
  assistant.role = Role::kAssistant;
  assistant.parts.push_back(Part::Reasoning("canaryreason7u8i thinking"));
  assistant.parts.push_back(Part::ToolCall("call1", "search", R"({"q":"canarytoolin9o0p"})"));
  Append("secret", assistant);
  Message tool;
  tool.role = Role::kTool;
  tool.parts.push_back(Part::ToolResult("call1", "canarytoolout1a2s found"));
  Append("secret", tool);
  auto compaction = store_->Compact(
      "secret", {.from_seq = 1, .to_seq = 3, .summary = "canarysummary3d4f of it all"});
  ASSERT_TRUE(compaction) << compaction.error().ToString();
  auto draft = store_->OpenDraft("secret", Role::kAssistant, "m");
  ASSERT_TRUE(draft);
  draft->text = "canarydraft5g6h streaming";
  ASSERT_TRUE(store_->SaveDraft(*draft).ok());
  auto fork = store_->ForkSession("secret", 3, {.id = "secretfork"});
  ASSERT_TRUE(fork);
  Append("secretfork", TextMessage(Role::kUser, "canaryfork7j8k continued"));
  {
    MemoryOptions memory_options;
    memory_options.search.embedder.from_environment = false;
    auto memory = CodeMemory::Open(*store_, memory_options);
    ASSERT_TRUE(memory) << memory.error().ToString();
    auto wrote = (*memory)->RecordWrite({.file_path = "/src/canaryproj/a.py",
                                         .new_code = "def canarycode9l0z():\n    return 1\n",
                                         .session_id = "secret",
                                         .project = "/src/canaryproj"});
    ASSERT_TRUE(wrote) << wrote.error().ToString();
  }
  // What stays, to show the scan finds words that are there.
  const std::string keep = NewSessionId("keep");
  Append(keep, TextMessage(Role::kUser, "survivorword stays"));
  {
    auto index = Index();
    ASSERT_TRUE(index);
    ASSERT_TRUE(index->IndexPending());
    auto embedded_docs = index->Embed();
    ASSERT_TRUE(embedded_docs) << embedded_docs.error().ToString();
    ASSERT_TRUE(index->BuildVectorIndex().ok());
    auto vectors = index->VectorCount();
    ASSERT_TRUE(vectors);
    EXPECT_GT(*vectors, 0);
  }

  const std::vector<std::string> canaries = {
      "canarytitle1q2w",  "canarymeta3e4r",    "canarytext5t6y",    "canaryreason7u8i",
      "canarytoolin9o0p", "canarytoolout1a2s", "canarysummary3d4f", "canarydraft5g6h",
      "canaryfork7j8k",   "canarycode9l0z",    "canarypngbytes0f9e"};
  std::vector<std::string> needles = canaries;
  if (!embedded()) {
    // bytea reads back as hex in a row's text.
    for (const std::string& c : canaries) needles.push_back(HexOf(c));
  }
  needles.push_back("survivorword");
  // Before: each is somewhere (else the scan proves nothing); in an
  // encrypted namespace nowhere, even before (encryption_canary_test.cc).
  for (const auto& [needle, where] : CanaryTraces(StoreDir(), pg_.get(), canaries)) {
    EXPECT_EQ(where.empty(), encrypted()) << needle << ::testing::PrintToString(where);
  }

  auto receipt = store_->Erase({.session_ids = {"secret"}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(std::set<std::string>(receipt->sessions.begin(), receipt->sessions.end()),
            (std::set<std::string>{"secret", "secretfork"}));
  EXPECT_EQ(receipt->blobs.size(), 1u);
  std::map<std::string, int64_t> counts(receipt->counts.begin(), receipt->counts.end());
  EXPECT_EQ(counts["sessions"], 2);
  EXPECT_EQ(counts["messages"], 4);
  EXPECT_EQ(counts["drafts"], 1);
  EXPECT_EQ(counts["code_writes"], 1);
  EXPECT_EQ(counts["blobs"], 1);
  EXPECT_GT(counts["embeddings"], 0);
  EXPECT_GT(counts["search_documents"], 0);

  for (const auto& [needle, where] : CanaryTraces(StoreDir(), pg_.get(), needles)) {
    if (needle == "survivorword") {
      EXPECT_EQ(where.empty(), encrypted()) << "what was not erased stays";
    } else {
      EXPECT_TRUE(where.empty()) << needle << " is still in " << ::testing::PrintToString(where);
    }
  }
  EXPECT_TRUE(Hits("survivorword").size() == 1u);
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);
  const LedgerEntry last = Ledger().front();
  EXPECT_EQ(last.action, "erase");
  EXPECT_EQ(last.receipt_id, receipt->id);
  EXPECT_EQ(last.receipt_digest, receipt->digest);
  EXPECT_EQ(last.counts, receipt->counts);
}

SESSIONDB_FOR_EACH_BACKEND(ForgetCanary);

// A transaction begun before the erasure: while it runs, VACUUM FULL keeps
// the erased rows as "recently dead" (pg_erasure_horizon.h). In another
// database of the same server it holds them with a transaction id; in the
// store's own, a snapshot is enough.
class OlderTransaction {
 public:
  enum Kind { kTransactionId, kSnapshot };
  OlderTransaction(const std::string& uri, Kind kind) : conn_(PQconnectdb(uri.c_str())) {
    EXPECT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
    if (kind == kTransactionId) {
      Exec("BEGIN");
      Exec("SELECT pg_current_xact_id()");
    } else {
      Exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
      Exec("SELECT count(*) FROM pg_class");
    }
  }
  ~OlderTransaction() { PQfinish(conn_); }
  OlderTransaction(const OlderTransaction&) = delete;
  OlderTransaction& operator=(const OlderTransaction&) = delete;
  void Commit() { Exec("COMMIT"); }
  int Pid() const { return PQbackendPID(conn_); }

 private:
  void Exec(const char* sql) {
    PGresult* r = PQexec(conn_, sql);
    EXPECT_TRUE(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
        << sql << ": " << PQerrorMessage(conn_);
    PQclear(r);
  }
  PGconn* conn_;
};

class ErasureHorizon : public PostgresStoreTest {
 protected:
  // A session whose title and text hold `word`, and a second that stays.
  void Plant(const std::string& word) {
    auto created = store_->CreateSession({.id = "secret", .title = word + "title"});
    ASSERT_TRUE(created) << created.error().ToString();
    AppendText("secret", word + "text in a message");
    AppendText(NewSessionId("keep"), "survivorword stays");
  }
  std::vector<std::string> Traces(const std::string& word) {
    std::vector<std::string> all;
    for (const auto& [needle, where] :
         CanaryTraces(StoreDir(), pg_.get(), {word + "title", word + "text"})) {
      all.insert(all.end(), where.begin(), where.end());
    }
    return all;
  }

  // Erases "secret" while `older` runs, committing it after 700 ms: the
  // erasure succeeds and leaves no byte of `word`.
  void EraseWhileOlderRuns(OlderTransaction& older, const std::string& word) {
    std::thread ends_soon([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      older.Commit();
    });
    auto receipt = store_->Erase({.session_ids = {"secret"}});
    ends_soon.join();
    ASSERT_TRUE(receipt) << receipt.error().ToString();
    EXPECT_EQ(receipt->sessions, std::vector<std::string>{"secret"});
    EXPECT_EQ(Traces(word), std::vector<std::string>{});
    auto check = store_->VerifyErased(*receipt);
    ASSERT_TRUE(check);
    EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);
  }
};

// The scrub waits for a transaction older than the erasure, then vacuums:
// no byte left, though that transaction ran in another database.
TEST_F(ErasureHorizon, ScrubWaitsForOlderTransactionsThenLeavesNoByte) {
  Plant("canaryhorizon4k2m");
  OlderTransaction older(pg_->cluster_uri(), OlderTransaction::kTransactionId);
  EraseWhileOlderRuns(older, "canaryhorizon4k2m");
}

TEST_F(ErasureHorizon, ScrubWaitsForAnOlderSnapshotInTheStoresDatabase) {
  Plant("canarysnapshot6v3n");
  OlderTransaction older(pg_->uri(), OlderTransaction::kSnapshot);
  EraseWhileOlderRuns(older, "canarysnapshot6v3n");
}

// An older transaction that outlasts the wait (busy_timeout_ms): the erasure
// stands (no row left, the ledger has it), and the error names the
// transaction and what to do once it ends; the store goes on serving.
TEST_F(ErasureHorizon, OlderTransactionPastTheBoundIsNamedAndTheErasureStands) {
  StoreOptions options = Options();
  options.busy_timeout_ms = 300;
  Reopen(options);
  Plant("canarystuck8p1q");
  OlderTransaction older(pg_->cluster_uri(), OlderTransaction::kTransactionId);
  auto receipt = store_->Erase({.session_ids = {"secret"}});
  ASSERT_FALSE(receipt);
  EXPECT_EQ(receipt.error().code(), StatusCode::kBusy);
  const std::string& message = receipt.error().message();
  EXPECT_NE(message.find("the erasure committed (receipt "), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(older.Pid())), std::string::npos) << message;
  EXPECT_NE(message.find("VACUUM FULL"), std::string::npos) << message;
  auto gone = store_->GetSession("secret");
  EXPECT_FALSE(gone);
  for (const std::string& where : Traces("canarystuck8p1q")) {
    EXPECT_EQ(where.rfind("table ", 0), std::string::npos) << "a row is left in " << where;
  }
  auto ledger = store_->ReadLedger({});
  ASSERT_TRUE(ledger) << ledger.error().ToString();
  ASSERT_FALSE(ledger->empty());
  EXPECT_EQ(ledger->front().action, "erase");
  older.Commit();
  AppendText(NewSessionId("after"), "still serving");
}

}  // namespace
}  // namespace sessiondb::testing
