// Encryption at rest proves itself (docs/encryption.md): unique words and
// image bytes planted in every place content can be (text, reasoning, tool
// input and output, title, metadata, a fork, a compaction summary, a draft,
// a code write, the full-text index, embeddings and the saved vector index,
// a file attachment), in an embedded store made with a key. Not one may be
// found in any file of the store (database, WAL, free pages, FTS5 tables,
// vector file, blob folder) while the store is open and after it is closed;
// the same work on a plaintext store shows every one (so the scan proves
// something). Search, projections and reads still give the right answers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sessiondb/encryption.h"
#include "sessiondb/memory.h"
#include "sessiondb/projection.h"
#include "sessiondb/search.h"
#include "store/canary_scan.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

const std::vector<std::string> kCanaries = {
    "canarytitle1q2w",  "canarymeta3e4r",    "canarytext5t6y",     "canaryreason7u8i",
    "canarytoolin9o0p", "canarytoolout1a2s", "canarysummary3d4f",  "canarydraft5g6h",
    "canaryfork7j8k",   "canarycode9l0z",    "canarypngbytes0f9e", "canaryfilebytes2x3c",
    "canarydeleted4v5b"};

Message TextMessage(Role role, const std::string& text) {
  Message m;
  m.role = role;
  m.parts.push_back(Part::Text(text));
  return m;
}

// Writes the canaries into every part type of `store`, then indexes,
// embeds and saves the vector index.
void PlantEverywhere(Store& store) {
  auto created = store.CreateSession(
      {.id = "secret",
       .title = "canarytitle1q2w",
       .metadata_json = R"({"project":"/src/canaryproj","note":"canarymeta3e4r"})"});
  ASSERT_TRUE(created) << created.error().ToString();
  Message user = TextMessage(Role::kUser, "canarytext5t6y about the plan");
  user.parts.push_back(Part::ImageFromBytes(MakePng(6, 6, "canarypngbytes0f9e"), "image/png"));
  user.parts.push_back(
      Part::FileFromBytes(std::string(3000, 'f') + "canaryfilebytes2x3c", "text/plain", "a.txt"));
  ASSERT_TRUE(store.Append("secret", user));
  Message assistant;
  assistant.role = Role::kAssistant;
  assistant.parts.push_back(Part::Reasoning("canaryreason7u8i thinking"));
  assistant.parts.push_back(Part::ToolCall("call1", "search", R"({"q":"canarytoolin9o0p"})"));
  ASSERT_TRUE(store.Append("secret", assistant));
  Message tool;
  tool.role = Role::kTool;
  tool.parts.push_back(Part::ToolResult("call1", "canarytoolout1a2s found"));
  ASSERT_TRUE(store.Append("secret", tool));
  ASSERT_TRUE(store.Compact(
      "secret", {.from_seq = 1, .to_seq = 3, .summary = "canarysummary3d4f of it all"}));
  auto draft = store.OpenDraft("secret", Role::kAssistant, "m");
  ASSERT_TRUE(draft);
  draft->text = "canarydraft5g6h streaming";
  ASSERT_TRUE(store.SaveDraft(*draft).ok());
  ASSERT_TRUE(store.ForkSession("secret", 3, {.id = "secretfork"}));
  ASSERT_TRUE(store.Append("secretfork", TextMessage(Role::kUser, "canaryfork7j8k continued")));
  // Deleted rows leave free pages behind: they must not hold plaintext either.
  ASSERT_TRUE(store.CreateSession({.id = "gone"}));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(store.Append(
        "gone", TextMessage(Role::kUser, "canarydeleted4v5b " + std::string(500, 'd'))));
  }
  ASSERT_TRUE(store.DeleteSession("gone").ok());
  MemoryOptions memory_options;
  memory_options.search.embedder.from_environment = false;
  auto memory = CodeMemory::Open(store, memory_options);
  ASSERT_TRUE(memory) << memory.error().ToString();
  ASSERT_TRUE((*memory)->RecordWrite({.file_path = "/src/canaryproj/a.py",
                                      .new_code = "def canarycode9l0z():\n    return 1\n",
                                      .session_id = "secret",
                                      .project = "/src/canaryproj"}));
  SearchOptions options;
  options.embedder.from_environment = false;
  options.approximate_threshold = 1;  // an HNSW file on disk however small the store
  auto index = SearchIndex::Open(store, options);
  ASSERT_TRUE(index) << index.error().ToString();
  ASSERT_TRUE((*index)->IndexPending());
  ASSERT_TRUE((*index)->Embed());
  ASSERT_TRUE((*index)->BuildVectorIndex().ok());
}

