// Forgetting on purpose (forget.h): the trash round trip, erasure that leaves
// no byte of what it erased in any file of the store (the canary scans), the
// receipt and its check, the ledger. Both backends.
#include "sessiondb/forget.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "store/canary_scan.h"
#include "store_fixture.h"

namespace sessiondb::testing {
namespace {

class Forgetting : public BackendTest {
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

  // The (session, seq) of every keyword hit for `q`.
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

TEST_P(Forgetting, TrashHidesASessionAndRestoreBringsItBackExactly) {
  auto created = store_->CreateSession(
      {.id = "trashme", .title = "", .metadata_json = R"({"project":"/src/app"})"});
  ASSERT_TRUE(created) << created.error().ToString();
  Message first = TextMessage(Role::kUser, "the zebrafish habitat question");
  first.parts.push_back(Part::ImageFromBytes(MakePng(4, 4, "trash-image"), "image/png"));
  Append("trashme", first);
  Message answer = TextMessage(Role::kAssistant, "zebrafish like warm water");
  answer.provider = "openai";
  answer.model = "gpt";
  answer.usage = Usage{.input_tokens = 10, .output_tokens = 5};
  Append("trashme", answer);
  auto draft = store_->OpenDraft("trashme", Role::kAssistant, "gpt");
  ASSERT_TRUE(draft);
  draft->text = "half an answer";
  ASSERT_TRUE(store_->SaveDraft(*draft).ok());
  ASSERT_TRUE(store_->SetActiveSession("trashme").ok());

  auto before = store_->GetSession("trashme");
  ASSERT_TRUE(before);
  auto messages_before = store_->ReadMessages("trashme");
  ASSERT_TRUE(messages_before);
  auto usage_before = store_->GetUsage("trashme");
  ASSERT_TRUE(usage_before);
  ASSERT_EQ(Hits("zebrafish").size(), 2u);
  const size_t blobs = BlobCount();

  now_ms_ += 5000;
  const int64_t trashed_at = now_ms_;
  ASSERT_TRUE(store_->TrashSession("trashme").ok());
  EXPECT_EQ(store_->GetSession("trashme").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadMessages("trashme").error().code(), StatusCode::kNotFound);
  auto listed = store_->ListSessions({});
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->sessions.empty());
  auto trash = store_->ListSessions({.trash = true});
  ASSERT_TRUE(trash);
  ASSERT_EQ(trash->sessions.size(), 1u);
  EXPECT_EQ(trash->sessions[0].id, "trashme");
  EXPECT_EQ(trash->sessions[0].trashed_ms, trashed_at);
  EXPECT_TRUE(Hits("zebrafish").empty());
  auto active = store_->GetActiveSession();
  ASSERT_TRUE(active);
  EXPECT_FALSE(active->has_value()) << "trash clears the active mark";
  EXPECT_EQ(store_->TrashSession("trashme").code(), StatusCode::kNotFound);
  EXPECT_EQ(BlobCount(), blobs) << "the trash keeps the blobs";

  auto back = store_->RestoreFromTrash("trashme");
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->id, before->id);
  EXPECT_EQ(back->title, before->title);
  EXPECT_EQ(back->preview, before->preview);
  EXPECT_EQ(back->updated_ms, before->updated_ms);
  EXPECT_EQ(back->message_count, before->message_count);
  EXPECT_EQ(back->metadata_json, before->metadata_json);
  EXPECT_EQ(back->trashed_ms, 0);
  auto messages_after = store_->ReadMessages("trashme");
  ASSERT_TRUE(messages_after);
  ASSERT_EQ(messages_after->size(), messages_before->size());
  for (size_t i = 0; i < messages_after->size(); ++i) {
    EXPECT_EQ((*messages_after)[i].Text(), (*messages_before)[i].Text());
    EXPECT_EQ((*messages_after)[i].parts.size(), (*messages_before)[i].parts.size());
  }
  auto image = store_->ReadBlob((*messages_after)[0].parts[1].resource->content_sha256);
  EXPECT_TRUE(image) << "the image is readable again";
  auto drafts = store_->ListDrafts("trashme");
  ASSERT_TRUE(drafts);
  ASSERT_EQ(drafts->size(), 1u);
  EXPECT_EQ((*drafts)[0].text, "half an answer");
  auto usage_after = store_->GetUsage("trashme");
  ASSERT_TRUE(usage_after);
  EXPECT_EQ(usage_after->total.input_tokens, usage_before->total.input_tokens);
  EXPECT_EQ(Hits("zebrafish").size(), 2u);
  EXPECT_EQ(store_->RestoreFromTrash("trashme").error().code(), StatusCode::kNotFound);

