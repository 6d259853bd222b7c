#include "core/message_codec.h"

#include "gtest/gtest.h"

namespace sessiondb {
namespace {

TEST(MessageCodec, APlainTextMessageHasNoBody) {
  Message m;
  m.parts = {Part::Text("hello")};
  auto body = EncodeMessageBody(m);
  ASSERT_TRUE(body);
  EXPECT_FALSE(body->has_value());
  Message back;
  ASSERT_TRUE(DecodeMessageBody(std::nullopt, "hello", &back).ok());
  ASSERT_EQ(back.parts.size(), 1u);
  EXPECT_EQ(back.parts[0].text, "hello");
}

TEST(MessageCodec, ABodyCarriesItsVersionAndNoBase64) {
  Message m;
  m.parts = {Part::Text("look")};
  Part image;
  image.type = PartType::kImage;
  image.resource = Resource{.resource_id = "res_1",
                            .content_sha256 = std::string(64, 'a'),
                            .mime = "image/png",
                            .size = 10,
                            .width = 1,
                            .height = 1};
  m.parts.push_back(image);
  auto body = EncodeMessageBody(m);
  ASSERT_TRUE(body && body->has_value());
  EXPECT_NE((*body)->find("\"v\":1"), std::string::npos);
  Message back;
  ASSERT_TRUE(DecodeMessageBody(std::string_view(**body), "look", &back).ok());
  ASSERT_EQ(back.parts.size(), 2u);
  EXPECT_EQ(*back.parts[1].resource, *image.resource);
}

TEST(MessageCodec, ReasoningKeepsItsSignatureAndOlderBodiesReadWithout) {
  Message m;
  m.parts = {Part::Reasoning("plan", "EqQBCkYI+/=="), Part::Reasoning("", "gAAAAB")};
  auto body = EncodeMessageBody(m);
  ASSERT_TRUE(body && body->has_value());
  EXPECT_NE((*body)->find(R"({"signature":"EqQBCkYI+/==","text":"plan","type":"reasoning"})"),
            std::string::npos)
      << **body;
  Message back;
  ASSERT_TRUE(DecodeMessageBody(std::string_view(**body), "", &back).ok());
  ASSERT_EQ(back.parts.size(), 2u);
  EXPECT_EQ(back.parts[0].signature, "EqQBCkYI+/==");
  EXPECT_EQ(back.parts[1].signature, "gAAAAB");
  EXPECT_EQ(back.parts[1].text, "");

  Message old;
  ASSERT_TRUE(
      DecodeMessageBody(std::string_view(R"({"v":1,"parts":[{"text":"t","type":"reasoning"}]})"),
                        "", &old)
          .ok());
  EXPECT_EQ(old.parts[0].text, "t");
  EXPECT_EQ(old.parts[0].signature, "");
}

TEST(MessageCodec, ABodyFromANewerVersionIsRefusedNotMisread) {
  Message back;
  back.id = "m1";
  Status s = DecodeMessageBody(std::string_view(R"({"v":2,"parts":[]})"), "", &back);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("version 2"), std::string::npos);
}

TEST(MessageCodec, ACorruptBodyIsReportedAsCorruption) {
  Message back;
  EXPECT_EQ(DecodeMessageBody(std::string_view("{nope"), "", &back).code(),
            StatusCode::kCorruption);
  EXPECT_EQ(
      DecodeMessageBody(std::string_view(R"({"v":1,"parts":[{"type":"warp"}]})"), "", &back).code(),
      StatusCode::kCorruption);
}

}  // namespace
}  // namespace sessiondb
