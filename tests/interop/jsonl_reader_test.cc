// JsonlReader's cleaning of what editors and crashed writers leave in JSON
// Lines files: a byte-order mark, bytes that are not UTF-8, a last line cut
// short, and the reasons given for lines that are not JSON objects.
#include "interop/jsonl_reader.h"

#include <fstream>
#include <string>

#include "core/text_rules.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

using interop::JsonLineProblem;
using interop::JsonlReader;

std::string Write(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.Sub("lines.jsonl");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

std::vector<JsonlReader::Line> ReadAll(JsonlReader& reader, std::vector<std::string>* texts) {
  std::vector<JsonlReader::Line> lines;
  JsonlReader::Line line;
  while (true) {
    auto more = reader.Next(&line);
    EXPECT_TRUE(more.has_value());
    if (!more || !*more) break;
    lines.push_back(line);
    texts->emplace_back(line.text);
  }
  return lines;
}

TEST(JsonlReaderCleaning, AByteOrderMarkIsNotPartOfTheFirstLine) {
  TempDir dir;
  auto reader = JsonlReader::Open(Write(dir, "\xEF\xBB\xBF{\"a\":1}\r\n{\"b\":2}\n"));
  ASSERT_TRUE(reader.has_value());
  std::vector<std::string> texts;
  auto lines = ReadAll(**reader, &texts);
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_EQ(texts[0], "{\"a\":1}");
  EXPECT_EQ(texts[1], "{\"b\":2}");
  EXPECT_EQ(lines[0].offset, 3);
  EXPECT_EQ(lines[1].offset, 12);
  // Read back by place, the first line comes without its mark again.
  auto again = (*reader)->ReadAt(lines[0].offset, lines[0].raw_size);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(*again, "{\"a\":1}");
}

TEST(JsonlReaderCleaning, InvalidUtf8BecomesReplacementCharactersNotALostLine) {
  TempDir dir;
  auto reader =
      JsonlReader::Open(Write(dir, "{\"t\":\"caf\xE9 \xF0\x9F\x98\"}\n{\"t\":\"ok \xC3\xA9\"}\n"));
  ASSERT_TRUE(reader.has_value());
  std::vector<std::string> texts;
  auto lines = ReadAll(**reader, &texts);
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_EQ(texts[0], "{\"t\":\"caf\xEF\xBF\xBD \xEF\xBF\xBD\"}");
  EXPECT_TRUE(lines[0].repaired_utf8);
  EXPECT_TRUE(IsValidUtf8(texts[0]));
  EXPECT_FALSE(JsonLineProblem(texts[0], false).has_value());
  EXPECT_EQ(texts[1], "{\"t\":\"ok \xC3\xA9\"}");
  EXPECT_FALSE(lines[1].repaired_utf8);
  auto again = (*reader)->ReadAt(lines[0].offset, lines[0].raw_size);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, texts[0]);
}

TEST(JsonlReaderCleaning, ALineThatOutgrowsTheLimitOnceRepairedIsTooLong) {
  TempDir dir;
  // 10 bad bytes become 30: over a 20-byte limit only once repaired.
  auto reader = JsonlReader::Open(Write(dir, std::string(10, '\xFF') + "\n{}\n"), 20);
  ASSERT_TRUE(reader.has_value());
  std::vector<std::string> texts;
  auto lines = ReadAll(**reader, &texts);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].too_long);
  EXPECT_TRUE(texts[0].empty());
  EXPECT_EQ(texts[1], "{}");
}

TEST(JsonlReaderCleaning, ReadAtDoesNotMoveTheSequentialReading) {
  TempDir dir;
  auto reader = JsonlReader::Open(Write(dir, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"));
  ASSERT_TRUE(reader.has_value());
  JsonlReader::Line first;
  ASSERT_TRUE(*(*reader)->Next(&first));
  const int64_t offset = first.offset;
  const int64_t size = first.raw_size;
  JsonlReader::Line line;
  ASSERT_TRUE(*(*reader)->Next(&line));
  EXPECT_EQ(*(*reader)->ReadAt(offset, size), "{\"n\":1}");
  ASSERT_TRUE(*(*reader)->Next(&line));
  EXPECT_EQ(line.text, "{\"n\":3}");
  // A line that is no longer all there says so.
  EXPECT_FALSE((*reader)->ReadAt(line.offset, 1000).has_value());
}

TEST(JsonlReaderCleaning, EachLineThatIsNotAnObjectGetsItsTrueReason) {
  EXPECT_EQ(JsonLineProblem("[1,2]", false), "the line is JSON but an array, not an object");
  EXPECT_EQ(JsonLineProblem("\"text\"", false), "the line is JSON but a string, not an object");
  EXPECT_EQ(JsonLineProblem("42", false), "the line is JSON but a number, not an object");
  auto cut = JsonLineProblem("{\"a\":\"unfinished", true);
  ASSERT_TRUE(cut.has_value());
  EXPECT_TRUE(cut->starts_with("the last line is cut short")) << *cut;
  auto cut_object = JsonLineProblem("{\"a\":1,", true);
  ASSERT_TRUE(cut_object.has_value());
  EXPECT_TRUE(cut_object->starts_with("the last line is cut short")) << *cut_object;
  auto cut_literal = JsonLineProblem("{\"a\":1,\"b\":fa", true);
  ASSERT_TRUE(cut_literal.has_value());
  EXPECT_TRUE(cut_literal->starts_with("the last line is cut short")) << *cut_literal;
  // Not cut short: broken, whether or not a newline follows.
  auto broken = JsonLineProblem("{\"a\": tru}", true);
  ASSERT_TRUE(broken.has_value());
  EXPECT_TRUE(broken->starts_with("the line is not valid JSON: ")) << *broken;
  auto prose = JsonLineProblem("this is not json", false);
  ASSERT_TRUE(prose.has_value());
  EXPECT_TRUE(prose->starts_with("the line is not valid JSON: ")) << *prose;
  // The parser's quote of a long broken string is cut, and stays UTF-8.
  auto long_reason = JsonLineProblem("{\"a\":\"" + std::string(100000, 'x') + "\xC3\xA9", false);
  ASSERT_TRUE(long_reason.has_value());
  EXPECT_LT(long_reason->size(), 400u);
  EXPECT_TRUE(IsValidUtf8(*long_reason));
  EXPECT_FALSE(JsonLineProblem("{\"a\":1}", false).has_value());
}

}  // namespace
}  // namespace sessiondb::testing
