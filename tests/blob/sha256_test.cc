// SHA-256 digests, the names of blobs.
#include "blob/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace sessiondb::blob {
namespace {

TEST(Sha256, MatchesTheStandardTestVectors) {
  // FIPS 180-2 appendix B and the empty message.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesAndAStreamHashAsTheWhole) {
  const std::string whole = std::string(100'000, 'x') + "tail";
  const std::string want = Sha256Hex(whole);
  EXPECT_EQ(Sha256Hex({std::string_view(whole).substr(0, 7), std::string_view(whole).substr(7)}),
            want);
  EXPECT_EQ(Sha256Hex({std::string_view(), whole, std::string_view()}), want);
  Sha256Stream stream;
  for (size_t at = 0; at < whole.size(); at += 4096) {
    stream.Update(std::string_view(whole).substr(at, 4096));
  }
  EXPECT_EQ(stream.FinishHex(), want);
}

TEST(Sha256, HashesEmbeddedNulBytesToo) {
  EXPECT_NE(Sha256Hex(std::string("a\0b", 3)), Sha256Hex("a"));
  EXPECT_NE(Sha256Hex(std::string("a\0b", 3)), Sha256Hex(std::string("a\0c", 3)));
}

TEST(Sha256, EveryDigestIsABlobName) {
  for (int i = 0; i < 100; ++i) {
    std::string digest = Sha256Hex(std::to_string(i));
    EXPECT_TRUE(IsSha256Hex(digest)) << digest;
  }
}

TEST(Sha256, OnlySixtyFourLowercaseHexDigitsAreABlobName) {
  EXPECT_TRUE(IsSha256Hex(std::string(64, '0')));
  EXPECT_TRUE(IsSha256Hex(std::string(64, 'f')));
  EXPECT_FALSE(IsSha256Hex(""));
  EXPECT_FALSE(IsSha256Hex(std::string(63, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(65, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'A')));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'g')));
  EXPECT_FALSE(IsSha256Hex("../" + std::string(61, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(63, 'a') + '\0'));
}

}  // namespace
}  // namespace sessiondb::blob
