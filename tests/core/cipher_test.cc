// The primitives of encryption at rest (core/cipher.h) and the master key's
// file (core/key_file.h): what opens, what must not, and the hostile files.
#include "core/cipher.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "core/key_file.h"
#include "test_support.h"

namespace sessiondb::cipher {
namespace {

using sessiondb::testing::TempDir;

void WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path, std::ios::binary) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

TEST(Cipher, SealOpensOnlyWithItsKeyAndAssociatedData) {
  const SecretKey key = SecretKey::Random();
  const std::string sealed = Seal(key, "the plaintext", "record 1");
  EXPECT_EQ(sealed.size(), std::string("the plaintext").size() + kSealOverhead);
  EXPECT_EQ(sealed.find("plaintext"), std::string::npos);
  auto opened = Open(key, sealed, "record 1", "field");
  ASSERT_TRUE(opened) << opened.error().ToString();
  EXPECT_EQ(*opened, "the plaintext");

  // Moved to another record: fails, and says which field.
  auto moved = Open(key, sealed, "record 2", "the title of session s1");
  ASSERT_FALSE(moved);
  EXPECT_EQ(moved.error().code(), StatusCode::kCorruption);
  EXPECT_NE(moved.error().message().find("the title of session s1"), std::string::npos);
  // Another key.
  EXPECT_FALSE(Open(SecretKey::Random(), sealed, "record 1", "field"));
  // Every byte flipped in turn: never opens.
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string damaged = sealed;
    damaged[i] ^= 0x01;
    EXPECT_FALSE(Open(key, damaged, "record 1", "field")) << "byte " << i;
  }
  // Truncated below the overhead: a clear error, not a crash.
  auto short_one = Open(key, sealed.substr(0, 10), "record 1", "field");
  ASSERT_FALSE(short_one);
  EXPECT_NE(short_one.error().message().find("too short"), std::string::npos);
}

TEST(Cipher, EveryNonceIsFresh) {
  const SecretKey key = SecretKey::Random();
  std::set<std::string> nonces;
  for (int i = 0; i < 1000; ++i) nonces.insert(Seal(key, "same", "").substr(0, kNonceBytes));
  EXPECT_EQ(nonces.size(), 1000u);
}

TEST(Cipher, AForkedChildNeverReusesItsParentsNonces) {
  const SecretKey key = SecretKey::Random();
  const std::string before = Seal(key, "x", "").substr(0, kNonceBytes);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string child = Seal(key, "x", "").substr(0, kNonceBytes);
    (void)!::write(fds[1], child.data(), child.size());
    _exit(0);
  }
  const std::string parent = Seal(key, "x", "").substr(0, kNonceBytes);
  std::string child(kNonceBytes, '\0');
  ASSERT_EQ(::read(fds[0], child.data(), child.size()), static_cast<ssize_t>(kNonceBytes));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_NE(child, parent) << "the child continued the parent's counter";
  EXPECT_NE(child.substr(0, 8), before.substr(0, 8)) << "the child drew its own prefix";
  EXPECT_EQ(parent.substr(0, 8), before.substr(0, 8));
}

TEST(Cipher, ManyKeysInTurnEachStillOpen) {
  // More keys than a thread keeps expanded: each seal and open still uses its own.
  std::vector<SecretKey> keys;
  for (int i = 0; i < 9; ++i) keys.push_back(SecretKey::Random());
  std::vector<std::string> sealed;
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < keys.size(); ++i)
      sealed.push_back(Seal(keys[i], "k" + std::to_string(i), "a"));
  }
  for (size_t j = 0; j < sealed.size(); ++j) {
    const size_t i = j % keys.size();
    auto opened = Open(keys[i], sealed[j], "a", "x");
    ASSERT_TRUE(opened);
    EXPECT_EQ(*opened, "k" + std::to_string(i));
    EXPECT_FALSE(Open(keys[(i + 1) % keys.size()], sealed[j], "a", "x"));
  }
}

TEST(Cipher, InPlaceSealMatchesItsOpen) {
  const SecretKey key = SecretKey::Random();
  std::string page(4064, 'p');
  uint8_t trailer[kSealOverhead];
  auto* data = reinterpret_cast<uint8_t*>(page.data());
  SealInPlace(key, data, page.size(), "page 7", trailer);
  EXPECT_EQ(page.find("pppp"), std::string::npos);
  std::string copy = page;
  EXPECT_FALSE(
      OpenInPlace(key, reinterpret_cast<uint8_t*>(copy.data()), copy.size(), "page 8", trailer));
  ASSERT_TRUE(OpenInPlace(key, data, page.size(), "page 7", trailer));
  EXPECT_EQ(page, std::string(4064, 'p'));
}

