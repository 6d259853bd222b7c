// RFC 2397 data URIs in their base64 form.
#include "blob/data_uri.h"

#include <string>

#include "gtest/gtest.h"

namespace sessiondb::blob {
namespace {

// The message of a refused URI, or a failure if it was accepted.
std::string RefusalOf(std::string_view uri) {
  auto parsed = ParseDataUri(uri);
  if (parsed) {
    ADD_FAILURE() << "\"" << uri << "\" was accepted";
    return "";
  }
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  return parsed.error().message();
}

TEST(DataUri, ParsesTheMimeTypeAndDecodesThePayload) {
  auto uri = ParseDataUri("data:image/png;base64,Zm9v");
  ASSERT_TRUE(uri) << uri.error().ToString();
  EXPECT_EQ(uri->mime, "image/png");
  EXPECT_EQ(uri->bytes, "foo");
}

TEST(DataUri, ParametersAreDroppedAndTheMimeTypeLowercased) {
  auto uri = ParseDataUri("data:Text/Plain;charset=utf-8;base64,Zm8=");
  ASSERT_TRUE(uri) << uri.error().ToString();
  EXPECT_EQ(uri->mime, "text/plain");
  EXPECT_EQ(uri->bytes, "fo");
}

TEST(DataUri, AnEmptyMimeTypeAndAnEmptyPayloadAreAllowed) {
  auto uri = ParseDataUri("data:;base64,Zm9v");
  ASSERT_TRUE(uri);
  EXPECT_EQ(uri->mime, "");
  EXPECT_EQ(uri->bytes, "foo");
  auto empty = ParseDataUri("data:image/png;base64,");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->bytes, "");
}

TEST(DataUri, TheSchemeAndTheBase64MarkerIgnoreCase) {
  auto uri = ParseDataUri("DATA:image/jpg;BASE64,Zm9v");
  ASSERT_TRUE(uri) << uri.error().ToString();
  EXPECT_EQ(uri->mime, "image/jpeg");
  EXPECT_EQ(uri->bytes, "foo");
}

TEST(DataUri, MakeDataUriBuildsWhatParseDataUriReads) {
  const std::string bytes("\x89PNG\r\n\x1a\n\0\xff", 10);
  std::string text = MakeDataUri("image/png", bytes);
  EXPECT_EQ(MakeDataUri("image/png", "foo"), "data:image/png;base64,Zm9v");
  auto uri = ParseDataUri(text);
  ASSERT_TRUE(uri);
  EXPECT_EQ(uri->mime, "image/png");
  EXPECT_EQ(uri->bytes, bytes);
}

TEST(DataUri, AUriWithoutTheDataSchemeIsRefused) {
  EXPECT_NE(RefusalOf("image/png;base64,Zm9v").find("must start with \"data:\""),
            std::string::npos);
  EXPECT_NE(RefusalOf("").find("must start with \"data:\""), std::string::npos);
  EXPECT_NE(RefusalOf("https://example.com/a.png").find("must start with \"data:\""),
            std::string::npos);
}

TEST(DataUri, APercentEncodedUriIsRefusedBecauseOnlyBase64IsAccepted) {
  for (std::string_view uri : {"data:text/plain,hello%20world", "data:image/png,%89PNG",
                               "data:image/png;charset=x,abc", "data:,"}) {
    std::string message = RefusalOf(uri);
    EXPECT_NE(message.find("only base64 data URIs"), std::string::npos) << uri << ": " << message;
  }
}

TEST(DataUri, AUriWithoutACommaIsRefused) {
  EXPECT_NE(RefusalOf("data:image/png;base64").find("no ','"), std::string::npos);
}

TEST(DataUri, ABadPayloadIsRefusedNamingTheOffsetInThePayload) {
  std::string message = RefusalOf("data:image/png;base64,Zm9v!!!!");
  EXPECT_NE(message.find("payload"), std::string::npos) << message;
  EXPECT_NE(message.find("'!' at offset 4"), std::string::npos) << message;
  EXPECT_NE(RefusalOf("data:image/png;base64,Zm9").find("multiple of 4"), std::string::npos);
}

}  // namespace
}  // namespace sessiondb::blob
