// ac-dc import and export: a realistic .ac-dc folder generated here (two
// interleaved sessions, both image naming schemes, a legacy image count,
// system events, turn ids, files and edit results), checked field by field;
// re-import; corrupt input; export and round trip.
#include <fstream>
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "interop/jsonl_reader.h"
#include "projection/window_checks.h"
#include "sessiondb/interop.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::MakeJpeg;
using testing::MakePng;
using testing::TempDir;

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The name ac-dc gives an image: the first 12 hex of SHA-256(data URI).
std::string AcdcName(const std::string& bytes, const std::string& mime, const std::string& ext,
                     const std::string& prefix = "") {
  const std::string uri = "data:" + mime + ";base64," + blob::Base64Encode(bytes);
  return prefix + blob::Sha256Hex(uri).substr(0, 12) + ext;
}

// A .ac-dc folder as ac-dc writes it.
struct AcdcFixture {
  fs::path dir;
  std::string png = MakePng(4, 3, "first");
  std::string jpeg = MakeJpeg(8, 6, "second");
  std::string png_name;
  std::string jpeg_name;

  explicit AcdcFixture(const fs::path& root) : dir(root / ".ac-dc") {
    png_name = AcdcName(png, "image/png", ".png");
    jpeg_name = AcdcName(jpeg, "image/jpeg", ".jpg", "1736956800000-");
    WriteFile(dir / "images" / png_name, png);
    WriteFile(dir / "images" / jpeg_name, jpeg);
  }

  std::vector<json> Records() const {
    return {
        {{"id", "1719500000000-aaaa0001"},
         {"session_id", "sess_1719500000000_f0e1d2"},
         {"timestamp", "2024-06-27T15:00:00Z"},
         {"role", "user"},
         {"content", "What is in these screenshots?"},
         {"files", {"src/app.py"}},
         {"image_refs", {png_name, jpeg_name}},
         {"turn_id", "turn_1719500000000_abc123"}},
        {{"id", "1719500001000-bbbb0001"},
         {"session_id", "sess_1719500100000_0a0b0c"},
         {"timestamp", "2024-06-27T15:01:40.000000+00:00"},
         {"role", "user"},
         {"content", "An old message"},
         {"images", 2}},
        {{"id", "1719500002000-aaaa0002"},
         {"session_id", "sess_1719500000000_f0e1d2"},
         {"timestamp", "2024-06-27T15:00:02.500Z"},
         {"role", "assistant"},
         {"content", "A login form; I fixed the handler."},
         {"files_modified", {"src/app.py"}},
         {"edit_results", {{{"file", "src/app.py"}, {"status", "applied"}}}},
         {"turn_id", "turn_1719500000000_abc123"}},
        {{"id", "1719500003000-aaaa0003"},
         {"session_id", "sess_1719500000000_f0e1d2"},
         {"timestamp", "2024-06-27T15:00:03Z"},
         {"role", "user"},
         {"content", "Committed: fix login handler"},
         {"system_event", true}},
    };
  }

  void Write(const std::vector<json>& records, const std::string& tail = "") const {
    std::string text;
    for (const json& r : records) text += r.dump() + "\n";
    WriteFile(dir / "history.jsonl", text + tail);
  }
};

std::unique_ptr<Store> OpenStore(const TempDir& tmp) {
  auto store = Store::Open(tmp.Sub("store"));
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  return std::move(*store);
}

