// Encryption at rest of the embedded store (docs/encryption.md): a store
// made with a key opens only with it, says so before writing anything when
// the key is wrong or missing, keeps its data key through a rotation, names
// what was damaged, and copies to and from plaintext stores.
#include "sessiondb/encryption.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "core/key_file.h"
#include "store/store_copy.h"
#include "store/store_fixture.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

// Every file of the store and its bytes: what "nothing was written" compares.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out[e.path().string()] = std::string((std::istreambuf_iterator<char>(in)), {});
  }
  return out;
}

void FlipByte(const std::string& path, int64_t offset) {
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x20));
}

std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path().string());
  }
  return out;
}

class EncryptedStore : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kEmbedded; }

  void SetUp() override {
    key_ = keys_.Sub("key");
    ASSERT_TRUE(NewKeyFile(key_).ok());
    Reopen(KeyedOptions(key_));
  }

  StoreOptions KeyedOptions(const std::string& key_file) {
    StoreOptions o = Options();
    o.key_file = key_file;
    return o;
  }

  Result<std::unique_ptr<Store>> TryOpen(const StoreOptions& options) {
    store_.reset();
    return Store::Open(Location(), options);
  }

  // "ok", or the error the blob's read gives.
  std::string ReadBlobOrError(const std::string& sha) {
    auto bytes = store_->ReadBlob(sha, /*verify=*/true);
    if (bytes) return "ok";
    EXPECT_EQ(bytes.error().code(), StatusCode::kCorruption) << bytes.error().ToString();
    return bytes.error().message();
  }

  TempDir keys_;
  std::string key_;
};

TEST_F(EncryptedStore, ANewStoreMadeWithAKeyIsEncryptedAndReadsBack) {
  const std::string id = NewSessionId("s1");
  AppendText(id, "plaintextword in the first message");
  auto status = GetEncryptionStatus(StoreDir());
  ASSERT_TRUE(status) << status.error().ToString();
  EXPECT_TRUE(status->encrypted);
  EXPECT_EQ(status->kdf, "hkdf");
  EXPECT_EQ(status->key_id.size(), 16u);
  EXPECT_FALSE(RawLogContains("plaintextword"));

  Reopen(KeyedOptions(key_));
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ(messages->front().parts.front().text, "plaintextword in the first message");
}

TEST_F(EncryptedStore, AMissingKeyIsRefusedBeforeAnythingIsWritten) {
  AppendText(NewSessionId("s1"), "hello");
  store_.reset();
  const auto before = Snapshot(StoreDir());
  auto opened = TryOpen(Options());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.error().message().find("is encrypted"), std::string::npos);
  EXPECT_NE(opened.error().message().find("--key-file"), std::string::npos);
  EXPECT_EQ(Snapshot(StoreDir()), before);
}

TEST_F(EncryptedStore, AWrongKeyIsRefusedBeforeAnythingIsWritten) {
  AppendText(NewSessionId("s1"), "hello");
  store_.reset();
  const auto before = Snapshot(StoreDir());
  ASSERT_TRUE(NewKeyFile(keys_.Sub("other")).ok());
  auto opened = TryOpen(KeyedOptions(keys_.Sub("other")));
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.error().message().find("does not open"), std::string::npos);
  // A passphrase where a generated key was used: told apart too.
  std::ofstream(keys_.Sub("pass")) << "a long enough passphrase";
  fs::permissions(keys_.Sub("pass"), fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  auto with_pass = TryOpen(KeyedOptions(keys_.Sub("pass")));
  ASSERT_FALSE(with_pass);
  EXPECT_NE(with_pass.error().message().find("passphrase"), std::string::npos);
  EXPECT_EQ(Snapshot(StoreDir()), before);
}