  const std::vector<LedgerEntry> ledger = Ledger();
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger[0].action, "restore");
  EXPECT_EQ(ledger[1].action, "trash");
  EXPECT_EQ(ledger[1].ts_ms, trashed_at);
  EXPECT_EQ(ledger[1].scope, "session trashme");
  EXPECT_FALSE(ledger[1].actor.empty());
  EXPECT_GT(ledger[0].id, ledger[1].id);
}

TEST_P(Forgetting, ForksOfATrashedSessionKeepReadingAndEmptyTrashKeepsItForThem) {
  const std::string parent = NewSessionId("parent");
  Append(parent, TextMessage(Role::kUser, "inherited words"));
  Append(parent, TextMessage(Role::kAssistant, "more inherited words"));
  auto fork = store_->ForkSession(parent, 2, {.id = "child"});
  ASSERT_TRUE(fork) << fork.error().ToString();
  ASSERT_TRUE(store_->TrashSession(parent).ok());
  auto read = store_->ReadMessages("child");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read->size(), 2u);

  // Deleting the fork must not take the trashed parent with it: it stays
  // restorable until the trash is emptied.
  ASSERT_TRUE(store_->DeleteSession("child").ok());
  auto trash = store_->ListSessions({.trash = true});
  ASSERT_TRUE(trash);
  ASSERT_EQ(trash->sessions.size(), 1u);
  ASSERT_TRUE(store_->RestoreFromTrash(parent));

  auto fork2 = store_->ForkSession(parent, 1, {.id = "child2"});
  ASSERT_TRUE(fork2);
  ASSERT_TRUE(store_->TrashSession(parent).ok());
  now_ms_ += 1000;
  auto emptied = store_->EmptyTrash(now_ms_);
  ASSERT_TRUE(emptied) << emptied.error().ToString();
  EXPECT_TRUE(emptied->sessions.empty());
  EXPECT_EQ(emptied->kept_for_forks, std::vector<std::string>{parent});
  auto after = store_->ListSessions({.trash = true});
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->sessions.empty()) << "hidden for good, no longer restorable";
  EXPECT_EQ(store_->RestoreFromTrash(parent).error().code(), StatusCode::kNotFound);
  auto still = store_->ReadMessages("child2");
  ASSERT_TRUE(still);
  EXPECT_EQ(still->size(), 1u);
  // The last fork goes: the cascade erases the parent kept for it (its row
  // too: an erasure no longer finds it).
  ASSERT_TRUE(store_->DeleteSession("child2").ok());
  EXPECT_EQ(store_->Erase({.session_ids = {parent}}).error().code(), StatusCode::kNotFound);
}

TEST_P(Forgetting, EmptyTrashErasesWhatWasTrashedBeforeTheCutoff) {
  const std::string old_one = NewSessionId("old");
  Append(old_one, TextMessage(Role::kUser, "quokkaold words"));
  ASSERT_TRUE(store_->TrashSession(old_one).ok());
  const int64_t cutoff = now_ms_ + 1;
  now_ms_ += 10'000;
  const std::string new_one = NewSessionId("new");
  Append(new_one, TextMessage(Role::kUser, "quokkanew words"));
  ASSERT_TRUE(store_->TrashSession(new_one).ok());

  auto receipt = store_->EmptyTrash(cutoff);
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(receipt->sessions, std::vector<std::string>{old_one});
  EXPECT_FALSE(RawLogContains("quokkaold"));
  EXPECT_EQ(RawLogContains("quokkanew"), !encrypted()) << "kept (sealed when encrypted)";
  auto trash = store_->ListSessions({.trash = true});
  ASSERT_TRUE(trash);
  ASSERT_EQ(trash->sessions.size(), 1u);
  EXPECT_EQ(trash->sessions[0].id, new_one);
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);
  EXPECT_EQ(Ledger().front().action, "empty-trash");
  EXPECT_EQ(Ledger().front().receipt_id, receipt->id);
}

