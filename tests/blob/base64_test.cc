// Standard base64: round trips, the RFC 4648 vectors and strict refusals.
#include "blob/base64.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace sessiondb::blob {
namespace {

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

// The message of a refused decode, or a failure if it was accepted.
std::string RefusalOf(std::string_view text) {
  auto decoded = Base64Decode(text);
  if (decoded) {
    ADD_FAILURE() << "\"" << text << "\" was accepted";
    return "";
  }
  EXPECT_EQ(decoded.error().code(), StatusCode::kInvalidArgument);
  return decoded.error().message();
}

TEST(Base64, RoundTripsRandomBytesOfEveryLengthFromZeroToThreeHundred) {
  for (size_t len = 0; len <= 300; ++len) {
    std::string bytes = RandomBytes(len, static_cast<uint32_t>(len));
    std::string encoded = Base64Encode(bytes);
    EXPECT_EQ(encoded.size(), (len + 2) / 3 * 4);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded) << len << ": " << decoded.error().ToString();
    EXPECT_EQ(*decoded, bytes) << len;
  }
}

TEST(Base64, RoundTripsAMebibyteImagePayload) {
  std::string bytes = RandomBytes(1 << 20, 42);
  auto decoded = Base64Decode(Base64Encode(bytes));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, bytes);
}

TEST(Base64, MatchesTheRfc4648TestVectors) {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded) << encoded;
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64, UsesPlusAndSlashForTheLastTwoDigits) {
  EXPECT_EQ(Base64Encode("\xfb\xff\xbf"), "+/+/");
  EXPECT_EQ(Base64Encode("\xff\xfe"), "//4=");
  EXPECT_EQ(*Base64Decode("+/+/"), "\xfb\xff\xbf");
}

TEST(Base64, ABadCharacterIsNamedWithItsOffset) {
  std::string message = RefusalOf("Zm9v*m9v");
  EXPECT_NE(message.find("'*' at offset 4"), std::string::npos) << message;
  EXPECT_NE(message.find("standard alphabet"), std::string::npos) << message;
}

TEST(Base64, ABadCharacterAnywhereInALongTextIsNamedWithItsOffset) {
  // Long enough for the block-wise fast path, with every position tried.
  const std::string good = Base64Encode(RandomBytes(300, 7));
  for (size_t at = 0; at < good.size(); ++at) {
    std::string bad = good;
    bad[at] = '*';
    std::string message = RefusalOf(bad);
    EXPECT_NE(message.find("at offset " + std::to_string(at) + " "), std::string::npos)
        << at << ": " << message;
  }
}

TEST(Base64, UnprintableBadBytesAreShownInHex) {
  std::string message = RefusalOf(std::string("Zm9v\x01m9v", 8));
  EXPECT_NE(message.find("byte 0x01 at offset 4"), std::string::npos) << message;
  message = RefusalOf("Zm9v\xC3\xA9m9");
  EXPECT_NE(message.find("byte 0xc3 at offset 4"), std::string::npos) << message;
}

TEST(Base64, TheUrlSafeAlphabetAndWhitespaceAreRefused) {
  EXPECT_NE(RefusalOf("Zm9v-_8=").find("'-' at offset 4"), std::string::npos);
  EXPECT_NE(RefusalOf("Zm9v\nZm9v").find("multiple of 4"), std::string::npos);
  EXPECT_NE(RefusalOf("Zm9v\nZm9").find("byte 0x0a at offset 4"), std::string::npos);
  EXPECT_NE(RefusalOf("Zm9v Zm9").find("' ' at offset 4"), std::string::npos);
}

TEST(Base64, ALengthThatIsNotAMultipleOfFourIsRefused) {
  for (std::string_view text : {"Z", "Zm", "Zm9", "Zm9vZ", "Zg="}) {
    std::string message = RefusalOf(text);
    EXPECT_NE(message.find("length " + std::to_string(text.size()) + " is not a multiple of 4"),
              std::string::npos)
        << message;
  }
}

TEST(Base64, MisplacedPaddingIsRefusedWithItsOffset) {
  const std::pair<std::string_view, size_t> cases[] = {
      {"====", 0},     {"Z===", 1},     {"=Zg=", 0},     {"Zg=a", 2},
      {"Zg==Zg==", 2}, {"Zm9v=m9v", 4}, {"Zm8=Zm9v", 3},
  };
  for (const auto& [text, offset] : cases) {
    std::string message = RefusalOf(text);
    EXPECT_NE(message.find("padding '=' at offset " + std::to_string(offset) + " is misplaced"),
              std::string::npos)
        << text << ": " << message;
  }
}

TEST(Base64, LeftoverBitsBeforeThePaddingAreAccepted) {
  // RFC 4648 section 3.5 lets a decoder accept or refuse these; we accept.
  EXPECT_EQ(*Base64Decode("Zh=="), "f");
  EXPECT_EQ(*Base64Decode("Zm9="), "fo");
}

}  // namespace
}  // namespace sessiondb::blob
