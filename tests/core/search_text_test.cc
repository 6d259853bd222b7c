// The searchable text of an event (core/search_text.h): its text, then each
// tool call's name and arguments and each tool result's output, one per line.
// SearchText reads stored bodies with simdjson; MessageSearchText builds the
// same text from the Message a writer holds. Both must agree with what the
// body says as nlohmann (every other reader of bodies) reads it, for bodies
// the codec writes and for bodies a damaged or hostile file holds.
#include "core/search_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "core/message_codec.h"

namespace sessiondb::testing {
namespace {

// What the text is by nlohmann's reading of the body (ParseJson, with its
// nesting cap): the reference the index must match.
std::string ReferenceSearchText(std::string_view text, std::string_view body) {
  std::string out(text);
  if (body.empty() || body.find("\"tool_") == std::string_view::npos) return out;
  nlohmann::json doc = ParseJson(body).value_or(nlohmann::json());
  if (!doc.is_object()) return out;
  auto parts = doc.find("parts");
  if (parts == doc.end() || !parts->is_array()) return out;
  auto str = [](const nlohmann::json& part, const char* key) {
    auto it = part.find(key);
    return it != part.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const nlohmann::json& part : *parts) {
    if (!part.is_object()) continue;
    const std::string type = str(part, "type");
    if (type == "tool_call") out += '\n' + str(part, "name") + ' ' + str(part, "arguments");
    if (type == "tool_result") out += '\n' + str(part, "output");
  }
  return out;
}

// Text with the characters JSON escapes and UTF-8 of every length.
std::string AwkwardText(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {
      "plain",  " ", "\"quoted\"",    "back\\slash", "tab\there", "new\nline", "\x01",  "é",
      "日本語", "😀", "{\"a\":[1,2]}", "tool_call",   "\"tool_",   "</script>", "\u2028"};
  std::string out;
  const int n = static_cast<int>(rng() % 8);
  for (int i = 0; i < n; ++i) out += kPieces[rng() % kPieces.size()];
  return out;
}

TEST(SearchText, EqualsTheBodyAsNlohmannReadsItForBodiesTheCodecWrites) {
  std::mt19937 rng(19);
  for (int round = 0; round < 500; ++round) {
    Message m;
    m.id = "m" + std::to_string(round);
    const int parts = 1 + static_cast<int>(rng() % 4);
    for (int p = 0; p < parts; ++p) {
      switch (rng() % 3) {
        case 0:
          m.parts.push_back(Part::Text(AwkwardText(rng)));
          break;
        case 1: {
          Part call;
          call.type = PartType::kToolCall;
          call.tool_call_id = "c" + std::to_string(p);
          call.tool_name = AwkwardText(rng);
          call.arguments_json = "{\"path\":" + nlohmann::json(AwkwardText(rng)).dump() + "}";
          m.parts.push_back(call);
          break;
        }
        default: {
          Part result;
          result.type = PartType::kToolResult;
          result.tool_call_id = "c" + std::to_string(p);
          result.text = AwkwardText(rng);
          m.parts.push_back(result);
        }
      }
    }
    auto body = EncodeMessageBody(m);
    ASSERT_TRUE(body) << body.error().ToString();
    const std::string text = m.Text();
    const std::string stored = body->value_or("");
    const std::string expected = ReferenceSearchText(text, stored);
    EXPECT_EQ(SearchText(text, stored), expected) << stored;
    // A writer that still holds the message builds the same text.
    EXPECT_EQ(MessageSearchText(text, m), expected) << stored;
  }
}

TEST(SearchText, ADamagedOrHostileBodyAddsWhatNlohmannReadsFromIt) {
  const std::string call = R"({"type":"tool_call","name":"grep","arguments":"{\"q\":\"x\"}"})";
  std::string deep = R"({"parts":[)" + call + ",";
  for (int i = 0; i < kMaxJsonDepth + 5; ++i) deep += "[";
  for (int i = 0; i < kMaxJsonDepth + 5; ++i) deep += "]";
  deep += "]}";
  const std::vector<std::string> bodies = {
      // What the index adds.
      R"({"v":1,"parts":[)" + call + R"(,{"type":"tool_result","output":"found it"}]})",
      // Repeated keys: the last one counts, as in nlohmann's tree.
      R"({"parts":[],"parts":[)" + call + "]}",
      R"({"parts":[{"type":"tool_result","output":"first","output":"second"}]})",
      R"({"parts":[{"type":"tool_result","output":"first","output":7}]})",
      // Fields of the wrong type, parts that are not objects.
      R"({"parts":[1,"tool_call",null,{"type":"tool_call","name":7,"arguments":{}}]})",
      R"({"parts":{"type":"tool_call"}})",
      R"(["tool_call"])",
      // Not JSON, or not only JSON: nothing is added.
      R"({"parts":[)" + call,
      R"({"parts":[)" + call + "]} trailing",
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"bad \xff utf-8\"}]}",
      R"({"parts":[{"type":"tool_result","output":"lone \ud800 surrogate"}]})",
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"nul \\u0000 inside\"}]}",
      // Deeper than the cap everywhere else in sessiondb: nothing is added.
      deep,
      // Escapes, in keys too, and UTF-8 of every length.
      R"({"\u0070arts":[{"type":"tool_result","output":"a\u00e9\ud83d\ude00\n\t\/\"\\b"}]})",
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"}]"
      "}",
      // Malformed UTF-8: overlong, an encoded surrogate, past U+10FFFF, cut short.
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"\xc0\x80\"}]}",
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"\xed\xa0\x80\"}]}",
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"\xf4\x90\x80\x80\"}]}",
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"\xe6\x97\"}]}",
      // A raw control character, a bad escape, a lone low surrogate.
      "{\"parts\":[{\"type\":\"tool_result\",\"output\":\"tab\tinside\"}]}",
      R"({"parts":[{"type":"tool_result","output":"\x41"}]})",
      R"({"parts":[{"type":"tool_result","output":"\udc00"}]})",
      // Numbers: too large for a double, tiny, and not numbers.
      R"({"n":1e999,"parts":[)" + call + "]}",
      R"({"n":-1.5E-999,"parts":[)" + call + "]}",
      R"({"n":123456789012345678901234567890,"parts":[)" + call + "]}",
      R"({"n":01,"parts":[)" + call + "]}",
      R"({"n":1.,"parts":[)" + call + "]}",
      R"({"n":-,"parts":[)" + call + "]}",
      R"({"n":[true,false,null,{},[],{"a":[{}]}],"parts":[)" + call + "]}",
      R"({"n":tru,"parts":[)" + call + "]}",
      // Commas and colons out of place.
      R"({"parts":[)" + call + ",]}",
      R"({"parts":[)" + call + "],}",
      R"({"parts" [)" + call + "]}",
      R"({"a":[1,,2],"parts":[)" + call + "]}",
      R"({"a":{"b" 1},"parts":[)" + call + "]}",
      // Whitespace everywhere, and a byte order mark.
      " \t\r\n{ \"parts\" :\n[ " + call + " ] } \n",
      "\xef\xbb\xbf{\"parts\":[" + call + "]}",
      // nlohmann stops at a NUL byte after the document (fuzz/search_text found it).
      std::string(R"({"parts":[)") + call + "]}" + std::string(3, '\0') + "junk",
      std::string(R"({"parts":[)") + call + std::string(1, '\0') + "]}",
      "",
  };
  for (const std::string& body : bodies) {
    EXPECT_EQ(SearchText("text", body), ReferenceSearchText("text", body)) << body;
  }
  EXPECT_EQ(SearchText("t", bodies[0]), "t\ngrep {\"q\":\"x\"}\nfound it");
  EXPECT_EQ(SearchText("t", bodies[1]), "t\ngrep {\"q\":\"x\"}");
  EXPECT_EQ(SearchText("t", deep), "t");
  // A body whose member "x" holds `levels` nested arrays under the root.
  auto nested = [&](int levels) {
    std::string body = R"({"parts":[)" + call + R"(],"x":)";
    body += std::string(static_cast<size_t>(levels), '[');
    body += std::string(static_cast<size_t>(levels), ']');
    return body + "}";
  };
  // The deepest nesting the cap allows is read; one level more is refused.
  const std::string deepest = nested(kMaxJsonDepth - 1);
  EXPECT_EQ(SearchText("t", deepest), ReferenceSearchText("t", deepest));
  EXPECT_EQ(SearchText("t", deepest), "t\ngrep {\"q\":\"x\"}");
  const std::string too_deep = nested(kMaxJsonDepth);
  EXPECT_EQ(SearchText("t", too_deep), ReferenceSearchText("t", too_deep));
  EXPECT_EQ(SearchText("t", too_deep), "t");
}

