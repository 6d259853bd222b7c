// ProjectSession end to end against an embedded store in a temporary
// directory: an image goes from descriptor to full (a resource view) and back
// (an assistant reply), then a compaction summarises it and names it.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "blob/base64.h"
#include "blob/blob_store.h"
#include "projection_test_support.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

class ProjectSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::Open(dir_.Sub("store"), {.warn = [](std::string_view) {}});
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
    auto session = store_->CreateSession({});
    ASSERT_TRUE(session) << session.error().ToString();
    session_ = session->id;
  }

  AppendResult Append(Role role, std::vector<Part> parts) {
    Message m;
    m.role = role;
    m.parts = std::move(parts);
    auto r = store_->Append(session_, m);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : AppendResult{};
  }

  // The session's projection in `format`, as text; fails the test on error.
  std::string Project(ProviderFormat format = ProviderFormat::kOpenAiChat) {
    auto body = ProjectSession(*store_, session_, {.format = format});
    EXPECT_TRUE(body) << body.error().ToString();
    if (!body) return "";
    // Resuming from the last compaction projects what the whole log does.
    auto all = store_->ReadEvents(session_);
    EXPECT_TRUE(all) << all.error().ToString();
    auto from_log = BuildProjection(*all, {.format = format}, [this](const Resource& r) {
      return store_->ReadBlob(r.content_sha256);
    });
    EXPECT_EQ(from_log.value_or(""), *body);
    return *body;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::string session_;
};

TEST_F(ProjectSessionTest, AnImageIsADescriptorUntilViewedAndAgainOnceAnsweredThenSummarised) {
  const std::string data_uri = "data:image/png;base64," + blob::Base64Encode(TinyPng());
  AppendResult first = Append(
      Role::kUser,
      {Part::Text("What is this?"), Part::ImageFromBytes(TinyPng(), "image/png", "pixel.png")});
  ASSERT_EQ(first.resources.size(), 1u);
  const Resource& pixel = first.resources[0];
  const std::string descriptor =
      "[image " + pixel.resource_id + ": \"pixel.png\", image/png, 67 bytes, 1x1, sha256 " +
      blob::Sha256Hex(TinyPng()) +
      ". Attached on an earlier turn and not shown again; to see it, record a resource_view of " +
      pixel.resource_id + ".]";

  // While it is the newest user turn, the image goes in full.
  json m = json::parse(Project())["messages"];
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]["content"][1]["image_url"]["url"], data_uri);

  Append(Role::kAssistant, {Part::Text("A black pixel.")});
  Append(Role::kUser, {Part::Text("Describe it again.")});
  m = json::parse(Project())["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["content"], "What is this?\n" + descriptor);
  EXPECT_EQ(Project().find("base64"), std::string::npos);

  // A view sends it in full on the next projection, in every shape.
  auto view = store_->RecordResourceView(session_, pixel.resource_id, "to compare");
  ASSERT_TRUE(view) << view.error().ToString();
  m = json::parse(Project())["messages"];
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[3]["content"][0]["text"], "[resource_view " + pixel.resource_id + ": to compare]");
  EXPECT_EQ(m[3]["content"][1]["image_url"]["url"], data_uri);
  json responses = json::parse(Project(ProviderFormat::kOpenAiResponses))["input"];
  EXPECT_EQ(responses.back()["content"][1]["image_url"], data_uri);
  json anthropic = json::parse(Project(ProviderFormat::kAnthropic))["messages"];
  EXPECT_EQ(anthropic.back()["content"].back()["source"]["data"], blob::Base64Encode(TinyPng()));

  // Once an assistant has answered, the view is a descriptor again.
  Append(Role::kAssistant, {Part::Text("Still one black pixel.")});
  m = json::parse(Project())["messages"];
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[3]["content"],
            "[resource_view " + pixel.resource_id + ": to compare]\n" + descriptor);
  EXPECT_EQ(Project(ProviderFormat::kAnthropic).find("base64"), std::string::npos);

  // A compaction over all of it: the summary, and limitations naming the image.
  auto c = store_->Compact(session_, {.from_seq = 1,
                                      .to_seq = 5,
                                      .summary = "The user showed one black pixel twice.",
                                      .limitations = "Wording is not kept."});
  ASSERT_TRUE(c) << c.error().ToString();
  Append(Role::kUser, {Part::Text("Go on.")});
  m = json::parse(Project())["messages"];
  ASSERT_EQ(m.size(), 2u);
  std::string summary = m[0]["content"];
  EXPECT_EQ(
      summary.rfind("[Summary of earlier conversation: events 1\u20135]\n"
                    "The user showed one black pixel twice.\n\nLimitations: Wording is not kept.\n",
                    0),
      0u)
      << summary;
  EXPECT_NE(summary.find("This summary is not the image"), std::string::npos) << summary;
  EXPECT_NE(summary.find(pixel.resource_id), std::string::npos) << summary;
  EXPECT_EQ(m[1], json({{"role", "user"}, {"content", "Go on."}}));
  anthropic = json::parse(Project(ProviderFormat::kAnthropic))["messages"];
  ASSERT_EQ(anthropic.size(), 1u);  // the summary and "Go on." are both user turns
  EXPECT_EQ(anthropic[0]["content"].size(), 2u);
}

TEST_F(ProjectSessionTest, AnImageWhoseBlobWasDeletedIsProjectedAsMissing) {
  AppendResult r = Append(Role::kUser, {Part::Text("Keep this."),
                                        Part::ImageFromBytes(TinyPng(), "image/png", "pixel.png")});
  ASSERT_EQ(r.resources.size(), 1u);
  ASSERT_TRUE(std::filesystem::remove(
      blob::BlobFilePath(dir_.Sub("store") + "/blobs", r.resources[0].content_sha256)));
  for (ProviderFormat f : {ProviderFormat::kOpenAiChat, ProviderFormat::kOpenAiResponses,
                           ProviderFormat::kAnthropic}) {
    std::string body = Project(f);
    EXPECT_NE(body.find("[image " + r.resources[0].resource_id + ": "), std::string::npos) << body;
    EXPECT_NE(body.find("MISSING from the store"), std::string::npos) << body;
    EXPECT_EQ(body.find("base64"), std::string::npos) << body;
  }
}

TEST_F(ProjectSessionTest, AnUnknownSessionIsNotFound) {
  auto body = ProjectSession(*store_, "no-such-session", {});
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sessiondb::testing