bool HasSkip(const ImportReport& r, const std::string& where, const std::string& words) {
  for (const SkippedRecord& s : r.skipped) {
    if (s.where == where && s.reason.find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(AcdcImport, DetectsTheFolderAndTheHistoryFile) {
  TempDir tmp;
  AcdcFixture fx(tmp.path());
  fx.Write(fx.Records());
  EXPECT_EQ(DetectImportFormat(fx.dir.string()).value_or(ImportFormat::kSnapshot),
            ImportFormat::kAcdc);
  EXPECT_EQ(
      DetectImportFormat((fx.dir / "history.jsonl").string()).value_or(ImportFormat::kSnapshot),
      ImportFormat::kAcdc);
  // A JSON Lines file of another shape is not ac-dc's.
  WriteFile(tmp.path() / "other" / "history.jsonl", "{\"display\":\"hi\",\"project\":\"/x\"}\n");
  EXPECT_FALSE(DetectImportFormat((tmp.path() / "other").string()).has_value());
}

TEST(AcdcImport, EveryWindowOfTheSampleReplays) {
  TempDir tmp;
  AcdcFixture fx(tmp.path());
  fx.Write(fx.Records());
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.dir.string(), {.format = ImportFormat::kAcdc}));
  testing::ExpectEveryWindowReplays(*store, "ac-dc sample");
}

TEST(AcdcImport, ImportsEveryFieldOfARealisticHistory) {
  TempDir tmp;
  AcdcFixture fx(tmp.path());
  fx.Write(fx.Records());
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->format, ImportFormat::kAcdc);
  EXPECT_EQ(report->sessions_added, 2);
  EXPECT_EQ(report->messages_added, 4);
  EXPECT_EQ(report->images_added, 2);
  EXPECT_EQ(report->records_skipped, 0);

  auto s = store->GetSession("sess_1719500000000_f0e1d2");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->message_count, 3);
  EXPECT_EQ(s->title, "What is in these screenshots?");
  auto msgs = store->ReadMessages(s->id);
  ASSERT_TRUE(msgs.has_value());
  ASSERT_EQ(msgs->size(), 3u);

  const Message& user = (*msgs)[0];
  EXPECT_EQ(user.role, Role::kUser);
  EXPECT_EQ(user.Text(), "What is in these screenshots?");
  EXPECT_EQ(user.ts_ms, 1719500400000);
  EXPECT_EQ(user.files, std::vector<std::string>{"src/app.py"});
  ASSERT_EQ(user.parts.size(), 3u);
  ASSERT_TRUE(user.parts[1].resource.has_value());
  EXPECT_EQ(user.parts[1].resource->mime, "image/png");
  EXPECT_EQ(user.parts[1].resource->width, 4);
  EXPECT_EQ(store->ReadBlob(user.parts[1].resource->content_sha256).value_or(""), fx.png);
  ASSERT_TRUE(user.parts[2].resource.has_value());
  EXPECT_EQ(user.parts[2].resource->mime, "image/jpeg");
  EXPECT_EQ(store->ReadBlob(user.parts[2].resource->content_sha256).value_or(""), fx.jpeg);
  json meta = json::parse(user.metadata_json);
  EXPECT_EQ(meta["turn_id"], "turn_1719500000000_abc123");
  EXPECT_EQ(meta["acdc_id"], "1719500000000-aaaa0001");

  const Message& reply = (*msgs)[1];
  EXPECT_EQ(reply.role, Role::kAssistant);
  EXPECT_EQ(reply.ts_ms, 1719500402500);
  EXPECT_EQ(reply.files_modified, std::vector<std::string>{"src/app.py"});
  EXPECT_EQ(json::parse(reply.edit_results_json),
            json::parse(R"([{"file":"src/app.py","status":"applied"}])"));

  const Message& event = (*msgs)[2];
  EXPECT_EQ(event.role, Role::kUser);
  EXPECT_EQ(json::parse(event.metadata_json).value("system_event", false), true);

  auto legacy = store->ReadMessages("sess_1719500100000_0a0b0c");
  ASSERT_TRUE(legacy.has_value());
  ASSERT_EQ(legacy->size(), 1u);
  EXPECT_EQ((*legacy)[0].Text(), "An old message");
  EXPECT_EQ((*legacy)[0].parts.size(), 1u);
  EXPECT_EQ(json::parse((*legacy)[0].metadata_json)["images_not_saved"], 2);
}