TEST_P(Forgetting, ErasingMessagesLeavesStubsAndTheRestOfTheSession) {
  const std::string id = NewSessionId("msgs");
  Append(id, TextMessage(Role::kUser, "harmless opening line"));
  Message secret = TextMessage(Role::kAssistant, "wombatsecret password is here");
  secret.parts.push_back(Part::ImageFromBytes(MakePng(3, 3, "msg-image"), "image/png"));
  const int64_t seq = Append(id, secret);
  Append(id, TextMessage(Role::kUser, "harmless closing line"));

  auto receipt = store_->Erase({.messages = {{id, seq}}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_TRUE(receipt->sessions.empty());
  EXPECT_EQ(receipt->messages, (std::vector<MessageRef>{{id, seq}}));
  EXPECT_EQ(receipt->blobs.size(), 1u);
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages);
  ASSERT_EQ(messages->size(), 3u);
  EXPECT_TRUE((*messages)[1].pruned);
  EXPECT_TRUE((*messages)[1].parts.empty());
  EXPECT_EQ((*messages)[2].Text(), "harmless closing line");
  EXPECT_FALSE(RawLogContains("wombatsecret"));
  EXPECT_TRUE(Hits("wombatsecret").empty());
  EXPECT_EQ(Hits("harmless").size(), 2u);
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);

  EXPECT_EQ(store_->Erase({.messages = {{id, 99}}}).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Erase({.session_ids = {"nobody"}}).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Erase({}).error().code(), StatusCode::kInvalidArgument);
}

TEST_P(Forgetting, ErasesByProjectByDateAndEverything) {
  ASSERT_TRUE(store_->CreateSession({.id = "a1", .metadata_json = R"({"project":"/src/app"})"}));
  Append("a1", TextMessage(Role::kUser, "alphaword one"));
  ASSERT_TRUE(store_->CreateSession({.id = "a2", .metadata_json = R"({"cwd":"/src/app/lib"})"}));
  Append("a2", TextMessage(Role::kUser, "alphaword two"));
  ASSERT_TRUE(
      store_->CreateSession({.id = "b1", .metadata_json = R"({"project":"/src/application"})"}));
  Append("b1", TextMessage(Role::kUser, "betaword"));
  auto by_project = store_->Erase({.project = "/src/app/"});
  ASSERT_TRUE(by_project) << by_project.error().ToString();
  EXPECT_EQ(by_project->sessions, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_FALSE(RawLogContains("alphaword"));
  EXPECT_EQ(RawLogContains("betaword"), !encrypted()) << "kept (sealed when encrypted)";

  const int64_t boundary = now_ms_ + 1;
  now_ms_ += 100'000;
  ASSERT_TRUE(store_->CreateSession({.id = "c1"}));
  Append("c1", TextMessage(Role::kUser, "gammaword"));
  auto by_date = store_->Erase({.before_ms = boundary});
  ASSERT_TRUE(by_date) << by_date.error().ToString();
  EXPECT_EQ(by_date->sessions, std::vector<std::string>{"b1"});
  EXPECT_EQ(RawLogContains("gammaword"), !encrypted()) << "kept (sealed when encrypted)";

  ASSERT_TRUE(store_->TrashSession("c1").ok());
  auto everything = store_->Erase({.everything = true});
  ASSERT_TRUE(everything) << everything.error().ToString();
  EXPECT_EQ(everything->sessions, std::vector<std::string>{"c1"});
  EXPECT_FALSE(RawLogContains("gammaword"));
  auto left = store_->ListSessions({.archived = ArchiveFilter::kAll});
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->sessions.empty());
  EXPECT_EQ(Ledger().size(), 4u) << "three erasures and a trash, kept through everything";
}

