// Crypto-shredding (docs/encryption.md): erasing everything of an encrypted
// PostgreSQL namespace destroys its data key, so what the namespace wrote
// (rows a backup or the WAL still holds) opens with no key the namespace
// has; its receipt names the destroyed key and VerifyErased checks it; the
// namespace goes on under a new key with its settings; another namespace's
// key and data are untouched.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/key_file.h"
#include "sessiondb/encryption.h"
#include "sessiondb/forget.h"
#include "sessiondb/memory.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_sealer.h"
#include "store_fixture.h"

namespace sessiondb::testing {
namespace {

class CryptoShred : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kPostgresEncrypted; }

  // The sealer of namespace `ns`'s current data key, opened from its
  // envelope with the test's master key, as the store itself does.
  postgres::PgSealer CurrentSealer(const std::string& ns = "default") {
    const std::string envelope =
        pg_->Query("SELECT value FROM index_meta WHERE namespace = '" + ns + "' AND key = '" +
                   std::string(postgres::kNamespaceEnvelopeKey) + "'");
    EXPECT_FALSE(envelope.empty());
    auto master = cipher::ReadMasterKey(key_file_);
    EXPECT_TRUE(master) << master.error().ToString();
    auto key = store::OpenKeyEnvelope(envelope, *master, postgres::NamespaceKeyScope(ns), ns);
    EXPECT_TRUE(key) << key.error().ToString();
    return key ? postgres::PgSealer(*key) : postgres::PgSealer();
  }

  std::string KeyId(const std::string& ns = "default") {
    StoreOptions options = Options();
    options.namespace_name = ns;
    auto status = GetEncryptionStatus(Location(), options);
    EXPECT_TRUE(status) << status.error().ToString();
    EXPECT_TRUE(status && status->encrypted);
    return status ? status->key_id : "";
  }
};

TEST_F(CryptoShred, ErasingEverythingDestroysTheKeyAndTheNamespaceGoesOn) {
  const std::string sid = NewSessionId("s1");
  const AppendResult appended = AppendText(sid, "the secret plan, kept in a backup");
  ASSERT_TRUE(store_->SetRetentionPolicy({.trash_grace_days = 9}).ok());
  const std::string old_key = KeyId();
  // What a backup taken now holds of the message: its sealed text.
  const std::string backed_up_text =
      pg_->Query("SELECT text FROM events WHERE id = '" + appended.message_id + "'");
  ASSERT_FALSE(backed_up_text.empty());
  ASSERT_TRUE(
      CurrentSealer().OpenText(postgres::PgColumn::kEventText, appended.message_id, backed_up_text))
      << "the backup opens while the key lives";

  auto receipt = store_->Erase({.everything = true, .reason = "tenant left"});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(receipt->destroyed_key_id, old_key);
  const std::string new_key = KeyId();
  EXPECT_NE(new_key, old_key);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM index_meta WHERE value LIKE '%" + old_key + "%'"), "0")
      << "no row holds the destroyed key's envelope";

  // The backed-up ciphertext opens with no key the namespace has now.
  auto opened =
      CurrentSealer().OpenText(postgres::PgColumn::kEventText, appended.message_id, backed_up_text);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kCorruption);

  // The receipt names the key and proves itself; a receipt whose key was
  // changed afterwards no longer checks.
  const std::string json = ErasureReceiptToJson(*receipt);
  EXPECT_NE(json.find("\"destroyed_key\":\"" + old_key + "\""), std::string::npos) << json;
  auto parsed = ParseErasureReceipt(json);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  auto check = store_->VerifyErased(*parsed);
  ASSERT_TRUE(check) << check.error().ToString();
  EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);
  ErasureReceipt forged = *parsed;
  forged.destroyed_key_id = new_key;
  forged.digest = ErasureReceiptDigest(forged);
  auto forged_check = store_->VerifyErased(forged);
  ASSERT_TRUE(forged_check);
  EXPECT_FALSE(forged_check->erased()) << "the live key was not destroyed";

  // The namespace goes on, sealed under the new key, settings kept, in this
  // process and in the next.
  auto policy = store_->GetRetentionPolicy();
  ASSERT_TRUE(policy) << policy.error().ToString();
  EXPECT_EQ(policy->trash_grace_days, 9);
  const std::string later = NewSessionId("s2");
  AppendText(later, "after the shredding");
  Reopen();
  auto messages = store_->ReadMessages(later);
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ(messages->front().parts.front().text, "after the shredding");
  auto kept = store_->GetRetentionPolicy();
  ASSERT_TRUE(kept) << kept.error().ToString();
  EXPECT_EQ(kept->trash_grace_days, 9);
}