TEST(AcdcImport, ReimportingAddsNothingAndAGrownHistoryAddsItsTail) {
  TempDir tmp;
  AcdcFixture fx(tmp.path());
  fx.Write(fx.Records());
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.dir.string(), {}).has_value());
  auto before = store->ReadEvents("sess_1719500000000_f0e1d2");
  ASSERT_TRUE(before.has_value());

  auto again = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->sessions_added, 0);
  EXPECT_EQ(again->sessions_unchanged, 2);
  EXPECT_EQ(again->messages_added, 0);
  auto after = store->ReadEvents("sess_1719500000000_f0e1d2");
  ASSERT_TRUE(after.has_value());
  ASSERT_EQ(after->size(), before->size());
  for (size_t i = 0; i < after->size(); ++i) EXPECT_EQ((*after)[i].id, (*before)[i].id);

  auto records = fx.Records();
  records.push_back({{"id", "1719500009000-aaaa0009"},
                     {"session_id", "sess_1719500000000_f0e1d2"},
                     {"timestamp", "2024-06-27T15:00:09Z"},
                     {"role", "user"},
                     {"content", "One more thing"}});
  fx.Write(records);
  auto grown = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(grown->sessions_extended, 1);
  EXPECT_EQ(grown->sessions_unchanged, 1);
  EXPECT_EQ(grown->messages_added, 1);
  EXPECT_EQ(store->GetSession("sess_1719500000000_f0e1d2")->message_count, 4);
}

TEST(AcdcImport, CorruptRecordsAreSkippedWithReasonsAndTheRestImports) {
  TempDir tmp;
  AcdcFixture fx(tmp.path());
  // Bytes that are not an image, under a name that says PNG (and a hash that is theirs).
  const std::string text_bytes = "definitely not a picture";
  const std::string fake = AcdcName(text_bytes, "image/png", ".png");
  WriteFile(fx.dir / "images" / fake, text_bytes);
  // A real PNG whose bytes do not hash to the name it is stored under.
  const std::string swapped = "0123456789ab.png";
  WriteFile(fx.dir / "images" / swapped, MakePng(2, 2, "swapped"));
  auto records = fx.Records();
  records[0]["image_refs"] = {fx.png_name, "ffffffffffff.png", fake, swapped};
  std::string text;
  for (size_t i = 0; i < records.size(); ++i) {
    text += records[i].dump() + "\n";
    if (i == 1) text += "this is not json\n";
  }
  text += std::string(interop::kMaxLineBytes + 1, 'x') + "\n";
  text += R"({"id":"1719500009000-trunc","session_id":"sess_1719500000000_f0e1d2","timest)";
  WriteFile(fx.dir / "history.jsonl", text);

  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->messages_added, 4);
  EXPECT_EQ(report->images_added, 1);
  EXPECT_TRUE(HasSkip(*report, "history.jsonl:1", "missing")) << report->skipped.size();
  EXPECT_TRUE(HasSkip(*report, "history.jsonl:1", "said to be an image"));
  EXPECT_TRUE(HasSkip(*report, "history.jsonl:1", "do not hash"));
  EXPECT_TRUE(HasSkip(*report, "history.jsonl:3", "the line is not valid JSON (parse error"));
  EXPECT_TRUE(HasSkip(*report, "history.jsonl:6", "longer than"));
  EXPECT_TRUE(HasSkip(*report, "history.jsonl:7", "truncated"));
  EXPECT_EQ(report->records_skipped, 6);

  auto msgs = store->ReadMessages("sess_1719500000000_f0e1d2");
  ASSERT_TRUE(msgs.has_value());
  ASSERT_EQ(msgs->size(), 3u);  // nothing of the bad lines got in
  ASSERT_EQ((*msgs)[0].parts.size(), 2u);
  EXPECT_EQ(store->ReadBlob((*msgs)[0].parts[1].resource->content_sha256).value_or(""), fx.png);
}

