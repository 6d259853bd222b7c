// Golden files: each case's projection in each provider shape, compared with
// tests/golden/projection/<case>.<format>.json after both are parsed (so key
// order and indentation do not matter). SESSIONDB_UPDATE_GOLDEN=1 rewrites
// the files instead of comparing; read every rewritten file before committing
// it: a golden says what the rules require, not what the code printed.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "projection_test_support.h"

namespace sessiondb {
// Test names and failure messages show "anthropic", not the enum's bytes.
static void PrintTo(ProviderFormat format, std::ostream* out) {
  *out << ProviderFormatName(format);
}
}  // namespace sessiondb

namespace sessiondb::testing {
namespace {

const char kPixelId[] = "res_0192f3a0-7c1e-7a00-8000-000000000001";
const char kGoneId[] = "res_0192f3a0-7c1e-7a00-8000-000000000002";
const char kLostId[] = "res_0192f3a0-7c1e-7a00-8000-000000000003";
const char kReportId[] = "res_0192f3a0-7c1e-7a00-8000-000000000004";

Resource Pixel() { return PngResource(kPixelId, "pixel.png"); }

std::vector<Event> PlainText() {
  return {
      TextEvent(1, Role::kSystem, "You are a terse assistant."),
      TextEvent(2, Role::kUser, "Hello!"),
      MessageEvent(3, Role::kAssistant,
                   {Part::Reasoning("The user greets me; greet back briefly."),
                    Part::Text("Hi. What do you need?")}),
      MessageEvent(4, Role::kUser, {Part::Text("Name a prime number."), Part::Text("Just one.")})};
}

std::vector<Event> Tools() {
  return {TextEvent(1, Role::kUser, "What is the weather in Paris and in Rome?"),
          MessageEvent(
              2, Role::kAssistant,
              {Part::Text("Let me check both."),
               Part::ToolCall("call_1", "get_weather", R"({"city":"Paris"})"),
               Part::ToolCall("call_2", "get_weather", R"({"city":"Rome","units":"metric"})")}),
          MessageEvent(3, Role::kTool,
                       {Part::ToolResult("call_1", "18 °C and sunny"),
                        Part::ToolResult("call_2", "weather service timed out", true)}),
          TextEvent(4, Role::kAssistant,
                    "Paris: 18 °C and sunny. Rome: the weather service timed out.")};
}

std::vector<Event> ImageNewest() {
  return {
      TextEvent(1, Role::kSystem, "You describe images."),
      MessageEvent(2, Role::kUser, {Part::Text("What is in this picture?"), ImagePart(Pixel())})};
}

std::vector<Event> ImageEarlier() {
  return {
      MessageEvent(1, Role::kUser, {Part::Text("What is in this picture?"), ImagePart(Pixel())}),
      TextEvent(2, Role::kAssistant, "A single black pixel."),
      TextEvent(3, Role::kUser, "How large is it?")};
}

std::vector<Event> ResourceViewFresh() {
  return {
      MessageEvent(1, Role::kUser, {Part::Text("What is in this picture?"), ImagePart(Pixel())}),
      TextEvent(2, Role::kAssistant, "A single black pixel."),
      TextEvent(3, Role::kUser, "Look at the picture again: is it really black?"),
      ViewEvent(4, Pixel(), "the user asked to look again", 1)};
}

std::vector<Event> ResourceViewSeen() {
  std::vector<Event> events = ResourceViewFresh();
  events.push_back(TextEvent(5, Role::kAssistant, "Yes, the pixel is black."));
  events.push_back(TextEvent(6, Role::kUser, "Thanks."));
  return events;
}

std::vector<Event> MissingBlob() {
  Resource gone = PngResource(kGoneId, "scan-1.png", MakePng(1, 1, "gone"));
  gone.missing = true;  // the store found the blob absent when it read the message
  Resource lost = PngResource(kLostId, "scan-2.png", MakePng(1, 1, "lost"));  // not in FakeBlobs
  return {MessageEvent(1, Role::kUser, {Part::Text("Here is the first scan."), ImagePart(gone)}),
          TextEvent(2, Role::kAssistant, "I cannot open that scan."),
          MessageEvent(3, Role::kUser, {Part::Text("Try this one instead."), ImagePart(lost)})};
}

std::vector<Event> CompactionWithImage() {
  return {
      MessageEvent(1, Role::kUser, {Part::Text("What is in this picture?"), ImagePart(Pixel())}),
      TextEvent(2, Role::kAssistant, "A single black pixel."),
      TextEvent(3, Role::kUser, "Thanks."),
      TextEvent(4, Role::kAssistant, "You are welcome."),
      CompactionEvent(5, 1, 4,
                      "The user shared pixel.png, a 1x1 PNG of one black pixel; the assistant "
                      "described it.",
                      std::string("Only the gist is kept.\nThis summary is not the image it "
                                  "replaces: 1 image was attached in the summarised range (") +
                          kPixelId +
                          " (\"pixel.png\", image/png, 1x1)). A description is not the original; "
                          "record a resource_view to see it again.",
                      {Pixel()}),
      TextEvent(6, Role::kUser, "Remind me what we discussed.")};
}

std::vector<Event> FileAndLink() {
  Resource report;
  report.resource_id = kReportId;
  report.content_sha256 = blob::Sha256Hex("%PDF-1.7 report");
  report.mime = "application/pdf";
  report.size = 48213;
  report.origin = Origin::kLocalFile;
  report.name = "report.pdf";
  report.uri = "/home/user/report.pdf";
  return {MessageEvent(1, Role::kUser,
                       {Part::Text("Summarise these."), StoredPart(PartType::kFile, report),
                        Part::Link("https://example.com/paper.pdf", "The paper")})};
}

struct GoldenCase {
  const char* name;
  std::vector<Event> (*events)();
};

void PrintTo(const GoldenCase& golden_case, std::ostream* out) { *out << golden_case.name; }

const GoldenCase kCases[] = {
    {"plain_text", PlainText},
    {"tools", Tools},
    {"image_newest_turn", ImageNewest},
    {"image_earlier_turn", ImageEarlier},
    {"resource_view_fresh", ResourceViewFresh},
    {"resource_view_seen", ResourceViewSeen},
    {"missing_blob", MissingBlob},
    {"compaction_with_image", CompactionWithImage},
    {"file_and_link", FileAndLink},
};

const ProviderFormat kFormats[] = {ProviderFormat::kOpenAiChat, ProviderFormat::kOpenAiResponses,
                                   ProviderFormat::kAnthropic};

std::filesystem::path GoldenDir() {
  // SESSIONDB_TESTDATA_DIR is tests/data, which need not exist: go up lexically.
  return std::filesystem::path(SESSIONDB_TESTDATA_DIR).parent_path() / "golden" / "projection";
}

bool UpdatingGoldens() {
  const char* update = std::getenv("SESSIONDB_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

class GoldenProjection : public ::testing::TestWithParam<std::tuple<GoldenCase, ProviderFormat>> {};

TEST_P(GoldenProjection, MatchesTheGoldenFile) {
  const auto& [golden_case, format] = GetParam();
  FakeBlobs blobs;
  blobs.Add(TinyPng());
  std::vector<Event> events = golden_case.events();
  Result<std::string> body = BuildProjection(events, {.format = format}, blobs.Fn());
  ASSERT_TRUE(body) << body.error().ToString();
  // The body is compact JSON: dumping it again gives the same text.
  ASSERT_EQ(nlohmann::ordered_json::parse(*body).dump(), *body);

  std::filesystem::path path = GoldenDir() / (std::string(golden_case.name) + "." +
                                              std::string(ProviderFormatName(format)) + ".json");
  std::string pretty = nlohmann::ordered_json::parse(*body).dump(2) + "\n";
  if (UpdatingGoldens()) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << pretty;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; SESSIONDB_UPDATE_GOLDEN=1 writes it";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(nlohmann::json::parse(golden.str()), nlohmann::json::parse(*body))
      << "golden " << path << ", projection:\n"
      << pretty;
}

std::string CaseName(const ::testing::TestParamInfo<GoldenProjection::ParamType>& info) {
  std::string name = std::string(std::get<0>(info.param).name) + "_" +
                     std::string(ProviderFormatName(std::get<1>(info.param)));
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenProjection,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::ValuesIn(kFormats)),
                         CaseName);

}  // namespace
}  // namespace sessiondb::testing
