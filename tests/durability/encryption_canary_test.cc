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
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "pg_test_database.h"
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

// The canaries with `tag` appended: the plaintext control on PostgreSQL uses
// its own, as the cluster's WAL is shared by every database in it.
std::vector<std::string> Tagged(const std::string& tag) {
  std::vector<std::string> out;
  for (const std::string& c : kCanaries) out.push_back(c + tag);
  return out;
}

// Writes the canaries (each with `tag` appended) into every part type of
// `store`, then indexes, embeds and saves the vector index.
void PlantEverywhere(Store& store, const std::string& tag = "") {
  auto c = [&](const char* canary) { return std::string(canary) + tag; };
  auto created = store.CreateSession({.id = "secret",
                                      .title = c("canarytitle1q2w"),
                                      .metadata_json = R"({"project":"/src/canaryproj","note":")" +
                                                       c("canarymeta3e4r") + R"("})"});
  ASSERT_TRUE(created) << created.error().ToString();
  Message user = TextMessage(Role::kUser, c("canarytext5t6y") + " about the plan");
  user.parts.push_back(Part::ImageFromBytes(MakePng(6, 6, c("canarypngbytes0f9e")), "image/png"));
  user.parts.push_back(Part::FileFromBytes(std::string(3000, 'f') + c("canaryfilebytes2x3c"),
                                           "text/plain", "a.txt"));
  ASSERT_TRUE(store.Append("secret", user));
  Message assistant;
  assistant.role = Role::kAssistant;
  assistant.parts.push_back(Part::Reasoning(c("canaryreason7u8i") + " thinking"));
  assistant.parts.push_back(
      Part::ToolCall("call1", "search", R"({"q":")" + c("canarytoolin9o0p") + R"("})"));
  ASSERT_TRUE(store.Append("secret", assistant));
  Message tool;
  tool.role = Role::kTool;
  tool.parts.push_back(Part::ToolResult("call1", c("canarytoolout1a2s") + " found"));
  ASSERT_TRUE(store.Append("secret", tool));
  ASSERT_TRUE(store.Compact(
      "secret", {.from_seq = 1, .to_seq = 3, .summary = c("canarysummary3d4f") + " of it all"}));
  auto draft = store.OpenDraft("secret", Role::kAssistant, "m");
  ASSERT_TRUE(draft);
  draft->text = c("canarydraft5g6h") + " streaming";
  ASSERT_TRUE(store.SaveDraft(*draft).ok());
  ASSERT_TRUE(store.ForkSession("secret", 3, {.id = "secretfork"}));
  ASSERT_TRUE(
      store.Append("secretfork", TextMessage(Role::kUser, c("canaryfork7j8k") + " continued")));
  // Deleted rows leave free pages behind: they must not hold plaintext either.
  ASSERT_TRUE(store.CreateSession({.id = "gone"}));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(store.Append(
        "gone", TextMessage(Role::kUser, c("canarydeleted4v5b") + " " + std::string(500, 'd'))));
  }
  ASSERT_TRUE(store.DeleteSession("gone").ok());
  MemoryOptions memory_options;
  memory_options.search.embedder.from_environment = false;
  auto memory = CodeMemory::Open(store, memory_options);
  ASSERT_TRUE(memory) << memory.error().ToString();
  ASSERT_TRUE(
      (*memory)->RecordWrite({.file_path = "/src/canaryproj/a.py",
                              .new_code = "def " + c("canarycode9l0z") + "():\n    return 1\n",
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

// The newest installed PostgreSQL's programs, as scripts/pg_cluster.sh picks them.
std::string PgBinDir() {
  std::string best;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql")) {
    const std::string bin = (e.path() / "bin").string();
    if (std::filesystem::exists(bin + "/pg_dump") && bin > best) best = bin;
  }
  return best;
}

// What `pg_dump` of the database prints: the logical backup an operator takes.
std::string PgDump(const PgTestDatabase& db) {
  const std::string bin = PgBinDir();
  std::string out;
  FILE* pipe = ::popen((bin + "/pg_dump --no-owner -d '" + db.uri() + "' 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  EXPECT_EQ(::pclose(pipe), 0) << out.substr(0, 2000);
  return out;
}

// Where each needle is in the cluster's WAL segments (shared by every
// database of the test cluster: hence tags of their own per store).
std::map<std::string, std::vector<std::string>> WalTraces(const PgTestDatabase& db,
                                                          const std::vector<std::string>& needles) {
  std::map<std::string, std::vector<std::string>> found;
  for (const std::string& n : needles) found[n];
  const std::filesystem::path wal =
      std::filesystem::path(db.Query("SHOW data_directory")) / "pg_wal";
  for (const auto& e : std::filesystem::directory_iterator(wal)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string content((std::istreambuf_iterator<char>(in)), {});
    for (const std::string& n : needles) {
      if (content.find(n) != std::string::npos) found[n].push_back(e.path().string());
    }
  }
  return found;
}

// The same proof on PostgreSQL: an encrypted namespace leaves no planted
// word in any table (read as text), in the database's heap files and the
// cluster's WAL after a CHECKPOINT, or in a pg_dump of the database, while a
// plaintext namespace doing the same work shows them (the scans see).
TEST_F(EncryptionCanary, NoPlantedWordIsInTheTablesFilesWalOrDumpOfAnEncryptedNamespace) {
  const std::string plain_tag = "pq" + std::to_string(::getpid());
  const std::string sealed_tag = "sq" + std::to_string(::getpid());
  PgTestDatabase plain_db;
  ASSERT_TRUE(plain_db.ok());
  {
    auto plain = Store::Open(plain_db.uri(), Options(false));
    ASSERT_TRUE(plain) << plain.error().ToString();
    PlantEverywhere(**plain, plain_tag);
  }
  const std::vector<std::string> plain_canaries = Tagged(plain_tag);
  for (const auto& [needle, where] : CanaryTraces("", &plain_db, plain_canaries)) {
    EXPECT_FALSE(where.empty()) << needle << " is not in the plaintext store: the scan is blind";
  }
  const std::string plain_dump = PgDump(plain_db);
  EXPECT_NE(plain_dump.find(plain_canaries[2]), std::string::npos) << "the dump scan is blind";

  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  auto sealed = Store::Open(db.uri(), Options(true));
  ASSERT_TRUE(sealed) << sealed.error().ToString();
  PlantEverywhere(**sealed, sealed_tag);
  const std::vector<std::string> canaries = Tagged(sealed_tag);
  for (const auto& [needle, where] : CanaryTraces("", &db, canaries)) {  // CHECKPOINTs
    EXPECT_TRUE(where.empty()) << needle << " is in " << ::testing::PrintToString(where);
  }
  for (const auto& [needle, where] : WalTraces(db, canaries)) {
    EXPECT_TRUE(where.empty()) << needle << " is in the WAL: " << ::testing::PrintToString(where);
  }
  const std::string dump = PgDump(db);
  EXPECT_NE(dump.find("CREATE TABLE"), std::string::npos) << dump.substr(0, 2000);
  for (const std::string& needle : canaries) {
    EXPECT_EQ(dump.find(needle), std::string::npos) << needle << " is in the pg_dump output";
  }
  // The answers are still right: keyword search with its snippet, the
  // vectors, the projection, the image, the code memory.
  auto keyword = Hits(**sealed, canaries[2], SearchMode::kKeyword);
  ASSERT_EQ(keyword.size(), 1u) << ::testing::PrintToString(keyword);
  EXPECT_NE(keyword[0].find("secret#1"), std::string::npos);
  EXPECT_NE(keyword[0].find(canaries[2]), std::string::npos) << "snippet after decryption";
  EXPECT_FALSE(Hits(**sealed, canaries[8], SearchMode::kHybrid).empty());
  auto projected = (*sealed)->ReadForProjection("secret");
  ASSERT_TRUE(projected) << projected.error().ToString();
  EXPECT_FALSE(projected->empty());
  auto messages = (*sealed)->ReadMessages("secret");
  ASSERT_TRUE(messages) << messages.error().ToString();
  const Part& image = messages->front().parts[1];
  ASSERT_TRUE(image.resource.has_value());
  auto bytes = (*sealed)->ReadBlob(image.resource->content_sha256, /*verify=*/true);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  EXPECT_EQ(*bytes, MakePng(6, 6, canaries[10]));
  auto session = (*sealed)->GetSession("secret");
  ASSERT_TRUE(session) << session.error().ToString();
  EXPECT_EQ(session->title, canaries[0]);
  EXPECT_EQ(Hits(**sealed, canaries[9], SearchMode::kKeyword).size(), 1u);
}

}  // namespace
}  // namespace sessiondb::testing
