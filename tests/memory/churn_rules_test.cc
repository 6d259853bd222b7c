// Churn tiers at their boundaries, and code previews.
#include "memory/churn_rules.h"

#include <string>

#include "gtest/gtest.h"
#include "memory/language.h"

namespace sessiondb::memory {
namespace {

TEST(ClassifyChurn, ThirtyDayCountsChangeTierExactlyAtTheBoundaries) {
  EXPECT_EQ(ClassifyChurn(0, 0), ChurnTier::kGold);
  EXPECT_EQ(ClassifyChurn(2, 0), ChurnTier::kGold);
  EXPECT_EQ(ClassifyChurn(3, 0), ChurnTier::kSilver);
  EXPECT_EQ(ClassifyChurn(10, 0), ChurnTier::kSilver);
  EXPECT_EQ(ClassifyChurn(11, 0), ChurnTier::kBronze);
  EXPECT_EQ(ClassifyChurn(20, 0), ChurnTier::kBronze);
  EXPECT_EQ(ClassifyChurn(21, 0), ChurnTier::kRed);
}

TEST(ClassifyChurn, FiveEditsInADayAreRedWhateverTheMonth) {
  EXPECT_EQ(ClassifyChurn(4, 4), ChurnTier::kSilver);
  EXPECT_EQ(ClassifyChurn(5, 5), ChurnTier::kRed);
  EXPECT_EQ(ClassifyChurn(2, 4), ChurnTier::kGold);
  EXPECT_EQ(ClassifyChurn(15, 4), ChurnTier::kBronze);
  EXPECT_EQ(ClassifyChurn(15, 5), ChurnTier::kRed);
}

TEST(PreviewCode, CodeThatFitsIsUnchanged) {
  EXPECT_EQ(PreviewCode("int x = 1;\n"), "int x = 1;\n");
  const std::string exactly(400, 'a');
  EXPECT_EQ(PreviewCode(exactly), exactly);
  EXPECT_EQ(PreviewCode(""), "");
}

TEST(PreviewCode, LongCodeIsCutAtALineBreakWithTheMarker) {
  std::string code;
  for (int i = 0; i < 40; ++i) code += "line number " + std::to_string(100 + i) + "\n";
  ASSERT_EQ(code.size(), 40u * 16);
  // 24 whole lines end at byte 384; the 25th line's break is byte 399, inside the limit.
  EXPECT_EQ(PreviewCode(code), code.substr(0, 25 * 16 - 1) + "\n... (truncated)");
  // With a limit of 398 the 25th line no longer fits.
  EXPECT_EQ(PreviewCode(code, 398), code.substr(0, 24 * 16 - 1) + "\n... (truncated)");
}

TEST(PreviewCode, ALongLineIsCutAtFourHundredBytes) {
  const std::string code(1000, 'x');
  EXPECT_EQ(PreviewCode(code), std::string(400, 'x') + "\n... (truncated)");
  EXPECT_EQ(PreviewCode(code, 10), std::string(10, 'x') + "\n... (truncated)");
}

TEST(PreviewCode, AMultiByteCharacterAtTheCutIsNotSplit) {
  // 399 ASCII bytes, then "é" (2 bytes) straddling byte 400, then more.
  const std::string code = std::string(399, 'a') + "\xC3\xA9" + std::string(50, 'b');
  EXPECT_EQ(PreviewCode(code), std::string(399, 'a') + "\n... (truncated)");
  // A 4-byte character (U+1F600) starting at byte 398.
  const std::string emoji = std::string(398, 'a') + "\xF0\x9F\x98\x80" + "tail";
  EXPECT_EQ(PreviewCode(emoji), std::string(398, 'a') + "\n... (truncated)");
  // Ending exactly at the character's end keeps it.
  const std::string whole = std::string(398, 'a') + "\xC3\xA9" + "zz";
  EXPECT_EQ(PreviewCode(whole), std::string(398, 'a') + "\xC3\xA9" + "\n... (truncated)");
}

TEST(ChurnTierNames, EveryTierRoundTripsThroughItsName) {
  const ChurnTier tiers[] = {ChurnTier::kGold, ChurnTier::kSilver, ChurnTier::kBronze,
                             ChurnTier::kRed};
  const std::string_view names[] = {"gold", "silver", "bronze", "red"};
  for (size_t i = 0; i < std::size(tiers); ++i) {
    EXPECT_EQ(ChurnTierName(tiers[i]), names[i]);
    auto parsed = ParseChurnTier(names[i]);
    ASSERT_TRUE(parsed) << names[i];
    EXPECT_EQ(*parsed, tiers[i]);
  }
}

TEST(ChurnTierNames, AnUnknownNameIsRefusedWithTheValidOnes) {
  for (std::string_view name : {"", "Gold", "platinum"}) {
    auto parsed = ParseChurnTier(name);
    ASSERT_FALSE(parsed) << name;
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.error().message(), "unknown churn tier '" + std::string(name) +
                                            "'; expected one of: gold, silver, bronze, red");
  }
}

TEST(LanguageForPath, MapsExtensionsIgnoringCase) {
  EXPECT_EQ(LanguageForPath("a/b/app.py"), "python");
  EXPECT_EQ(LanguageForPath("stubs.PYI"), "python");
  for (const char* p : {"x.js", "x.jsx", "x.mjs", "x.cjs"})
    EXPECT_EQ(LanguageForPath(p), "javascript") << p;
  EXPECT_EQ(LanguageForPath("x.ts"), "typescript");
  EXPECT_EQ(LanguageForPath("x.TSX"), "typescript");
  EXPECT_EQ(LanguageForPath("main.go"), "go");
  EXPECT_EQ(LanguageForPath("lib.rs"), "rust");
  EXPECT_EQ(LanguageForPath("x.c"), "c");
  EXPECT_EQ(LanguageForPath("x.h"), "c");
  for (const char* p : {"x.cc", "x.cpp", "x.cxx", "x.hpp", "x.hh", "x.hxx", "X.CPP"}) {
    EXPECT_EQ(LanguageForPath(p), "cpp") << p;
  }
}

TEST(LanguageForPath, UnknownOrMissingExtensionsAreEmpty) {
  EXPECT_EQ(LanguageForPath("README.md"), "");
  EXPECT_EQ(LanguageForPath("Makefile"), "");
  EXPECT_EQ(LanguageForPath("dir.py/Makefile"), "");
  EXPECT_EQ(LanguageForPath("trailing."), "");
  EXPECT_EQ(LanguageForPath(""), "");
}

}  // namespace
}  // namespace sessiondb::memory
