// The exact wording of what a projection writes in place of what it does not
// send (descriptor.h is its one home).
#include "projection/descriptor.h"

#include "projection_test_support.h"

namespace sessiondb::testing {
namespace {

using projection::CompactionText;
using projection::FileDescriptor;
using projection::ImageDescriptor;
using projection::LinkDescriptor;
using projection::ResourceViewHeading;

const std::string kSha(64, 'a');

Resource Photo() {
  Resource r;
  r.resource_id = "res_1";
  r.content_sha256 = kSha;
  r.mime = "image/jpeg";
  r.size = 2048;
  r.width = 640;
  r.height = 480;
  r.name = "cat.jpg";
  return r;
}

TEST(Descriptor, AnImageNotShownAgainSaysEverythingKnownAndHowToSeeIt) {
  EXPECT_EQ(ImageDescriptor(Photo(), /*missing=*/false),
            "[image res_1: \"cat.jpg\", image/jpeg, 2048 bytes, 640x480, sha256 " + kSha +
                ". Attached on an earlier turn and not shown again; to see it, record a "
                "resource_view of res_1.]");
}

TEST(Descriptor, AnImageWithoutNameOrDimensionsLeavesThemOut) {
  Resource r = Photo();
  r.name.clear();
  r.width = 0;
  r.height = 0;
  EXPECT_EQ(ImageDescriptor(r, false),
            "[image res_1: image/jpeg, 2048 bytes, sha256 " + kSha +
                ". Attached on an earlier turn and not shown again; to see it, record a "
                "resource_view of res_1.]");
}

TEST(Descriptor, AMissingImageSaysItsBytesAreLost) {
  EXPECT_EQ(ImageDescriptor(Photo(), /*missing=*/true),
            "[image res_1: \"cat.jpg\", image/jpeg, 2048 bytes, 640x480, sha256 " + kSha +
                ". MISSING from the store: its bytes are lost and it cannot be shown.]");
}

TEST(Descriptor, AFileSaysItIsNotSentAndHasNoDimensions) {
  Resource r = Photo();
  r.mime = "application/pdf";
  r.name = "a.pdf";
  EXPECT_EQ(FileDescriptor(r, false),
            "[file res_1: \"a.pdf\", application/pdf, 2048 bytes, sha256 " + kSha +
                ". Its contents are not sent to the provider.]");
  EXPECT_EQ(FileDescriptor(r, true),
            "[file res_1: \"a.pdf\", application/pdf, 2048 bytes, sha256 " + kSha +
                ". MISSING from the store: its bytes are lost.]");
}

TEST(Descriptor, ALinkSaysItWasNeverFetched) {
  Resource r;
  r.origin = Origin::kRemoteLink;
  r.uri = "https://example.com/x.png";
  r.name = "X";
  EXPECT_EQ(LinkDescriptor(r),
            "[link https://example.com/x.png \"X\": a remote link, never fetched.]");
  r.name.clear();
  EXPECT_EQ(LinkDescriptor(r), "[link https://example.com/x.png: a remote link, never fetched.]");
}

TEST(Descriptor, ANameWithQuotesAndNewlinesStaysOnOneQuotedLine) {
  Resource r = Photo();
  r.name = "my \"best\"\ncat\\.jpg";
  std::string d = ImageDescriptor(r, false);
  EXPECT_EQ(d.find('\n'), std::string::npos);
  EXPECT_NE(d.find(R"("my \"best\" cat\\.jpg")"), std::string::npos) << d;
}

TEST(Descriptor, AResourceViewHeadingNamesTheResourceAndTheReason) {
  ResourceView view;
  view.resource_id = "res_1";
  view.reason = "compare colours";
  EXPECT_EQ(ResourceViewHeading(view), "[resource_view res_1: compare colours]");
  view.reason.clear();
  EXPECT_EQ(ResourceViewHeading(view), "[resource_view res_1]");
}

TEST(Descriptor, ACompactionTextGivesTheRangeTheSummaryAndTheLimitations) {
  Compaction c;
  c.from_seq = 2;
  c.to_seq = 9;
  c.summary = "We fixed the build.";
  EXPECT_EQ(CompactionText(c),
            "[Summary of earlier conversation: events 2\u20139]\nWe fixed the build.");
  c.limitations = "Exact error messages are not kept.";
  EXPECT_EQ(CompactionText(c),
            "[Summary of earlier conversation: events 2\u20139]\nWe fixed the build.\n\n"
            "Limitations: Exact error messages are not kept.");
}

}  // namespace
}  // namespace sessiondb::testing