TEST_P(Forgetting, VerifyNamesATamperedReceiptAndABlobPutBack) {
  const std::string id = NewSessionId("v");
  const std::string png = MakePng(5, 5, "verify-image");
  Message m = TextMessage(Role::kUser, "look");
  m.parts.push_back(Part::ImageFromBytes(png, "image/png"));
  Append(id, m);
  auto receipt = store_->Erase({.session_ids = {id}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  ASSERT_EQ(receipt->blobs.size(), 1u);
  EXPECT_EQ(BlobCount(), 0u);

  ErasureReceipt tampered = *receipt;
  tampered.sessions.clear();
  auto bad = store_->VerifyErased(tampered);
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->digest_ok);
  EXPECT_FALSE(bad->erased());

  // The blob comes back without a message that refers to it.
  if (embedded()) {
    const std::string path = blob::BlobFilePath(StoreDir() + "/blobs", receipt->blobs[0]);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << png;
  } else {
    pg_->Query("INSERT INTO blobs (sha256, size, created_ms, bytes) VALUES ('" +
               StoredBlobName(receipt->blobs[0]) + "', " + std::to_string(png.size()) +
               ", 0, '\\x" + HexOf(png) + "')");
  }
  auto put_back = store_->VerifyErased(*receipt);
  ASSERT_TRUE(put_back);
  EXPECT_TRUE(put_back->digest_ok);
  ASSERT_EQ(put_back->problems.size(), 1u);
  EXPECT_NE(put_back->problems[0].find(receipt->blobs[0]), std::string::npos);
  EXPECT_NE(put_back->problems[0].find("sessiondb gc"), std::string::npos);
}

TEST_P(Forgetting, TheReceiptRoundTripsThroughItsJson) {
  const std::string id = NewSessionId("j");
  Append(id, TextMessage(Role::kUser, "words"));
  auto receipt = store_->Erase({.session_ids = {id}, .reason = "asked by the user"});
  ASSERT_TRUE(receipt);
  EXPECT_EQ(receipt->scope, "session j (asked by the user)");
  const std::string json = ErasureReceiptToJson(*receipt);
  EXPECT_EQ(json.find("words"), std::string::npos);
  EXPECT_EQ(json.rfind("{\"id\":", 0), 0u);
  auto parsed = ParseErasureReceipt(json);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(ErasureReceiptToJson(*parsed), json);
  EXPECT_EQ(ErasureReceiptDigest(*parsed), receipt->digest);
  EXPECT_EQ(parsed->counts, receipt->counts);

  std::string unknown = json;
  unknown.insert(1, "\"extra\":1,");
  EXPECT_EQ(ParseErasureReceipt(unknown).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseErasureReceipt("[]").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseErasureReceipt(R"({"id":1})").error().code(), StatusCode::kInvalidArgument);

  // Pretty-printed by another tool (Python's json.dumps(indent=2) sorts
  // nothing but spaces everything): the same receipt, the same digest.
  const std::string pretty = nlohmann::json::parse(json).dump(2);
  ASSERT_NE(pretty, json);
  auto reread = ParseErasureReceipt(pretty);
  ASSERT_TRUE(reread) << reread.error().ToString();
  EXPECT_EQ(ErasureReceiptDigest(*reread), receipt->digest);
  EXPECT_EQ(ErasureReceiptToJson(*reread), json);
  // A kind the receipt never holds, or one missing, is not a receipt.
  nlohmann::json extra_kind = nlohmann::json::parse(json);
  extra_kind["counts"]["secrets"] = 1;
  EXPECT_EQ(ParseErasureReceipt(extra_kind.dump()).error().code(), StatusCode::kInvalidArgument);
  nlohmann::json missing_kind = nlohmann::json::parse(json);
  missing_kind["counts"].erase("blobs");
  EXPECT_EQ(ParseErasureReceipt(missing_kind.dump()).error().code(), StatusCode::kInvalidArgument);
}

TEST_P(Forgetting, DeleteIsRecordedAndTheLedgerPages) {
  for (int i = 0; i < 3; ++i) {
    const std::string id = NewSessionId("d" + std::to_string(i));
    ASSERT_TRUE(store_->DeleteSession(id).ok());
  }
  auto all = store_->ReadLedger({});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].action, "delete");
  EXPECT_EQ((*all)[0].scope, "session d2");
  auto page = store_->ReadLedger({.limit = 1, .before_id = (*all)[0].id});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].scope, "session d1");
  EXPECT_EQ(store_->ReadLedger({.limit = 0}).error().code(), StatusCode::kInvalidArgument);
}