// Every body cut short at every byte, and with a byte changed at every
// position: whatever nlohmann reads from it, the index reads.
TEST(SearchText, EveryTruncationAndByteFlipReadsAsNlohmannReadsIt) {
  const std::string body =
      R"({"v":1,"parts":[{"type":"text","text":"hi"},{"type":"tool_call","id":"c1",)"
      R"("name":"grep","arguments":"{\"q\":\"\u00e9\"}","n":[1.5e3,-0,true,null]},)"
      R"({"type":"tool_result","tool_call_id":"c1","output":"found \ud83d\ude00 it"}]})";
  ASSERT_NE(ReferenceSearchText("t", body), "t");
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    const std::string part = body.substr(0, cut);
    EXPECT_EQ(SearchText("t", part), ReferenceSearchText("t", part)) << part;
  }
  const std::string flips = "\"\\{}[],:0e.-x \x01\x80\xff";
  for (size_t at = 0; at < body.size(); ++at) {
    for (char c : flips) {
      std::string changed = body;
      changed[at] = c;
      EXPECT_EQ(SearchText("t", changed), ReferenceSearchText("t", changed)) << changed;
    }
  }
}

TEST(SearchText, ABodyLargerThanTheSharedParserIsReadWhole) {
  const std::string output(3 << 20, 'z');
  const std::string body = R"({"parts":[{"type":"tool_result","output":")" + output + R"("}]})";
  EXPECT_EQ(SearchText("t", body), "t\n" + output);
  // And the shared parser still reads small bodies after it.
  EXPECT_EQ(SearchText("t", R"({"parts":[{"type":"tool_result","output":"ok"}]})"), "t\nok");
}

}  // namespace
}  // namespace sessiondb::testing