TEST_F(EncryptedStore, ADamagedOrHostileEnvelopeIsRefusedAndNothingIsWritten) {
  AppendText(NewSessionId("s1"), "hello");
  store_.reset();
  const std::string envelope = StoreDir() + "/sessiondb.db-key";
  const std::string good = Snapshot(StoreDir())[envelope];
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"not JSON", "{\"format\": "},
      {"another format", R"({"format":"x","version":1})"},
      {"a newer version", R"({"format":"sessiondb-key-envelope","version":9})"},
      {"a scrypt asking for 128 GiB",
       R"({"format":"sessiondb-key-envelope","version":1,"kdf":"scrypt",)"
       R"("scrypt":{"log2_n":30,"r":16,"p":4},"salt":"00112233445566778899aabbccddeeff",)"
       R"("wrapped_key":")" +
           std::string(120, 'a') + R"("})"},
      {"longer than 64 KiB", std::string(70 * 1024, ' ')},
  };
  // A passphrase, so that the hostile scrypt parameters are read (a
  // generated key is refused before, for its kind).
  const std::string pass = keys_.Sub("pass");
  std::ofstream(pass) << "a long enough passphrase";
  fs::permissions(pass, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  for (const auto& [what, text] : hostile) {
    std::ofstream(envelope, std::ios::binary | std::ios::trunc) << text;
    const auto before = Snapshot(StoreDir());
    auto opened = TryOpen(KeyedOptions(what.starts_with("a scrypt") ? pass : key_));
    ASSERT_FALSE(opened) << what;
    EXPECT_EQ(opened.error().code(), StatusCode::kInvalidArgument) << what;
    const std::string& message = opened.error().message();
    EXPECT_TRUE(message.find("envelope") != std::string::npos ||
                message.find("scrypt") != std::string::npos)
        << what << ": " << message;
    EXPECT_EQ(Snapshot(StoreDir()), before) << what << ": nothing is written";
  }
  // The envelope put back, the store opens as before.
  std::ofstream(envelope, std::ios::binary | std::ios::trunc) << good;
  Reopen(KeyedOptions(key_));
  EXPECT_TRUE(store_->GetSession("s1"));
}

TEST_F(EncryptedStore, AKeyFileOthersMayReadIsRefused) {
  store_.reset();
  fs::permissions(key_, fs::perms::group_read, fs::perm_options::add);
  auto opened = TryOpen(KeyedOptions(key_));
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message().find("chmod 600"), std::string::npos);
}