std::vector<std::string> Hits(Store& store, const std::string& query, SearchMode mode) {
  SearchOptions options;
  options.embedder.from_environment = false;
  options.approximate_threshold = 1;
  auto index = SearchIndex::Open(store, options);
  EXPECT_TRUE(index) << index.error().ToString();
  if (!index) return {};
  auto r = (*index)->Search({.query = query, .mode = mode});
  EXPECT_TRUE(r) << r.error().ToString();
  std::vector<std::string> out;
  if (!r) return out;
  for (const SearchHit& h : r->hits) {
    out.push_back(h.session_id + "#" + std::to_string(h.seq) + " " + h.snippet);
  }
  return out;
}

class EncryptionCanary : public ::testing::Test {
 protected:
  StoreOptions Options(bool keyed) {
    StoreOptions o;
    o.clock = [this] { return now_ms_ += 1000; };
    if (keyed) o.key_file = key_;
    return o;
  }
  void SetUp() override { ASSERT_TRUE(NewKeyFile(key_).ok()); }

  TempDir dir_;
  std::string key_ = dir_.Sub("key");
  int64_t now_ms_ = 1'700'000'000'000;
};

TEST_F(EncryptionCanary, NoPlantedWordIsInAnyFileOfAnEncryptedStore) {
  // The control: the same work without a key leaves every word on disk.
  {
    auto plain = Store::Open(dir_.Sub("plain"), Options(false));
    ASSERT_TRUE(plain) << plain.error().ToString();
    PlantEverywhere(**plain);
    for (const auto& [needle, where] : CanaryTraces(dir_.Sub("plain"), nullptr, kCanaries)) {
      EXPECT_FALSE(where.empty()) << needle << " is not in the plaintext store: the scan is blind";
    }
  }
  const std::string dir = dir_.Sub("sealed");
  auto sealed = Store::Open(dir, Options(true));
  ASSERT_TRUE(sealed) << sealed.error().ToString();
  PlantEverywhere(**sealed);
  // While open (the WAL holds the recent pages) ...
  for (const auto& [needle, where] : CanaryTraces(dir, nullptr, kCanaries)) {
    EXPECT_TRUE(where.empty()) << needle << " is in " << ::testing::PrintToString(where);
  }
  // ... the answers are still right: keyword search with its snippet, the
  // vector search, the compaction's view, the blobs.
  auto keyword = Hits(**sealed, "canarytext5t6y", SearchMode::kKeyword);
  ASSERT_EQ(keyword.size(), 1u) << ::testing::PrintToString(keyword);
  EXPECT_NE(keyword[0].find("secret#1"), std::string::npos);
  EXPECT_NE(keyword[0].find("canarytext5t6y"), std::string::npos) << "snippet after decryption";
  EXPECT_FALSE(Hits(**sealed, "canaryfork7j8k", SearchMode::kHybrid).empty());
  auto projected = (*sealed)->ReadForProjection("secret");
  ASSERT_TRUE(projected) << projected.error().ToString();
  EXPECT_FALSE(projected->empty());
  auto messages = (*sealed)->ReadMessages("secret");
  ASSERT_TRUE(messages);
  const Part& image = messages->front().parts[1];
  ASSERT_TRUE(image.resource.has_value());
  auto bytes = (*sealed)->ReadBlob(image.resource->content_sha256, /*verify=*/true);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  EXPECT_EQ(*bytes, MakePng(6, 6, "canarypngbytes0f9e"));
  // ... and after closing (checkpointed into the database file).
  sealed->reset();
  for (const auto& [needle, where] : CanaryTraces(dir, nullptr, kCanaries)) {
    EXPECT_TRUE(where.empty()) << needle << " is in " << ::testing::PrintToString(where);
  }
  auto again = Store::Open(dir, Options(true));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(Hits(**again, "canarycode9l0z", SearchMode::kKeyword).size(), 1u);
}

}  // namespace
}  // namespace sessiondb::testing
