// Standard base64: round trips, the RFC 4648 vectors and strict refusals.
#include "blob/base64.h"

#include <random>
#include <string>
#include <vector>

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

// ---- Decoding into a buffer, reporting what is final (a staged image) ------

// Decodes `text` with Base64DecodeInto, checking at every report that the
// bytes reported final already equal `want`'s; returns the reports.
std::vector<size_t> DecodeIntoChecked(std::string_view text, const std::string& want,
                                      size_t report_every) {
  std::string out(want.size(), '\0');
  std::vector<size_t> reports;
  Status s = Base64DecodeInto(text, out.data(), report_every, [&](size_t n) {
    EXPECT_LE(n, want.size());
    EXPECT_EQ(out.compare(0, n, want, 0, n), 0)
        << "reported " << n << " bytes before they were final";
    reports.push_back(n);
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out, want);
  return reports;
}

TEST(Base64DecodeInto, DecodesWhatBase64DecodeDoesForEveryLengthFromZeroToThreeHundred) {
  for (size_t len = 0; len <= 300; ++len) {
    const std::string bytes = RandomBytes(len, static_cast<uint32_t>(len) + 1000);
    const std::string encoded = Base64Encode(bytes);
    ASSERT_EQ(*Base64DecodedSize(encoded), len);
    const std::vector<size_t> reports = DecodeIntoChecked(encoded, bytes, 7);
    if (len == 0) continue;
    ASSERT_FALSE(reports.empty()) << len;
    EXPECT_EQ(reports.back(), len) << "the last report is the whole size";
  }
}

TEST(Base64DecodeInto, ReportsAMebibyteInGrowingStepsOfAboutTheAskedSize) {
  const std::string bytes = RandomBytes(1 << 20, 43);
  const std::vector<size_t> reports = DecodeIntoChecked(Base64Encode(bytes), bytes, 128 * 1024);
  ASSERT_GE(reports.size(), 8u);
  ASSERT_LE(reports.size(), 9u);
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_GT(reports[i], reports[i - 1]);
    EXPECT_GE(reports[i] - reports[i - 1], i + 1 < reports.size() ? 128u * 1024 : 1u);
  }
  EXPECT_EQ(reports.back(), bytes.size());
}

TEST(Base64DecodeInto, RefusesWhatBase64DecodeRefusesWithTheSameMessage) {
  const std::string good = Base64Encode(RandomBytes(200 * 1024, 44));
  std::vector<std::string> bad = {"Zm9v*m9v", "Zm9vYg", "Zm=vYg==", "===="};
  for (size_t at : {size_t{5}, good.size() / 2, good.size() - 6, good.size() - 3}) {
    std::string text = good;
    text[at] = '*';
    bad.push_back(text);
  }
  for (const std::string& text : bad) {
    const std::string want = RefusalOf(text);
    Result<size_t> size = Base64DecodedSize(text);
    if (!size) {
      EXPECT_EQ(size.error().message(), want);
      continue;
    }
    std::string out(*size, '\0');
    size_t last_report = 0;
    Status s = Base64DecodeInto(text, out.data(), 4096, [&](size_t n) { last_report = n; });
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), want);
    EXPECT_LT(last_report, *size) << "a refused text was reported whole";
  }
}

}  // namespace
}  // namespace sessiondb::blob