TEST(AcdcExport, RoundTripGivesTheSameMessagesAndImageBytes) {
  TempDir tmp;
  AcdcFixture fx(tmp.path());
  fx.Write(fx.Records());
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.dir.string(), {}).has_value());
  // A session born in sessiondb, with a system message, goes out too.
  auto native = store->CreateSession({.id = "native-1"});
  ASSERT_TRUE(native.has_value());
  Message sys;
  sys.role = Role::kSystem;
  sys.parts.push_back(Part::Text("Be brief."));
  ASSERT_TRUE(store->Append("native-1", sys).has_value());
  Message shot;
  shot.parts.push_back(Part::Text("Look"));
  shot.parts.push_back(Part::ImageFromBytes(MakePng(5, 5, "native"), "image/png"));
  ASSERT_TRUE(store->Append("native-1", shot).has_value());

  const fs::path out = tmp.path() / "out" / ".ac-dc";
  auto exported = ExportTo(*store, out.string(), {.format = ExportFormat::kAcdc});
  ASSERT_TRUE(exported.has_value()) << exported.error().ToString();
  EXPECT_EQ(exported->sessions, 3);
  EXPECT_EQ(exported->messages, 6);
  EXPECT_EQ(exported->images, 3);
  EXPECT_FALSE(fs::exists(out / "history.jsonl.partial"));
  // The images are named as ac-dc names them, so ac-dc finds them.
  EXPECT_EQ(ReadFile(out / "images" / fx.png_name), fx.png);
  EXPECT_EQ(ReadFile(out / "images" / AcdcName(fx.jpeg, "image/jpeg", ".jpg")), fx.jpeg);
  // Exporting onto an existing history is refused.
  EXPECT_EQ(ExportTo(*store, out.string(), {.format = ExportFormat::kAcdc}).error().code(),
            StatusCode::kAlreadyExists);

  TempDir tmp2;
  auto copy = OpenStore(tmp2);
  auto back = ImportPath(*copy, out.string(), {});
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->records_skipped, 0);
  EXPECT_EQ(back->sessions_added, 3);
  for (const char* id : {"sess_1719500000000_f0e1d2", "sess_1719500100000_0a0b0c", "native-1"}) {
    auto a = store->ReadMessages(id);
    auto b = copy->ReadMessages(id);
    ASSERT_TRUE(a.has_value() && b.has_value()) << id;
    ASSERT_EQ(a->size(), b->size()) << id;
    for (size_t i = 0; i < a->size(); ++i) {
      const Message& x = (*a)[i];
      const Message& y = (*b)[i];
      EXPECT_EQ(x.Text(), y.Text());
      EXPECT_EQ(x.ts_ms, y.ts_ms);
      EXPECT_EQ(x.files, y.files);
      EXPECT_EQ(x.files_modified, y.files_modified);
      EXPECT_EQ(x.edit_results_json.empty(), y.edit_results_json.empty());
      EXPECT_EQ(x.role == Role::kAssistant, y.role == Role::kAssistant);
      ASSERT_EQ(x.parts.size(), y.parts.size());
      for (size_t k = 0; k < x.parts.size(); ++k) {
        if (!x.parts[k].resource) continue;
        ASSERT_TRUE(y.parts[k].resource.has_value());
        EXPECT_EQ(copy->ReadBlob(y.parts[k].resource->content_sha256).value_or("?"),
                  store->ReadBlob(x.parts[k].resource->content_sha256).value_or("!"));
      }
    }
  }
  // The system message went out as an ac-dc system event.
  auto native_back = copy->ReadMessages("native-1");
  EXPECT_EQ(json::parse((*native_back)[0].metadata_json).value("system_event", false), true);
  // Importing our own export into the store it came from adds nothing.
  auto same = ImportPath(*store, out.string(), {});
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->messages_added, 0);
  EXPECT_EQ(same->sessions_unchanged, 3);
}

}  // namespace
}  // namespace sessiondb