TEST(Cipher, DerivedKeysDifferPerLabelAndAreStable) {
  const SecretKey key = SecretKey::Random();
  EXPECT_EQ(key.Derive("blobs").view(), key.Derive("blobs").view());
  EXPECT_NE(key.Derive("blobs").view(), key.Derive("pages").view());
  EXPECT_NE(key.Derive("blobs").view(), key.view());
  EXPECT_EQ(Hmac(key, "term"), Hmac(key, "term"));
  EXPECT_NE(Hmac(key, "term"), Hmac(SecretKey::Random(), "term"));
  EXPECT_EQ(HmacHex(key, "x").size(), 64u);
}

TEST(Cipher, PassphraseStretchIsDeterministicAndBounded) {
  const StretchParams fast{.log2_n = 10, .r = 8, .p = 1};
  auto a = StretchPassphrase("correct horse", "salt-0123456789a", fast);
  auto b = StretchPassphrase("correct horse", "salt-0123456789a", fast);
  auto c = StretchPassphrase("correct horse", "salt-0123456789b", fast);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->view(), b->view());
  EXPECT_NE(a->view(), c->view());
  // A hostile envelope asking for 128 GiB of memory is refused, not attempted.
  auto huge = StretchPassphrase("x", "salt", {.log2_n = 30, .r = 16, .p = 4});
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), StatusCode::kInvalidArgument);
}

TEST(Cipher, HexRoundTripsAndRefusesDamage) {
  EXPECT_EQ(ToHex(std::string("\x00\xff\x10", 3)), "00ff10");
  EXPECT_EQ(*FromHex("00ff10", "x"), std::string("\x00\xff\x10", 3));
  EXPECT_FALSE(FromHex("0g", "x"));
  EXPECT_FALSE(FromHex("abc", "x"));
}

TEST(KeyFile, NewKeyFileIsPrivateAndReadsBack) {
  TempDir dir;
  const std::string path = dir.Sub("key");
  auto made = WriteNewKeyFile(path);
  ASSERT_TRUE(made) << made.error().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto read = ReadMasterKey(path);
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_FALSE(read->is_passphrase);
  EXPECT_EQ(read->raw.view(), made->raw.view());
  // Never overwritten.
  auto again = WriteNewKeyFile(path);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadMasterKey(path)->raw.view(), made->raw.view());
}

TEST(KeyFile, ANewKeyFilesMissingFolderIsMadePrivate) {
  TempDir dir;
  const std::string path = dir.Sub("config/sessiondb/key");
  ASSERT_TRUE(WriteNewKeyFile(path)) << "the folder is made";
  struct stat st {};
  ASSERT_EQ(::stat(dir.Sub("config/sessiondb").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(ReadMasterKey(path));
}

TEST(KeyFile, APassphraseFileIsAPassphrase) {
  TempDir dir;
  const std::string path = dir.Sub("pass");
  WriteFile(path, "a long enough passphrase\n", 0600);
  auto read = ReadMasterKey(path);
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_TRUE(read->is_passphrase);
  EXPECT_EQ(read->passphrase, "a long enough passphrase");
}

TEST(KeyFile, HostileAndCarelessFilesAreRefusedWithWhatToDo) {
  TempDir dir;
  // Readable by others: the message says which chmod fixes it.
  WriteFile(dir.Sub("open"), "a long enough passphrase", 0644);
  auto open = ReadMasterKey(dir.Sub("open"));
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(open.error().message().find("chmod 600"), std::string::npos);
  EXPECT_NE(open.error().message().find("0644"), std::string::npos);
  // Missing: says how to make one.
  auto missing = ReadMasterKey(dir.Sub("none"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.error().message().find("sessiondb key new"), std::string::npos);
  // A symbolic link is not followed.
  WriteFile(dir.Sub("real"), "a long enough passphrase", 0600);
  std::filesystem::create_symlink(dir.Sub("real"), dir.Sub("link"));
  auto link = ReadMasterKey(dir.Sub("link"));
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message().find("symbolic link"), std::string::npos);
  // A directory, a huge file, a short passphrase, a damaged generated key.
  EXPECT_FALSE(ReadMasterKey(dir.path().string()));
  WriteFile(dir.Sub("huge"), std::string(1 << 20, 'x'), 0600);
  auto huge = ReadMasterKey(dir.Sub("huge"));
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), StatusCode::kInvalidArgument);
  WriteFile(dir.Sub("short"), "short", 0600);
  EXPECT_EQ(ReadMasterKey(dir.Sub("short")).error().code(), StatusCode::kInvalidArgument);
  WriteFile(dir.Sub("damaged"), std::string(kKeyFilePrefix) + "zz" + std::string(62, '0'), 0600);
  auto damaged = ReadMasterKey(dir.Sub("damaged"));
  ASSERT_FALSE(damaged);
  EXPECT_NE(damaged.error().message().find("damaged"), std::string::npos);
}

}  // namespace
}  // namespace sessiondb::cipher
