// History over today's limits: an import keeps what another tool already
// wrote. Messages with more images than an append may carry come in whole
// (ac-dc, a Claude Code tree, and what follows them too), and an attachment
// over the import's byte limit stays in its message as a descriptor that
// says why, counted in the report.
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "interop/import_sink.h"
#include "interop/interop_test_support.h"
#include "sessiondb/projection.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The name ac-dc gives a pasted image: the first 12 hex of SHA-256(data URI).
std::string AcdcName(const std::string& png) {
  return blob::Sha256Hex("data:image/png;base64," + blob::Base64Encode(png)).substr(0, 12) + ".png";
}

json AcdcRecord(const std::string& id, const std::string& role, const std::string& content,
                const std::string& ts) {
  return {{"id", id},
          {"session_id", "sess_1719500000000_f0e1d2"},
          {"timestamp", ts},
          {"role", role},
          {"content", content}};
}

// A .ac-dc folder whose second record carries `images` (written to images/).
fs::path WriteAcdc(const fs::path& root, const std::vector<std::string>& images) {
  const fs::path dir = root / ".ac-dc";
  fs::create_directories(dir / "images");
  json pasted = AcdcRecord("1719500001000-aaaa0002", "user", "What changed between these?",
                           "2024-06-27T15:00:01Z");
  pasted["image_refs"] = json::array();
  for (const std::string& png : images) {
    WriteFile((dir / "images" / AcdcName(png)).string(), png);
    pasted["image_refs"].push_back(AcdcName(png));
  }
  std::string text =
      AcdcRecord("1719500000000-aaaa0001", "user", "Hello", "2024-06-27T15:00:00Z").dump() + "\n";
  text += pasted.dump() + "\n";
  text +=
      AcdcRecord("1719500002000-aaaa0003", "assistant", "The header moved.", "2024-06-27T15:00:02Z")
          .dump() +
      "\n";
  WriteFile((dir / "history.jsonl").string(), text);
  return dir;
}

std::vector<std::string> Pngs(int n, size_t padding = 0) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(MakePng(640, 480, "shot" + std::to_string(i), padding));
  return out;
}

// A Claude Code record as Claude Code writes it.
json ClaudeRecord(const std::string& session, const std::string& type, const std::string& uuid,
                  const std::string& parent, const std::string& ts, json content) {
  return {{"parentUuid", parent.empty() ? json(nullptr) : json(parent)},
          {"isSidechain", false},
          {"userType", "external"},
          {"cwd", "/home/dev/app"},
          {"sessionId", session},
          {"version", "1.0.80"},
          {"type", type},
          {"message", {{"role", type}, {"content", std::move(content)}}},
          {"uuid", uuid},
          {"timestamp", ts}};
}

json ImageBlock(const std::string& png) {
  return {{"type", "image"},
          {"source",
           {{"type", "base64"}, {"media_type", "image/png"}, {"data", blob::Base64Encode(png)}}}};
}