TEST_F(EncryptedStore, APlaintextStoreRefusesAKey) {
  TempDir other;
  const std::string plain = other.Sub("plain");
  {
    auto s = Store::Open(plain, Options());
    ASSERT_TRUE(s);
    ASSERT_TRUE((*s)->CreateSession({.id = "p1"}));
  }
  const auto before = Snapshot(plain);
  auto keyed = Store::Open(plain, KeyedOptions(key_));
  ASSERT_FALSE(keyed);
  EXPECT_EQ(keyed.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(keyed.error().message().find("not encrypted"), std::string::npos);
  EXPECT_NE(keyed.error().message().find("sessiondb encrypt"), std::string::npos);
  EXPECT_EQ(Snapshot(plain), before);
  auto status = GetEncryptionStatus(plain);
  ASSERT_TRUE(status);
  EXPECT_FALSE(status->encrypted);
}

TEST_F(EncryptedStore, RotationKeepsTheDataKeyAndMovesWhichKeyOpens) {
  const std::string id = NewSessionId("s1");
  AppendText(id, "before rotation");
  const std::string key_id = GetEncryptionStatus(StoreDir())->key_id;
  store_.reset();
  const std::string db_before = Snapshot(StoreDir())[StoreDir() + "/sessiondb.db"];
  std::ofstream(keys_.Sub("pass")) << "the new passphrase of the store";
  fs::permissions(keys_.Sub("pass"), fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  ASSERT_TRUE(RotateStoreKey(StoreDir(), KeyedOptions(key_), keys_.Sub("pass")).ok());
  auto status = GetEncryptionStatus(StoreDir());
  ASSERT_TRUE(status);
  EXPECT_EQ(status->key_id, key_id) << "a rotation re-wraps; it does not change the data key";
  EXPECT_EQ(status->kdf, "scrypt");
  EXPECT_EQ(Snapshot(StoreDir())[StoreDir() + "/sessiondb.db"], db_before)
      << "no data is rewritten";
  EXPECT_FALSE(TryOpen(KeyedOptions(key_)));
  Reopen(KeyedOptions(keys_.Sub("pass")));
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages) << messages.error().ToString();
  EXPECT_EQ(messages->front().parts.front().text, "before rotation");
  // Rotating with a key that does not open it changes nothing.
  store_.reset();
  const auto before = Snapshot(StoreDir());
  EXPECT_FALSE(RotateStoreKey(StoreDir(), KeyedOptions(key_), key_).ok());
  EXPECT_EQ(Snapshot(StoreDir()), before);
}

TEST_F(EncryptedStore, ADamagedPageIsNamedAndNeverReturnedAsData) {
  const std::string id = NewSessionId("s1");
  for (int i = 0; i < 200; ++i) AppendText(id, "message number " + std::to_string(i));
  store_.reset();  // checkpoints: every page is in the database file
  const std::string db = StoreDir() + "/sessiondb.db";
  const auto size = static_cast<int64_t>(fs::file_size(db));
  ASSERT_GT(size, 4 * 4096);
  for (int64_t page = 1; page * 4096 < size; ++page) FlipByte(db, page * 4096 + 100);
  Result<std::unique_ptr<Store>> opened = TryOpen(KeyedOptions(key_));
  Status failed = Status::Ok();
  if (!opened) {
    failed = opened.error();
  } else {
    auto messages = (*opened)->ReadMessages(id);
    ASSERT_FALSE(messages) << "damaged pages were returned as data";
    failed = messages.error();
  }
  EXPECT_EQ(failed.code(), StatusCode::kCorruption) << failed.ToString();
  EXPECT_NE(failed.message().find("does not decrypt"), std::string::npos) << failed.ToString();
}

TEST_F(EncryptedStore, ADamagedOrMovedBlobIsNamed) {
  const std::string id = NewSessionId("s1");
  Message m;
  m.role = Role::kUser;
  m.parts.push_back(Part::Text("two pictures"));
  m.parts.push_back(Part::ImageFromBytes(MakePng(8, 8, "first"), "image/png"));
  m.parts.push_back(Part::ImageFromBytes(MakePng(9, 9, "second"), "image/png"));
  auto appended = store_->Append(id, m);
  ASSERT_TRUE(appended) << appended.error().ToString();
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages);
  const std::string first = messages->front().parts[1].resource->content_sha256;
  const std::string second = messages->front().parts[2].resource->content_sha256;
  const std::vector<std::string> files = FilesUnder(StoreDir() + "/blobs/sha256");
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& f : files) {
    EXPECT_EQ(f.find(first), std::string::npos) << "a blob's file is named by a keyed digest";
    EXPECT_EQ(f.find(second), std::string::npos);
  }
  // One blob's file over the other's name: neither is returned as the other.
  fs::copy_file(files[0], files[1], fs::copy_options::overwrite_existing);
  const std::string moved_over = ReadBlobOrError(first) == "ok" ? second : first;
  const std::string got = ReadBlobOrError(moved_over);
  EXPECT_NE(got.find("does not decrypt"), std::string::npos) << got;
  EXPECT_NE(got.find(moved_over.substr(0, 12)), std::string::npos) << got;
  // A flipped byte.
  FlipByte(files[0], 40);
  const std::string flipped = ReadBlobOrError(first) == "ok" ? second : first;
  EXPECT_NE(ReadBlobOrError(flipped).find("does not decrypt"), std::string::npos);
}

TEST_F(EncryptedStore, ConvertingAFolderNamedWithATrailingSlashConvertsThatFolder) {
  TempDir other;
  const std::string plain = other.Sub("plain");
  {
    auto s = Store::Open(plain, Options());
    ASSERT_TRUE(s);
    ASSERT_TRUE((*s)->CreateSession({.id = "p1"}));
  }
  ConvertOptions convert;
  convert.new_key_file = key_;
  convert.remove_old = true;
  auto report = EncryptStore(plain + "/", Options(), convert);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->old_copy.empty());
  EXPECT_FALSE(fs::exists(plain + "/.converting"));
  EXPECT_FALSE(fs::exists(plain + ".converting"));
  EXPECT_TRUE(GetEncryptionStatus(plain)->encrypted);
  auto reopened = Store::Open(plain, KeyedOptions(key_));
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  EXPECT_TRUE((*reopened)->GetSession("p1"));
}

