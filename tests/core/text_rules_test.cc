#include "core/text_rules.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace sessiondb {
namespace {

TEST(Utf8, WellFormedTextIsAccepted) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80"));
}

TEST(Utf8, MalformedSequencesAreRejected) {
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("a\x80"));  // stray continuation byte
}

// One U+FFFD per maximal subpart, the rest kept: what WHATWG's decoder does.
TEST(Utf8, InvalidSequencesAreReplacedAndTheRestKept) {
  const std::string r(kReplacementChar);
  EXPECT_EQ(ToValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(ToValidUtf8("a\xFFz"), "a" + r + "z");
  EXPECT_EQ(ToValidUtf8("a\xF0\x9F\x98z"), "a" + r + "z");    // a cut-short emoji: one
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), r + r);                  // overlong: two
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), r + r + r);          // a surrogate: three
  EXPECT_EQ(ToValidUtf8("\xF4\x90\x80\x80"), r + r + r + r);  // past U+10FFFF
  EXPECT_EQ(ToValidUtf8("\xE6\x97 \xE6\x97\xA5"), r + " \xE6\x97\xA5");
  EXPECT_EQ(ToValidUtf8("end\xC3"), "end" + r);
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\x80\x81\xFE\xC2\xE0\x80\xF0\x80")));
}

TEST(Utf8, ReplacementStopsAtTheCap) {
  std::string out;
  EXPECT_TRUE(ReplaceInvalidUtf8("ab\xFF", 5, &out));
  EXPECT_EQ(out, "ab\xEF\xBF\xBD");
  // Three bad bytes become nine: past a cap of 8.
  EXPECT_FALSE(ReplaceInvalidUtf8("\xFF\xFF\xFF", 8, &out));
  EXPECT_FALSE(ReplaceInvalidUtf8("valid but long", 4, &out));
}

TEST(Utf8, CodePointsAreCountedNotBytes) {
  EXPECT_EQ(CountCodePoints("caf\xC3\xA9"), 4u);
  EXPECT_EQ(CountCodePoints("\xF0\x9F\x98\x80"), 1u);
}

TEST(Whitespace, RunsCollapseAndEndsAreTrimmed) {
  EXPECT_EQ(CollapseWhitespace("  a \n\n b\t c  "), "a b c");
  EXPECT_EQ(CollapseWhitespace(" \n "), "");
}

TEST(SessionIds, OnlySafeCharactersAreAccepted) {
  EXPECT_TRUE(ValidateSessionId("0193a-b_c.d").ok());
  EXPECT_TRUE(ValidateSessionId(std::string(128, 'a')).ok());
  EXPECT_FALSE(ValidateSessionId(std::string(129, 'a')).ok());
  EXPECT_FALSE(ValidateSessionId("a/b").ok());
  EXPECT_FALSE(ValidateSessionId("..").ok());
  EXPECT_FALSE(ValidateSessionId("").ok());
  Status s = ValidateSessionId("ab/cd");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("offset 2"), std::string::npos);
}

TEST(Titles, ControlCharactersAreStrippedAndWhitespaceSeparates) {
  EXPECT_EQ(StripControls(std::string("a\x1b[1mb\0c\x7f\xC2\x9B"
                                      "d\te\nf",
                                      16)),
            "a[1mbcd e f");
  // Other two-byte sequences starting with 0xC2 are ordinary letters.
  EXPECT_EQ(StripControls("\xC2\xA9 \xC3\xA9"), "\xC2\xA9 \xC3\xA9");
}

TEST(Titles, ALongTitleIsCutAtACodePointWithAnEllipsis) {
  std::string long_title;
  for (int i = 0; i < 300; ++i) long_title += "\xF0\x9F\x98\x80";  // four bytes each
  const std::string title = SanitizeTitle(long_title);
  EXPECT_TRUE(IsValidUtf8(title));
  EXPECT_EQ(CountCodePoints(title), kMaxTitleLength);
  EXPECT_TRUE(title.ends_with(kEllipsis));
  EXPECT_EQ(SanitizeTitle(std::string(kMaxTitleLength, 'x')), std::string(kMaxTitleLength, 'x'));
  EXPECT_EQ(SanitizeTitle("  \x1b]0;x\x07  "), "]0;x");
}

TEST(Titles, AutomaticTitlesAndPreviewsHaveNoControlCharacters) {
  EXPECT_EQ(MakeTitle("\x1b[31mhi\x1b[0m"), "[31mhi[0m");
  EXPECT_EQ(MakePreview(std::string("x\0y", 3)), "xy");
}

TEST(IndexEntryRules, TheFirstTextFixesTheTitleAndTheFirstUserTextThePreview) {
  TitleAndPreview entry;
  ApplyMessageText(Role::kAssistant, "", &entry);  // no text: decides nothing
  EXPECT_FALSE(entry.title_fixed);
  ApplyMessageText(Role::kAssistant, "Hello from the assistant", &entry);
  EXPECT_TRUE(entry.title_fixed);
  EXPECT_EQ(entry.title, "Hello from the assistant");
  EXPECT_EQ(entry.preview, "");  // not a user message
  ApplyMessageText(Role::kUser, "first user words", &entry);
  ApplyMessageText(Role::kUser, "second user words", &entry);
  EXPECT_EQ(entry.title, "Hello from the assistant");
  EXPECT_EQ(entry.preview, "first user words");
}

TEST(IndexEntryRules, APruneScrubsATitleOrPreviewMadeFromPrunedText) {
  const std::vector<std::pair<Role, std::string>> pruned = {{Role::kUser, "my secret plan"},
                                                            {Role::kAssistant, "an answer"}};
  std::string title = MakeTitle("my secret plan");
  std::string preview = MakePreview("my secret plan");
  ScrubPrunedTexts(pruned, "A summary", &title, &preview);
  EXPECT_EQ(title, "A summary");
  EXPECT_EQ(preview, "");
  // A renamed title and a preview from a kept message stay.
  std::string renamed = "Renamed";
  std::string kept = MakePreview("kept words");
  ScrubPrunedTexts(pruned, "A summary", &renamed, &kept);
  EXPECT_EQ(renamed, "Renamed");
  EXPECT_EQ(kept, "kept words");
}

TEST(IndexEntryRules, AForkTakesTheAskedTitleElseTheParentsWhenItInheritsAnything) {
  TitleAndPreview derived{.title_fixed = true, .title = "Inherited", .preview = "inherited words"};
  TitleAndPreview asked = ForkTitleAndPreview("Parent", 3, "Asked", derived);
  EXPECT_EQ(asked.title, "Asked");
  EXPECT_TRUE(asked.title_fixed);
  EXPECT_EQ(asked.preview, "inherited words");

  TitleAndPreview inherited = ForkTitleAndPreview("Parent", 3, "", derived);
  EXPECT_EQ(inherited.title, "Parent");
  EXPECT_TRUE(inherited.title_fixed);

  // Forked before the first event: nothing inherited, the default title, not fixed.
  TitleAndPreview empty = ForkTitleAndPreview("Parent", 0, "", TitleAndPreview{});
  EXPECT_EQ(empty.title, kDefaultTitle);
  EXPECT_FALSE(empty.title_fixed);
  EXPECT_EQ(empty.preview, "");

  // A parent with the default title and no text yet leaves the fork's title open.
  TitleAndPreview open = ForkTitleAndPreview(kDefaultTitle, 2, "", TitleAndPreview{});
  EXPECT_FALSE(open.title_fixed);
}

}  // namespace
}  // namespace sessiondb