// The blobs an erasure of everything frees are named under the key it
// destroys: they are removed by those names, not looked for under the new key.
TEST_F(CryptoShred, TheBlobsItFreesAreRemovedThoughTheirKeyIsGone) {
  const std::string sid = NewSessionId("pictures");
  Message m;
  m.role = Role::kUser;
  m.parts = {Part::Text("a chart"), Part::ImageFromBytes(MakePng(16, 16, "shred"), "image/png")};
  ASSERT_TRUE(store_->Append(sid, m));
  ASSERT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "1");
  auto receipt = store_->Erase({.everything = true});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(receipt->blobs.size(), 1u);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "0");
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check) << check.error().ToString();
  EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);
}

TEST_F(CryptoShred, OneNamespaceShreddedLeavesAnotherIntact) {
  StoreOptions other_options = Options();
  other_options.namespace_name = "tenant-b";
  auto other = Store::Open(Location(), other_options);
  ASSERT_TRUE(other) << other.error().ToString();
  ASSERT_TRUE((*other)->CreateSession({.id = "b1", .title = "tenant b's"}));
  Message m;
  m.role = Role::kUser;
  m.parts.push_back(Part::Text("tenant b's words"));
  ASSERT_TRUE((*other)->Append("b1", m));
  const std::string b_key = KeyId("tenant-b");
  EXPECT_NE(b_key, KeyId());

  NewSessionId("a1");
  ASSERT_TRUE(store_->Erase({.everything = true}));

  EXPECT_EQ(KeyId("tenant-b"), b_key);
  other->reset();
  auto reopened = Store::Open(Location(), other_options);
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  auto messages = (*reopened)->ReadMessages("b1");
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ(messages->front().parts.front().text, "tenant b's words");
  auto session = (*reopened)->GetSession("b1");
  ASSERT_TRUE(session);
  EXPECT_EQ(session->title, "tenant b's");
}

TEST_F(CryptoShred, ErasingLessThanEverythingKeepsTheKey) {
  const std::string keep = NewSessionId("keep");
  const std::string gone = NewSessionId("gone");
  AppendText(keep, "stays");
  AppendText(gone, "goes");
  const std::string key = KeyId();
  auto receipt = store_->Erase({.session_ids = {gone}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_TRUE(receipt->destroyed_key_id.empty());
  EXPECT_EQ(ErasureReceiptToJson(*receipt).find("destroyed_key"), std::string::npos);
  EXPECT_EQ(KeyId(), key);
  auto messages = store_->ReadMessages(keep);
  ASSERT_TRUE(messages);
  EXPECT_EQ(messages->size(), 1u);
}

// The project and path of a code write are sealed: erasing a project finds
// its writes by opening them, and leaves another project's.
TEST_F(CryptoShred, ErasingAProjectFindsItsSealedCodeWrites) {
  MemoryOptions options;
  options.search.embedder.from_environment = false;
  auto memory = CodeMemory::Open(*store_, options);
  ASSERT_TRUE(memory) << memory.error().ToString();
  ASSERT_TRUE((*memory)->RecordWrite({.file_path = "/src/app/lib/a.py",
                                      .new_code = "def a():\n    return 1\n",
                                      .project = "/src/app"}));
  ASSERT_TRUE((*memory)->RecordWrite({.file_path = "/src/other/b.py",
                                      .new_code = "def b():\n    return 2\n",
                                      .project = "/src/other"}));
  memory->reset();
  auto receipt = store_->Erase({.project = "/src/app"});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  std::map<std::string, int64_t> counts(receipt->counts.begin(), receipt->counts.end());
  EXPECT_EQ(counts["code_writes"], 1);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM code_writes"), "1");
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);
}

}  // namespace
}  // namespace sessiondb::testing
