// A zip entry is checked before it is inflated and inflated against the
// limit. Before: ExportArchive::Read allocated the entry's declared size and
// inflated it whole (a 1 MB upload took the server to 2.1 GB and stored a
// 1 GiB "image").
#include <zip.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "interop/export_archive.h"
#include "interop/interop_test_support.h"

namespace sessiondb::testing {
namespace {

void WriteZip(const std::string& path,
              const std::vector<std::pair<std::string, std::string>>& files) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, bytes] : files) {
    void* copy = malloc(bytes.size());
    memcpy(copy, bytes.data(), bytes.size());
    zip_source_t* src = zip_source_buffer(z, copy, bytes.size(), 1);
    const zip_int64_t i = zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE);
    ASSERT_GE(i, 0);
    zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_DEFLATE, 9);
  }
  ASSERT_EQ(zip_close(z), 0);
}

TEST(ExportArchiveCaps, AZipEntryLargerThanTheLimitIsRefusedBeforeInflating) {
  TempDir dir;
  const std::string zip = dir.Sub("export.zip");
  // 8 MiB of zeros deflate to a few KiB: a small bomb.
  WriteZip(zip, {{"conversations.json", "[]"},
                 {"file-bomb.png", std::string(size_t{8} << 20, '\0')},
                 {"file-small.png", std::string(1000, 'x')}});
  ASSERT_LT(std::filesystem::file_size(zip), size_t{1} << 20);
  auto archive = interop::ExportArchive::Open(zip);
  ASSERT_TRUE(archive.has_value()) << archive.error().message();
  auto bomb = (*archive)->Read("file-bomb.png", /*max_bytes=*/int64_t{1} << 20);
  ASSERT_FALSE(bomb.has_value());
  EXPECT_EQ(bomb.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bomb.error().message().find("file-bomb.png"), std::string::npos);
  EXPECT_NE(bomb.error().message().find("8388608"), std::string::npos) << bomb.error().message();
  EXPECT_NE(bomb.error().message().find("1048576"), std::string::npos) << bomb.error().message();
  // The archive still serves what is within the limit.
  auto small = (*archive)->Read("file-small.png", int64_t{1} << 20);
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->size(), 1000u);
}

TEST(ExportArchiveCaps, TheDefaultLimitIsTheStoresAttachmentLimit) {
  EXPECT_EQ(interop::kMaxExportFileBytes, StoreOptions{}.max_file_bytes);
}

TEST(ExportArchiveCaps, AChatGptImportSkipsTheOversizedImageAndKeepsTheRest) {
  TempDir dir;
  const std::string zip = dir.Sub("export.zip");
  using nlohmann::json;
  json mapping = json::object();
  mapping["root"] = {
      {"id", "root"}, {"message", nullptr}, {"parent", nullptr}, {"children", {"u1"}}};
  mapping["u1"] = {{"id", "u1"},
                   {"parent", "root"},
                   {"children", json::array()},
                   {"message",
                    {{"id", "u1"},
                     {"author", {{"role", "user"}}},
                     {"create_time", 1717000001.5},
                     {"content",
                      {{"content_type", "multimodal_text"},
                       {"parts",
                        {{{"content_type", "image_asset_pointer"},
                          {"asset_pointer", "file-service://file-Bomb1"}},
                         "What is in this picture?"}}}},
                     {"status", "finished_successfully"},
                     {"metadata", json::object()},
                     {"recipient", "all"}}}};
  json conv = {{"id", "67f0c1d2-aaaa-8000-9000-0123456789ab"},
               {"title", "bomb"},
               {"create_time", 1717000000.0},
               {"update_time", 1717000002.0},
               {"current_node", "u1"},
               {"mapping", mapping}};
  // Larger than the default limit (100 MiB), a few hundred KiB zipped.
  WriteZip(zip, {{"conversations.json", json::array({conv}).dump()},
                 {"file-Bomb1-cat.png",
                  std::string(static_cast<size_t>(interop::kMaxExportFileBytes) + 1, '\0')}});
  auto store = OpenTestStore(dir);
  ImportReport r = MustImport(*store, zip, "chatgpt");
  EXPECT_EQ(r.messages_added, 1);
  EXPECT_EQ(r.images_added, 0);
  EXPECT_TRUE(SkippedFor(r, "file-Bomb1-cat.png"))
      << (r.skipped.empty() ? "" : r.skipped[0].reason);
  EXPECT_TRUE(SkippedFor(r, "the limit for one file of an export is 104857600 bytes"));
}

}  // namespace
}  // namespace sessiondb::testing