json TextBlock(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

// A projects tree: session A (a message with `images`, then two more
// records) and session B after it.
fs::path WriteClaudeTree(const fs::path& root, const std::vector<std::string>& images) {
  const fs::path project = root / "projects" / "-home-dev-app";
  fs::create_directories(project);
  const std::string a = "0b9d1c2e-aaaa-4222-8333-944455556666";
  const std::string b = "0b9d1c2e-bbbb-4222-8333-944455556666";
  json content = json::array({TextBlock("Compare these screenshots")});
  for (const std::string& png : images) content.push_back(ImageBlock(png));
  std::string text;
  text += ClaudeRecord(a, "user", "aaaaaaaa-0000-4000-8000-000000000001", "",
                       "2025-06-01T10:00:00.000Z", content)
              .dump() +
          "\n";
  text += ClaudeRecord(a, "assistant", "aaaaaaaa-0000-4000-8000-000000000002",
                       "aaaaaaaa-0000-4000-8000-000000000001", "2025-06-01T10:00:05.000Z",
                       json::array({TextBlock("The third one has the bug.")}))
              .dump() +
          "\n";
  text += ClaudeRecord(a, "user", "aaaaaaaa-0000-4000-8000-000000000003",
                       "aaaaaaaa-0000-4000-8000-000000000002", "2025-06-01T10:00:09.000Z",
                       json::array({TextBlock("Fix it please")}))
              .dump() +
          "\n";
  WriteFile((project / (a + ".jsonl")).string(), text);
  WriteFile((project / (b + ".jsonl")).string(),
            ClaudeRecord(b, "user", "bbbbbbbb-0000-4000-8000-000000000001", "",
                         "2025-06-02T10:00:00.000Z", json::array({TextBlock("Next day")}))
                    .dump() +
                "\n");
  return root / "projects";
}

int CountImages(const Message& m) {
  int n = 0;
  for (const Part& p : m.parts) n += p.type == PartType::kImage;
  return n;
}

TEST(ImportLimits, AnAcdcMessageWithSevenImagesComesInWithEveryImage) {
  TempDir tmp;
  auto store = OpenTestStore(tmp);
  const std::vector<std::string> pngs = Pngs(7);
  const fs::path dir = WriteAcdc(tmp.path(), pngs);

  auto report = ImportPath(*store, dir.string(), {});
  ASSERT_TRUE(report) << report.error().ToString();  // was: "the message has 7 images"
  EXPECT_EQ(report->messages_added, 3);
  EXPECT_EQ(report->images_added, 7);
  EXPECT_EQ(report->records_skipped, 0);
  auto msgs = store->ReadMessages("sess_1719500000000_f0e1d2");
  ASSERT_TRUE(msgs);
  ASSERT_EQ(msgs->size(), 3u);
  ASSERT_EQ(CountImages((*msgs)[1]), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(store->ReadBlob((*msgs)[1].parts[1 + i].resource->content_sha256).value_or(""),
              pngs[static_cast<size_t>(i)]);
  }
  EXPECT_EQ((*msgs)[2].Text(), "The header moved.");
  // An append is still held to the limit: only history is exempt.
  Message now;
  now.parts = {Part::Text("seven again")};
  for (const std::string& png : pngs) now.parts.push_back(Part::ImageFromBytes(png, "image/png"));
  auto appended = store->Append("sess_1719500000000_f0e1d2", now);
  ASSERT_FALSE(appended);
  EXPECT_NE(appended.error().message().find("7 images"), std::string::npos);
}

TEST(ImportLimits, AClaudeCodeTreeKeepsEverythingAfterAMessageWithSevenImages) {
  TempDir tmp;
  auto store = OpenTestStore(tmp);
  const fs::path tree = WriteClaudeTree(tmp.path(), Pngs(7));

  auto report = ImportPath(*store, tree.string(), {.format = ImportFormat::kClaudeCode});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 2);
  EXPECT_EQ(report->messages_added, 4);
  EXPECT_EQ(report->images_added, 7);
  auto a = store->ReadMessages("0b9d1c2e-aaaa-4222-8333-944455556666");
  ASSERT_TRUE(a) << a.error().ToString();
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ(CountImages((*a)[0]), 7);
  EXPECT_EQ((*a)[2].Text(), "Fix it please");
  auto b = store->ReadMessages("0b9d1c2e-bbbb-4222-8333-944455556666");
  ASSERT_TRUE(b) << b.error().ToString();
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ((*b)[0].Text(), "Next day");
}

// Checks the descriptor an image over the limit leaves: described, no
// bytes, the reason, and nothing that reads as damage.
void ExpectNotStoredImage(Store& store, const Part& part, const std::string& png) {
  ASSERT_EQ(part.type, PartType::kImage);
  ASSERT_TRUE(part.resource);
  const Resource& r = *part.resource;
  EXPECT_TRUE(r.content_sha256.empty());
  EXPECT_EQ(r.mime, "image/png");
  EXPECT_EQ(r.size, static_cast<int64_t>(png.size()));
  EXPECT_EQ(r.width, 640);
  EXPECT_EQ(r.height, 480);
  EXPECT_EQ(r.resource_id.rfind("res_", 0), 0u);
  EXPECT_NE(r.not_stored.find("an import stores attachments up to 64.0 KiB"), std::string::npos)
      << r.not_stored;
  EXPECT_NE(r.not_stored.find("--max-attachment-bytes"), std::string::npos) << r.not_stored;
  EXPECT_FALSE(r.missing);
  auto verify = store.Verify();
  ASSERT_TRUE(verify);
  EXPECT_TRUE(verify->clean());
}