TEST_F(EncryptedStore, AConversionCutShortBetweenItsRenamesIsFinishedByTheNextOpen) {
  AppendText(NewSessionId("s1"), "survives the swap");
  store_.reset();
  // What a conversion killed after its first rename leaves: no store, and
  // the whole converted folder with its mark.
  const std::string converting = StoreDir() + ".converting";
  fs::rename(StoreDir(), converting);
  std::ofstream(converting + "/sessiondb.db-converted") << "whole\n";
  auto status = GetEncryptionStatus(StoreDir());
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.error().message().find("cut short"), std::string::npos);
  // Any open finishes it rather than making an empty store there.
  Reopen(KeyedOptions(key_));
  auto messages = store_->ReadMessages("s1");
  ASSERT_TRUE(messages) << messages.error().ToString();
  EXPECT_EQ(messages->front().parts.front().text, "survives the swap");
  EXPECT_FALSE(fs::exists(converting));
  EXPECT_FALSE(fs::exists(StoreDir() + "/sessiondb.db-converted"));
  EXPECT_TRUE(GetEncryptionStatus(StoreDir())->encrypted);
}

TEST_F(EncryptedStore, ErasureReachesTheSealedBlobsAndItsReceiptVerifies) {
  const std::string gone = NewSessionId("gone");
  const std::string kept = NewSessionId("kept");
  for (const auto& [id, salt] : {std::pair{gone, "erased"}, std::pair{kept, "kept"}}) {
    Message m;
    m.role = Role::kUser;
    m.parts.push_back(Part::Text("a picture"));
    m.parts.push_back(Part::ImageFromBytes(MakePng(7, 7, salt), "image/png"));
    ASSERT_TRUE(store_->Append(id, m));
  }
  ASSERT_EQ(FilesUnder(StoreDir() + "/blobs/sha256").size(), 2u);
  auto receipt = store_->Erase({.session_ids = {gone}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(receipt->blobs.size(), 1u);
  // The sealed file of the erased image is gone, the other still reads.
  EXPECT_EQ(FilesUnder(StoreDir() + "/blobs/sha256").size(), 1u);
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check) << check.error().ToString();
  EXPECT_TRUE(check->erased()) << ::testing::PrintToString(check->problems);
  auto messages = store_->ReadMessages(kept);
  ASSERT_TRUE(messages);
  EXPECT_EQ(ReadBlobOrError(messages->front().parts[1].resource->content_sha256), "ok");
}

TEST_F(EncryptedStore, CopiesToAndFromAPlaintextStore) {
  const std::string id = NewSessionId("s1");
  AppendText(id, "copied word one");
  AppendText(id, "copied word two", Role::kAssistant);
  TempDir other;
  auto plain = Store::Open(other.Sub("plain"), Options());
  ASSERT_TRUE(plain);
  auto out = CopyStore(*store_, **plain);
  ASSERT_TRUE(out) << out.error().ToString();
  EXPECT_EQ(out->messages_copied, 2);
  auto back = Store::Open(other.Sub("again"), KeyedOptions(key_));
  ASSERT_TRUE(back) << back.error().ToString();
  auto in = CopyStore(**plain, **back);
  ASSERT_TRUE(in) << in.error().ToString();
  auto messages = (*back)->ReadMessages(id);
  ASSERT_TRUE(messages);
  ASSERT_EQ(messages->size(), 2u);
  EXPECT_EQ(messages->at(1).parts.front().text, "copied word two");
  EXPECT_TRUE(GetEncryptionStatus(other.Sub("again"))->encrypted);
  EXPECT_FALSE(GetEncryptionStatus(other.Sub("plain"))->encrypted);
}

// Runs `convert` in a forked child whose progress kills it with SIGKILL once
// `blobs_before_kill` blobs are converted; returns whether it was killed.
bool KilledPartWay(const std::function<Result<ConvertReport>(const ConvertOptions&)>& convert,
                   int64_t blobs_before_kill) {
  const pid_t pid = fork();
  if (pid == 0) {
    ConvertOptions options;
    options.progress = [&](int64_t done, int64_t total) {
      if (total > 0 && done >= blobs_before_kill) raise(SIGKILL);
    };
    (void)convert(options);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

TEST_F(EncryptedStore, ARekeyKilledPartWayResumesWithTheBlobsItConverted) {
  const std::string id = NewSessionId("s1");
  std::vector<std::string> shas;
  for (int i = 0; i < 6; ++i) {
    Message m;
    m.role = Role::kUser;
    m.parts.push_back(Part::Text("picture " + std::to_string(i)));
    m.parts.push_back(Part::ImageFromBytes(MakePng(5, 5, "r" + std::to_string(i)), "image/png"));
    auto appended = store_->Append(id, m);
    ASSERT_TRUE(appended) << appended.error().ToString();
  }
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages);
  for (const Message& m : *messages) shas.push_back(m.parts[1].resource->content_sha256);
  const std::string old_key_id = GetEncryptionStatus(StoreDir())->key_id;
  store_.reset();
  auto rekey = [&](ConvertOptions options) {
    options.remove_old = true;
    return RekeyStore(StoreDir(), KeyedOptions(key_), options);
  };
  ASSERT_TRUE(KilledPartWay(rekey, 4));
  // Killed: the store is as it was, the converted folder keeps four blobs.
  EXPECT_EQ(GetEncryptionStatus(StoreDir())->key_id, old_key_id);
  EXPECT_EQ(FilesUnder(StoreDir() + ".converting/blobs/sha256").size(), 4u);
  // Written meanwhile: converted by the run that resumes.
  Reopen(KeyedOptions(key_));
  AppendText(id, "written between the runs");
  store_.reset();
  auto report = rekey(ConvertOptions());
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->blobs, 6);
  EXPECT_EQ(report->blobs_resumed, 4);
  EXPECT_NE(report->key_id, old_key_id);
  EXPECT_EQ(GetEncryptionStatus(StoreDir())->key_id, report->key_id);
  EXPECT_FALSE(fs::exists(StoreDir() + ".converting"));
  EXPECT_FALSE(fs::exists(StoreDir() + "/sessiondb.db-convert"));
  Reopen(KeyedOptions(key_));
  auto after = store_->ReadMessages(id);
  ASSERT_TRUE(after) << after.error().ToString();
  ASSERT_EQ(after->size(), 7u);
  EXPECT_EQ(after->back().parts.front().text, "written between the runs");
  for (const std::string& sha : shas) EXPECT_EQ(ReadBlobOrError(sha), "ok") << sha;
}

TEST_F(EncryptedStore, AKilledRunGivenAnotherMasterKeyStartsAfresh) {
  const std::string id = NewSessionId("s1");
  for (int i = 0; i < 3; ++i) {
    Message m;
    m.role = Role::kUser;
    m.parts.push_back(Part::ImageFromBytes(MakePng(5, 5, "a" + std::to_string(i)), "image/png"));
    ASSERT_TRUE(store_->Append(id, m));
  }
  store_.reset();
  const std::string other_key = keys_.Sub("other");
  ASSERT_TRUE(NewKeyFile(other_key).ok());
  auto rekey_to = [&](const std::string& master) {
    return [&, master](ConvertOptions options) {
      options.new_key_file = master;
      return RekeyStore(StoreDir(), KeyedOptions(key_), options);
    };
  };
  ASSERT_TRUE(KilledPartWay(rekey_to(key_), 2));
  // The killed run's data key is wrapped under `key_`, which this run does
  // not give: nothing of it is kept, and the store opens with the new key.
  auto report = rekey_to(other_key)(ConvertOptions());
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->blobs, 3);
  EXPECT_EQ(report->blobs_resumed, 0);
  Reopen(KeyedOptions(other_key));
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages) << messages.error().ToString();
  EXPECT_EQ(ReadBlobOrError(messages->front().parts[0].resource->content_sha256), "ok");
}

}  // namespace
}  // namespace sessiondb::testing
