// Sniffing real types from bytes and reading image dimensions. Every image is
// built byte by byte here, so the layouts the sniffer relies on are visible.
#include "blob/media_type.h"

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "test_support.h"

namespace sessiondb::blob {
namespace {

using sessiondb::testing::MakeJpeg;
using sessiondb::testing::MakePng;
using sessiondb::testing::PngChunk;
using sessiondb::testing::U32Be;

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}
std::string Be16(int v) { return Bytes({(v >> 8) & 0xFF, v & 0xFF}); }
std::string Le16(uint32_t v) {
  return Bytes({static_cast<int>(v & 0xFF), static_cast<int>((v >> 8) & 0xFF)});
}
std::string Le24(uint32_t v) {
  return Le16(v & 0xFFFF) + Bytes({static_cast<int>((v >> 16) & 0xFF)});
}
std::string Le32(uint32_t v) { return Le16(v & 0xFFFF) + Le16(v >> 16); }

// The smallest complete PNG: signature, IHDR (1x1, 8-bit grayscale), one
// IDAT holding the zlib stream of a filter byte and one pixel, IEND.
std::string OnePixelPng() {
  std::string png = Bytes({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'});
  png += PngChunk("IHDR", U32Be(1) + U32Be(1) + Bytes({8, 0, 0, 0, 0}));
  png += PngChunk("IDAT", Bytes({0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01}));
  png += PngChunk("IEND", "");
  return png;
}

// A JPEG segment: marker, big-endian length (which counts itself), payload.
std::string JpegSegment(int marker, const std::string& payload) {
  return Bytes({0xFF, marker}) + Be16(static_cast<int>(payload.size()) + 2) + payload;
}

// SOI, a JFIF APP0, quantisation and Huffman tables, then the frame header
// `sof` (C0 baseline, C2 progressive, ...) giving width x height, then SOS.
std::string Jpeg(int sof, int width, int height) {
  std::string j = Bytes({0xFF, 0xD8});
  j += JpegSegment(0xE0, "JFIF" + Bytes({0, 1, 1, 0, 0, 1, 0, 1, 0, 0}));
  j += JpegSegment(0xDB, Bytes({0}) + std::string(64, '\x10'));
  // The Huffman table's payload would read as a large size if mistaken for a frame.
  j += JpegSegment(0xC4, Bytes({0x00}) + std::string(16, '\x7F') + std::string(12, '\x01'));
  j += JpegSegment(sof, Bytes({8}) + Be16(height) + Be16(width) + Bytes({1, 1, 0x11, 0}));
  j += JpegSegment(0xDA, Bytes({1, 1, 0, 0, 0x3F, 0}));
  j += Bytes({0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD9});
  return j;
}

// RIFF container with one chunk; sizes are filled in as a writer would.
std::string Webp(const std::string& fourcc, const std::string& payload) {
  std::string chunk = fourcc + Le32(static_cast<uint32_t>(payload.size())) + payload;
  if (payload.size() % 2) chunk += '\0';
  return "RIFF" + Le32(static_cast<uint32_t>(4 + chunk.size())) + "WEBP" + chunk;
}

// Lossy: frame tag (3 bytes, key frame), start code 9D 01 2A, 14-bit sizes
// (top two bits are the scale), then the first partition.
std::string WebpLossy(int width, int height, int scale_bits = 0) {
  return Webp("VP8 ", Bytes({0x30, 0x01, 0x00, 0x9D, 0x01, 0x2A}) +
                          Le16(static_cast<uint32_t>(width | (scale_bits << 14))) +
                          Le16(static_cast<uint32_t>(height | (scale_bits << 14))) +
                          std::string(8, '\0'));
}

// Lossless: signature 0x2F, then width-1 (14 bits), height-1 (14 bits),
// alpha (1 bit), version 0 (3 bits), little endian.
std::string WebpLossless(uint32_t width, uint32_t height) {
  uint32_t bits = (width - 1) | ((height - 1) << 14);
  return Webp("VP8L", Bytes({0x2F}) + Le32(bits) + std::string(5, '\0'));
}

// Extended: flags (4 bytes), canvas width-1 and height-1 (24 bits each).
std::string WebpExtended(uint32_t width, uint32_t height) {
  return Webp("VP8X", Bytes({0x10, 0, 0, 0}) + Le24(width - 1) + Le24(height - 1));
}

// A whole GIF: the screen, a global color table of 2 entries, a graphic
// control extension, then one image (descriptor, LZW data) and the trailer.
std::string Gif(std::string_view version, int width, int height) {
  return std::string(version) + Le16(width) + Le16(height) + Bytes({0x80, 0, 0}) +
         std::string(6, '\0') + Bytes({0x21, 0xF9, 0x04, 0x01, 0, 0, 0, 0}) + Bytes({0x2C}) +
         Le16(0) + Le16(0) + Le16(width) + Le16(height) + Bytes({0, 0x02, 0x02, 0x44, 0x01, 0}) +
         Bytes({0x3B});
}

// Where a GIF's first image descriptor ends: what the sniffer must see whole.
size_t GifHeaderBytes(const std::string& gif) { return gif.find('\x2C') + 10; }

void ExpectImage(const std::string& bytes, std::string_view mime, int width, int height) {
  auto info = SniffMedia(bytes);
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_EQ(info->mime, mime);
  EXPECT_TRUE(info->is_image);
  EXPECT_EQ(info->width, width);
  EXPECT_EQ(info->height, height);
}

// The message of a refused sniff, or a failure if it was accepted.
std::string RefusalOf(const std::string& bytes) {
  auto info = SniffMedia(bytes);
  if (info) {
    ADD_FAILURE() << "accepted as " << info->mime << " " << info->width << "x" << info->height;
    return "";
  }
  EXPECT_EQ(info.error().code(), StatusCode::kInvalidArgument);
  return info.error().message();
}

TEST(SniffMedia, ReadsTheSizeOfAOnePixelPng) { ExpectImage(OnePixelPng(), "image/png", 1, 1); }

TEST(SniffMedia, ReadsPngDimensionsBigEndian) {
  ExpectImage(MakePng(640, 480), "image/png", 640, 480);
  ExpectImage(MakePng(70000, 3), "image/png", 70000, 3);
}

TEST(SniffMedia, ReadsJpegDimensionsFromTheFirstFrameHeader) {
  ExpectImage(Jpeg(0xC0, 640, 480), "image/jpeg", 640, 480);
  ExpectImage(Jpeg(0xC2, 1920, 1080), "image/jpeg", 1920, 1080);  // progressive
  ExpectImage(Jpeg(0xC1, 1, 65535), "image/jpeg", 1, 65535);
  ExpectImage(MakeJpeg(800, 600), "image/jpeg", 800, 600);
}

TEST(SniffMedia, SkipsFillBytesAndExifBeforeTheJpegFrame) {
  std::string j = Bytes({0xFF, 0xD8});
  j += JpegSegment(0xE1, "Exif" + std::string(2, '\0') + std::string(3000, 'x'));
  j += Bytes({0xFF, 0xFF});  // fill bytes before a marker
  j += JpegSegment(0xC0, Bytes({8}) + Be16(480) + Be16(640) + Bytes({1, 1, 0x11, 0}));
  ExpectImage(j, "image/jpeg", 640, 480);
}

TEST(SniffMedia, ReadsGifDimensionsLittleEndian) {
  ExpectImage(Gif("GIF89a", 3, 2), "image/gif", 3, 2);
  ExpectImage(Gif("GIF87a", 300, 513), "image/gif", 300, 513);
}

TEST(SniffMedia, ReadsLossyWebpDimensions) {
  ExpectImage(WebpLossy(320, 200), "image/webp", 320, 200);
  ExpectImage(WebpLossy(16383, 1, /*scale_bits=*/3), "image/webp", 16383, 1);
}

TEST(SniffMedia, ReadsLosslessWebpDimensions) {
  ExpectImage(WebpLossless(100, 50), "image/webp", 100, 50);
  ExpectImage(WebpLossless(1, 1), "image/webp", 1, 1);
  ExpectImage(WebpLossless(16384, 16384), "image/webp", 16384, 16384);
}

TEST(SniffMedia, ReadsExtendedWebpCanvasDimensions) {
  ExpectImage(WebpExtended(4096, 2048), "image/webp", 4096, 2048);
  ExpectImage(WebpExtended(1 << 24, 1), "image/webp", 1 << 24, 1);
}

TEST(SniffMedia, APngSignatureOnJpegBytesIsMalformed) {
  std::string fake = Bytes({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}) + Jpeg(0xC0, 10, 10);
  EXPECT_EQ(RefusalOf(fake),
            "bytes start with a PNG signature but the IHDR chunk is missing or malformed");
}

TEST(SniffMedia, APngWhoseFirstChunkIsNotIhdrIsMalformed) {
  std::string png = OnePixelPng();
  std::string idat_first = png.substr(0, 8) + png.substr(33);
  EXPECT_NE(RefusalOf(idat_first).find("IHDR"), std::string::npos);
}

TEST(SniffMedia, EveryTruncationOfAnImageHeaderIsMalformed) {
  struct Case {
    std::string bytes;
    size_t signature;  // bytes that identify the format
    size_t needed;     // bytes through the last size field
  };
  const std::string jpeg = Jpeg(0xC0, 640, 480);
  const Case cases[] = {
      {OnePixelPng(), 8, 24},
      {jpeg, 3, jpeg.find(Be16(480) + Be16(640)) + 4},
      {Gif("GIF89a", 3, 2), 6, GifHeaderBytes(Gif("GIF89a", 3, 2))},
      {WebpLossy(320, 200), 12, 30},
      {WebpLossless(100, 50), 12, 25},
      {WebpExtended(4096, 2048), 12, 30},
  };
  for (const Case& c : cases) {
    const std::string format = c.bytes.substr(0, 4);
    ASSERT_TRUE(SniffMedia(c.bytes.substr(0, c.needed))) << format;
    for (size_t cut = c.signature; cut < c.needed; ++cut) {
      std::string message = RefusalOf(c.bytes.substr(0, cut));
      EXPECT_NE(message.find("signature but"), std::string::npos)
          << format << " cut at " << cut << ": " << message;
    }
  }
}

TEST(SniffMedia, ErrorsNameTheFormatAndWhatIsWrong) {
  EXPECT_NE(RefusalOf(OnePixelPng().substr(0, 20)).find("PNG signature"), std::string::npos);
  EXPECT_NE(RefusalOf(Bytes({0xFF, 0xD8, 0xFF})).find("JPEG signature"), std::string::npos);
  EXPECT_NE(RefusalOf("GIF89a" + Le16(3)).find("GIF signature"), std::string::npos);
  std::string no_start_code = WebpLossy(320, 200);
  no_start_code[23] = 0;
  EXPECT_NE(RefusalOf(no_start_code).find("VP8 start code"), std::string::npos);
  std::string no_vp8l_signature = WebpLossless(10, 10);
  no_vp8l_signature[20] = 0x2E;
  EXPECT_NE(RefusalOf(no_vp8l_signature).find("VP8L signature"), std::string::npos);
  EXPECT_NE(RefusalOf(Webp("ALPH", std::string(20, '\0'))).find("not VP8, VP8L or VP8X"),
            std::string::npos);
}

// Found from outside (issue 33): 17 bytes starting "GIF89a" were taken for a
// 28205x29807 GIF while truncated PNG, JPEG and WebP were refused.
TEST(SniffMedia, AGifWithoutAWholeScreenAndFirstImageIsMalformed) {
  const std::string text = "GIF89a-some-text!";
  ASSERT_EQ(text.size(), 17u);
  EXPECT_NE(RefusalOf(text).find("GIF signature but"), std::string::npos) << RefusalOf(text);
  const std::string screen_only = "GIF89a" + Le16(3) + Le16(2) + Bytes({0, 0, 0});
  EXPECT_NE(RefusalOf(screen_only).find("truncated before its first image"), std::string::npos);
  EXPECT_NE(RefusalOf(screen_only + Bytes({0x3B})).find("ends before any image"),
            std::string::npos);
  EXPECT_NE(RefusalOf(screen_only + "rest").find("block is missing at offset 13"),
            std::string::npos);
  // An extension whose sub-blocks run past the end.
  EXPECT_NE(RefusalOf(screen_only + Bytes({0x21, 0xFE, 0x20, 'a'})).find("truncated"),
            std::string::npos);
  // Without a global color table, straight to the image: fine.
  ExpectImage(screen_only + Bytes({0x2C}) + Le16(0) + Le16(0) + Le16(3) + Le16(2) + Bytes({0}),
              "image/gif", 3, 2);
}

TEST(SniffMedia, AJpegWhoseScanStartsBeforeAFrameIsMalformed) {
  std::string j = Bytes({0xFF, 0xD8}) + JpegSegment(0xDA, Bytes({1, 1, 0, 0, 0x3F, 0})) +
                  std::string(20, '\x55');
  EXPECT_NE(RefusalOf(j).find("JPEG signature but"), std::string::npos);
  std::string no_marker = Bytes({0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0, 0, 0x12, 0x34, 0, 0});
  EXPECT_NE(RefusalOf(no_marker).find("marker is missing at offset 8"), std::string::npos);
}

TEST(SniffMedia, AZeroWidthOrHeightIsMalformed) {
  for (const std::string& bytes :
       {MakePng(0, 4), MakePng(4, 0), Jpeg(0xC0, 0, 10), Jpeg(0xC0, 10, 0), Gif("GIF89a", 0, 2),
        WebpLossy(0, 5), WebpLossy(5, 0)}) {
    std::string message = RefusalOf(bytes);
    EXPECT_NE(message.find("zero width or height"), std::string::npos) << message;
  }
}

TEST(SniffMedia, AnImpossiblePngSizeIsMalformed) {
  EXPECT_NE(RefusalOf(MakePng(0x80000000u, 1)).find("impossible size"), std::string::npos);
}

TEST(SniffMedia, OtherBytesGetANonImageType) {
  auto pdf = SniffMedia("%PDF-1.7\n%\xE2\xE3\xCF\xD3\n");
  ASSERT_TRUE(pdf);
  EXPECT_EQ(pdf->mime, "application/pdf");
  EXPECT_FALSE(pdf->is_image);
  EXPECT_EQ(pdf->width, 0);
  EXPECT_EQ(SniffMedia(Bytes({'P', 'K', 3, 4, 20, 0}))->mime, "application/zip");
  EXPECT_EQ(SniffMedia("plain words, caf\xC3\xA9 \xF0\x9F\x98\x80")->mime, "text/plain");
  EXPECT_EQ(SniffMedia("RIFF....WAVEfmt ")->mime, "text/plain");  // RIFF but not WebP
  EXPECT_EQ(SniffMedia("GIF90a")->mime, "text/plain");
}

TEST(SniffMedia, RandomBytesAreOctetStream) {
  std::mt19937 rng(3);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  bytes[0] = 0x00;
  auto info = SniffMedia(bytes);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->mime, "application/octet-stream");
  EXPECT_FALSE(info->is_image);
  EXPECT_EQ(SniffMedia("")->mime, "application/octet-stream");
}

TEST(SniffMedia, InvalidUtf8IsNotText) {
  using namespace std::string_literals;
  for (const std::string& bytes :
       {"nul\0byte"s, "\xC0\xAF"s /* overlong */, "\xE0\x80\xAF"s /* overlong */,
        "\xED\xA0\x80"s /* surrogate */, "\xF4\x90\x80\x80"s /* past U+10FFFF */, "\xFF"s,
        "caf\xC3"s /* cut short */, "\x80"s}) {
    EXPECT_EQ(SniffMedia(bytes)->mime, "application/octet-stream") << bytes;
  }
}

TEST(SniffMedia, LongTextCutMidCharacterByTheProbeIsStillText) {
  std::string text(4095, 'a');
  text += "\xC3\xA9 and more after the probe";
  EXPECT_EQ(SniffMedia(text)->mime, "text/plain");
}

TEST(MimeNames, AreNormalisedLowercaseWithoutParameters) {
  EXPECT_EQ(NormalizeMime("Image/JPG; q=1"), "image/jpeg");
  EXPECT_EQ(NormalizeMime(" text/plain ;charset=utf-8"), "text/plain");
  EXPECT_EQ(NormalizeMime("IMAGE/PNG"), "image/png");
  EXPECT_EQ(NormalizeMime(""), "");
}

TEST(MimeNames, OnlyTheFourImageTypesAreSupported) {
  for (std::string_view mime :
       {"image/png", "image/jpeg", "image/jpg", "IMAGE/GIF", "image/webp", "image/png; x=y"}) {
    EXPECT_TRUE(IsSupportedImageMime(mime)) << mime;
  }
  for (std::string_view mime : {"image/tiff", "image/svg+xml", "application/pdf", ""}) {
    EXPECT_FALSE(IsSupportedImageMime(mime)) << mime;
  }
}

TEST(MimeNames, MapToFileExtensions) {
  EXPECT_EQ(ExtensionForMime("image/png"), "png");
  EXPECT_EQ(ExtensionForMime("image/jpeg"), "jpg");
  EXPECT_EQ(ExtensionForMime("image/jpg"), "jpg");
  EXPECT_EQ(ExtensionForMime("image/gif"), "gif");
  EXPECT_EQ(ExtensionForMime("image/webp"), "webp");
  EXPECT_EQ(ExtensionForMime("application/pdf"), "pdf");
  EXPECT_EQ(ExtensionForMime("text/plain; charset=utf-8"), "txt");
  EXPECT_EQ(ExtensionForMime("application/x-thing"), "bin");
}

}  // namespace
}  // namespace sessiondb::blob