TEST_P(Forgetting, CodeWritesOfATrashedSessionAreNotRecalledUntilRestored) {
  const std::string id = NewSessionId("coder");
  MemoryOptions options;
  options.search.embedder.from_environment = false;
  auto memory = CodeMemory::Open(*store_, options);
  ASSERT_TRUE(memory) << memory.error().ToString();
  const std::string code = "def platypus_counter():\n    return 41\n";
  ASSERT_TRUE((*memory)->RecordWrite(
      {.file_path = "/src/p/x.py", .new_code = code, .session_id = id, .project = "/src/p"}));
  auto recalled = (*memory)->Recall("/src/p/x.py", code);
  ASSERT_TRUE(recalled) << recalled.error().ToString();
  ASSERT_EQ(recalled->size(), 1u);
  ASSERT_TRUE(store_->TrashSession(id).ok());
  recalled = (*memory)->Recall("/src/p/x.py", code);
  ASSERT_TRUE(recalled);
  EXPECT_TRUE(recalled->empty());
  EXPECT_TRUE(Hits("platypus_counter").empty());
  ASSERT_TRUE(store_->RestoreFromTrash(id));
  recalled = (*memory)->Recall("/src/p/x.py", code);
  ASSERT_TRUE(recalled);
  EXPECT_EQ(recalled->size(), 1u);
}

// The hook records an agent's writes under the agent's own session id; an
// import of that agent's transcript is a session that names it
// (source_session_id). Erasing the imported session erases those writes too.
TEST_P(Forgetting, ErasingAnImportedSessionErasesTheHooksCodeWritesOfItsAgent) {
  ASSERT_TRUE(store_->CreateSession(
      {.id = "imported", .metadata_json = R"({"source_session_id":"claude-abc"})"}));
  Append("imported", TextMessage(Role::kUser, "write the wombat counter"));
  MemoryOptions options;
  options.search.embedder.from_environment = false;
  auto memory = CodeMemory::Open(*store_, options);
  ASSERT_TRUE(memory) << memory.error().ToString();
  const std::string gone = "def wombat_counter():\n    return 41\n";
  const std::string kept = "def numbat_counter():\n    return 42\n";
  ASSERT_TRUE((*memory)->RecordWrite({.file_path = "/src/p/w.py",
                                      .new_code = gone,
                                      .session_id = "claude-abc",
                                      .project = "/src/p"}));
  ASSERT_TRUE((*memory)->RecordWrite({.file_path = "/src/p/n.py",
                                      .new_code = kept,
                                      .session_id = "claude-other",
                                      .project = "/src/p"}));
  ASSERT_EQ((*memory)->Recall("/src/p/w.py", gone)->size(), 1u);

  EraseRequest erase;
  erase.session_ids = {"imported"};
  auto receipt = store_->Erase(erase);
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(ErasedCount(*receipt, "code_writes"), 1);
  auto recalled = (*memory)->Recall("/src/p/w.py", gone);
  ASSERT_TRUE(recalled);
  EXPECT_TRUE(recalled->empty());
  EXPECT_TRUE(Hits("wombat_counter").empty());
  EXPECT_EQ((*memory)->Recall("/src/p/n.py", kept)->size(), 1u);
  EXPECT_EQ(Hits("numbat_counter").size(), 1u);
  auto verified = store_->VerifyErased(*receipt);
  ASSERT_TRUE(verified) << verified.error().ToString();
  EXPECT_TRUE(verified->erased());
}

SESSIONDB_FOR_EACH_BACKEND(Forgetting);

}  // namespace
}  // namespace sessiondb::testing