TEST(ImportLimits, AnAcdcImageOverTheByteLimitIsKeptAsADescriptorWithItsReason) {
  TempDir tmp;
  auto store = OpenTestStore(tmp);
  // Over the 256 KiB the importer reads of a file it will not store.
  std::vector<std::string> pngs = Pngs(2);
  pngs[1] = MakePng(640, 480, "huge", 300 * 1024);
  const fs::path dir = WriteAcdc(tmp.path(), pngs);

  auto report = ImportPath(*store, dir.string(), {.max_attachment_bytes = 64 * 1024});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->messages_added, 3);
  EXPECT_EQ(report->images_added, 1);
  EXPECT_EQ(report->records_skipped, 0);
  EXPECT_EQ(report->attachments_not_stored, 1);
  ASSERT_EQ(report->not_stored.size(), 1u);
  EXPECT_EQ(report->not_stored[0].where, "history.jsonl:2");
  EXPECT_NE(report->not_stored[0].reason.find(AcdcName(pngs[1])), std::string::npos);
  auto msgs = store->ReadMessages("sess_1719500000000_f0e1d2");
  ASSERT_TRUE(msgs);
  ASSERT_EQ(msgs->size(), 3u);
  ASSERT_EQ((*msgs)[1].parts.size(), 3u);
  EXPECT_EQ(store->ReadBlob((*msgs)[1].parts[1].resource->content_sha256).value_or(""), pngs[0]);
  ExpectNotStoredImage(*store, (*msgs)[1].parts[2], pngs[1]);
  EXPECT_EQ((*msgs)[1].parts[2].resource->name, AcdcName(pngs[1]));

  // The projection says why the image is not there, not that it was lost.
  auto body =
      ProjectSession(*store, "sess_1719500000000_f0e1d2", {.format = ProviderFormat::kAnthropic});
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_NE(body->find("NOT STORED"), std::string::npos) << *body;
  EXPECT_EQ(body->find("MISSING"), std::string::npos) << *body;
}

TEST(ImportLimits, AnInlineImageOverTheByteLimitIsKeptAsADescriptorAndTheRestFollows) {
  TempDir tmp;
  auto store = OpenTestStore(tmp);
  const std::string big = MakePng(640, 480, "inline", 100 * 1024);
  const fs::path tree = WriteClaudeTree(tmp.path(), {big, MakePng(640, 480, "small")});

  auto report =
      ImportPath(*store, tree.string(),
                 {.format = ImportFormat::kClaudeCode, .max_attachment_bytes = 64 * 1024});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->messages_added, 4);
  EXPECT_EQ(report->images_added, 1);
  EXPECT_EQ(report->attachments_not_stored, 1);
  ASSERT_EQ(report->not_stored.size(), 1u);
  EXPECT_NE(report->not_stored[0].where.find("0b9d1c2e-aaaa"), std::string::npos);
  auto a = store->ReadMessages("0b9d1c2e-aaaa-4222-8333-944455556666");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->size(), 3u);
  ASSERT_EQ(CountImages((*a)[0]), 2);
  const Part* described = nullptr;
  for (const Part& p : (*a)[0].parts) {
    if (p.resource && !p.resource->not_stored.empty()) described = &p;
  }
  ASSERT_NE(described, nullptr);
  ExpectNotStoredImage(*store, *described, big);

  // Re-importing keeps the one descriptor: nothing new, nothing doubled.
  auto again = ImportPath(*store, tree.string(),
                          {.format = ImportFormat::kClaudeCode, .max_attachment_bytes = 64 * 1024});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->messages_added, 0);
  EXPECT_EQ(again->attachments_not_stored, 0);
}

TEST(ImportLimits, AZeroByteLimitIsRefused) {
  TempDir tmp;
  auto store = OpenTestStore(tmp);
  const fs::path dir = WriteAcdc(tmp.path(), {});
  auto report = ImportPath(*store, dir.string(), {.max_attachment_bytes = 0});
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sessiondb::testing
