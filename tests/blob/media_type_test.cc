// Sniffing real types from bytes and reading image dimensions.
#include "blob/media_type.h"

#include "gtest/gtest.h"
#include "test_support.h"

namespace sessiondb::blob {
namespace {

using sessiondb::testing::MakeJpeg;
using sessiondb::testing::MakePng;

std::string Le16(int v) { return {static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)}; }
std::string Le24(int v) {
  return {static_cast<char>(v & 0xFF), static_cast<char>((v >> 8) & 0xFF),
          static_cast<char>(v >> 16)};
}

std::string Riff(const std::string& chunk, const std::string& payload) {
  std::string body = "WEBP" + chunk + std::string("\x20\x00\x00\x00", 4) + payload;
  body.resize(std::max<size_t>(body.size(), 40), '\0');
  return "RIFF" + std::string("\x30\x00\x00\x00", 4) + body;
}

TEST(SniffMedia, ReadsPngDimensions) {
  auto info = SniffMedia(MakePng(640, 480));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->mime, "image/png");
  EXPECT_TRUE(info->is_image);
  EXPECT_EQ(info->width, 640);
  EXPECT_EQ(info->height, 480);
}

TEST(SniffMedia, ReadsJpegDimensionsFromTheFrameHeader) {
  auto info = SniffMedia(MakeJpeg(1920, 1080));
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_EQ(info->mime, "image/jpeg");
  EXPECT_EQ(info->width, 1920);
  EXPECT_EQ(info->height, 1080);
}

TEST(SniffMedia, ReadsGifDimensions) {
  auto info = SniffMedia("GIF89a" + Le16(3) + Le16(2) + std::string("\x00\x00\x00", 3));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->mime, "image/gif");
  EXPECT_EQ(info->width, 3);
  EXPECT_EQ(info->height, 2);
}

TEST(SniffMedia, ReadsAllThreeWebpFlavours) {
  // Lossy: frame tag (3 bytes), start code, 14-bit sizes.
  auto lossy =
      SniffMedia(Riff("VP8 ", std::string("\x00\x00\x00\x9d\x01\x2a", 6) + Le16(320) + Le16(200)));
  ASSERT_TRUE(lossy) << lossy.error().ToString();
  EXPECT_EQ(lossy->width, 320);
  EXPECT_EQ(lossy->height, 200);
  // Lossless: signature 0x2f, then (width-1) and (height-1) in 14 bits each.
  uint32_t bits = (100 - 1) | ((50 - 1) << 14);
  std::string vp8l = "\x2f" + Le16(bits & 0xFFFF) + Le16(bits >> 16);
  auto lossless = SniffMedia(Riff("VP8L", vp8l));
  ASSERT_TRUE(lossless) << lossless.error().ToString();
  EXPECT_EQ(lossless->width, 100);
  EXPECT_EQ(lossless->height, 50);
  // Extended: flags (4 bytes), then 24-bit (width-1) and (height-1).
  auto extended = SniffMedia(Riff("VP8X", std::string(4, '\0') + Le24(4095) + Le24(2047)));
  ASSERT_TRUE(extended) << extended.error().ToString();
  EXPECT_EQ(extended->mime, "image/webp");
  EXPECT_EQ(extended->width, 4096);
  EXPECT_EQ(extended->height, 2048);
}

TEST(SniffMedia, APngSignatureOnJpegBytesIsMalformed) {
  std::string fake = std::string("\x89PNG\r\n\x1a\n", 8) + MakeJpeg(10, 10);
  auto info = SniffMedia(fake);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(info.error().message().find("PNG signature"), std::string::npos);
}

TEST(SniffMedia, TruncatedHeadersAreMalformed) {
  EXPECT_FALSE(SniffMedia(MakePng(4, 4).substr(0, 20)));
  EXPECT_FALSE(SniffMedia(std::string("\xFF\xD8\xFF\xE0\x00\x10JFIF", 10)));
  EXPECT_FALSE(SniffMedia("GIF89a\x01"));
  EXPECT_FALSE(SniffMedia(MakePng(0, 4)));  // zero width
}

TEST(SniffMedia, OtherBytesGetANonImageType) {
  EXPECT_EQ(SniffMedia("%PDF-1.7 ...")->mime, "application/pdf");
  EXPECT_EQ(SniffMedia(std::string("PK\x03\x04rest", 8))->mime, "application/zip");
  EXPECT_EQ(SniffMedia("plain words, caf\xC3\xA9")->mime, "text/plain");
  auto binary = SniffMedia(std::string("\x00\x01\x02\xff", 4));
  EXPECT_EQ(binary->mime, "application/octet-stream");
  EXPECT_FALSE(binary->is_image);
}

TEST(MimeNames, AreNormalisedAndMappedToExtensions) {
  EXPECT_EQ(NormalizeMime("Image/JPG; q=1"), "image/jpeg");
  EXPECT_TRUE(IsSupportedImageMime("image/webp"));
  EXPECT_FALSE(IsSupportedImageMime("image/tiff"));
  EXPECT_EQ(ExtensionForMime("image/jpeg"), "jpg");
  EXPECT_EQ(ExtensionForMime("application/x-thing"), "bin");
}

}  // namespace
}  // namespace sessiondb::blob
