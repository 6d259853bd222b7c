// SHA-256 names, base64 and data URIs.
#include <random>

#include "blob/base64.h"
#include "blob/data_uri.h"
#include "blob/sha256.h"
#include "gtest/gtest.h"

namespace sessiondb::blob {
namespace {

TEST(Sha256, MatchesTheStandardTestVectors) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, OnlyLowercaseSixtyFourHexIsABlobName) {
  EXPECT_TRUE(IsSha256Hex(Sha256Hex("x")));
  EXPECT_FALSE(IsSha256Hex(std::string(63, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'A')));
  EXPECT_FALSE(IsSha256Hex("../" + std::string(61, 'a')));
}

TEST(Base64, RoundTripsEveryLengthFromZeroToThreeHundred) {
  std::mt19937 rng(7);
  for (size_t len = 0; len <= 300; ++len) {
    std::string bytes(len, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::string encoded = Base64Encode(bytes);
    EXPECT_EQ(encoded.size(), (len + 2) / 3 * 4);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded) << len << ": " << decoded.error().ToString();
    EXPECT_EQ(*decoded, bytes) << len;
  }
}

TEST(Base64, MatchesKnownEncodings) {
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("\xff\xfe"), "//4=");
}

TEST(Base64, ABadCharacterIsNamedWithItsOffset) {
  auto r = Base64Decode("Zm9v*m9v");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("'*' at offset 4"), std::string::npos) << r.error().message();
  EXPECT_FALSE(Base64Decode("Zm9v-_8="));  // URL-safe alphabet is not standard base64
}

TEST(Base64, WrongLengthAndMisplacedPaddingAreRefused) {
  auto len = Base64Decode("Zm9");
  ASSERT_FALSE(len);
  EXPECT_NE(len.error().message().find("multiple of 4"), std::string::npos);
  EXPECT_FALSE(Base64Decode("Z==="));
  EXPECT_FALSE(Base64Decode("Zg=a"));
  EXPECT_FALSE(Base64Decode("Zg==Zg=="));
}

TEST(DataUri, ParsesTheMimeTypeAndDecodesThePayload) {
  auto uri = ParseDataUri("data:image/PNG;base64,Zm9v");
  ASSERT_TRUE(uri);
  EXPECT_EQ(uri->mime, "image/png");
  EXPECT_EQ(uri->bytes, "foo");
  auto with_params = ParseDataUri("data:text/plain;charset=utf-8;base64,Zm8=");
  ASSERT_TRUE(with_params);
  EXPECT_EQ(with_params->mime, "text/plain");
  EXPECT_EQ(with_params->bytes, "fo");
  EXPECT_EQ(MakeDataUri("image/png", "foo"), "data:image/png;base64,Zm9v");
}

TEST(DataUri, MalformedUrisAreRefusedWithTheReason) {
  auto no_scheme = ParseDataUri("image/png;base64,Zm9v");
  ASSERT_FALSE(no_scheme);
  EXPECT_NE(no_scheme.error().message().find("data:"), std::string::npos);
  auto percent = ParseDataUri("data:text/plain,hello%20world");
  ASSERT_FALSE(percent);
  EXPECT_NE(percent.error().message().find("only"), std::string::npos);
  auto no_comma = ParseDataUri("data:image/png;base64");
  ASSERT_FALSE(no_comma);
  auto bad_payload = ParseDataUri("data:image/png;base64,Zm9v!!!!");
  ASSERT_FALSE(bad_payload);
  EXPECT_NE(bad_payload.error().message().find("offset 4"), std::string::npos);
}

}  // namespace
}  // namespace sessiondb::blob
