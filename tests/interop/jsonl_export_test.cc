// The jsonl export: a message per line with its descriptors, for scripts.
#include <nlohmann/json.hpp>
#include <sstream>

#include "blob/sha256.h"
#include "interop_fixture.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

class JsonlExport : public InteropTest {
 protected:
  void SetUp() override {
    store_ = OpenStore("store");
    FillSample(*store_);
  }

  std::vector<json> ExportLines(const std::string& name, std::vector<std::string> ids = {}) {
    auto r = ExportTo(*store_, dir_.Sub(name),
                      {.format = ExportFormat::kJsonl, .sessions = std::move(ids)});
    EXPECT_TRUE(r) << r.error().ToString();
    report_ = r ? *r : ExportReport{};
    std::vector<json> lines;
    std::istringstream in(ReadFile(dir_.Sub(name)));
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  std::unique_ptr<Store> store_;
  ExportReport report_;
};

TEST_F(JsonlExport, WritesOneLinePerMessageWithItsFieldsAndDescriptors) {
  std::vector<json> lines = ExportLines("all.jsonl");
  // chat-archived: 2 messages; chat-fork: 3 inherited + 1; chat-main: 5
  // messages (its view and compaction are not messages).
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(report_.sessions, 3);
  EXPECT_EQ(report_.messages, 11);
  EXPECT_EQ(report_.images, 2 + 2 + 1);  // main's two, the fork's inherited two and its own
  ASSERT_EQ(report_.files.size(), 1u);

  const json& first = lines[6];  // chat-main seq 1, after archived (2) and fork (4)
  EXPECT_EQ(first["session_id"], "chat-main");
  EXPECT_EQ(first["seq"], 1);
  EXPECT_EQ(first["role"], "user");
  EXPECT_EQ(first["text"], "What is in these pictures?");
  EXPECT_TRUE(first["ts_ms"].is_number_integer());
  ASSERT_EQ(first["parts"].size(), 3u);
  EXPECT_EQ(first["parts"][1]["type"], "image");
  EXPECT_EQ(first["parts"][1]["resource"]["content_sha256"], blob::Sha256Hex(png_));
  EXPECT_EQ(first["parts"][1]["resource"]["mime"], "image/png");
  EXPECT_EQ(first["parts"][1]["resource"]["width"], 4);
  EXPECT_EQ(first["parts"][2]["resource"]["mime"], "image/jpeg");

  const json& call = lines[7];
  EXPECT_EQ(call["role"], "assistant");
  EXPECT_EQ(call["model"], "gpt-test");
  EXPECT_EQ(call["provider"], "openai");
  EXPECT_EQ(call["usage"]["input_tokens"], 120);
  EXPECT_EQ(call["parts"][1]["type"], "tool_call");
  EXPECT_EQ(call["parts"][1]["arguments"], R"({"x":1})");
  EXPECT_EQ(lines[8]["parts"][0]["output"], "zoomed: a cat");
  EXPECT_EQ(lines[9]["metadata"]["latency_ms"], 42);
  EXPECT_EQ(lines[10]["seq"], 7);  // after the view (5) and the compaction (6)

  EXPECT_EQ(lines[0]["session_id"], "chat-archived");
  EXPECT_EQ(lines[0]["pruned"], true);
  EXPECT_TRUE(lines[0]["parts"].empty());
  // A fork's inherited messages are written as the fork's.
  EXPECT_EQ(lines[2]["session_id"], "chat-fork");
  EXPECT_EQ(lines[5]["seq"], 4);
  EXPECT_EQ(lines[5]["text"], "Another idea");
}

TEST_F(JsonlExport, NeverHoldsImageBytes) {
  ExportLines("all.jsonl");
  const std::string text = ReadFile(dir_.Sub("all.jsonl"));
  EXPECT_EQ(text.find("iVBOR"), std::string::npos);  // base64 of a PNG signature
  EXPECT_EQ(text.find("data:image"), std::string::npos);
}

TEST_F(JsonlExport, SameSessionsGiveTheSameBytes) {
  ExportLines("a.jsonl", {"chat-main"});
  ExportLines("b.jsonl", {"chat-main"});
  EXPECT_EQ(ReadFile(dir_.Sub("a.jsonl")), ReadFile(dir_.Sub("b.jsonl")));
  EXPECT_EQ(report_.messages, 5);
}

TEST_F(JsonlExport, UnknownSessionWritesNothing) {
  auto r = ExportTo(*store_, dir_.Sub("x.jsonl"),
                    {.format = ExportFormat::kJsonl, .sessions = {"nope"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("x.jsonl")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("x.jsonl.partial")));
}

TEST_F(JsonlExport, RefusesToOverwriteAFile) {
  WriteFile(dir_.Sub("taken.jsonl"), "keep");
  auto r = ExportTo(*store_, dir_.Sub("taken.jsonl"), {.format = ExportFormat::kJsonl});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadFile(dir_.Sub("taken.jsonl")), "keep");
}

}  // namespace
}  // namespace sessiondb::testing
