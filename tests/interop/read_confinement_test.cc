// Imports must not read the server's files: ids from a record are names,
// never paths, and inside the allowed folders a symbolic link that leads
// elsewhere is not followed. Before: an Extremis index listing
// "../../outside" imported outside.json from beyond the upload, a NUL cut
// the name, skip reasons told which outside files existed, and a transcript
// symlinked to another folder (or to /etc/passwd) was imported through the
// server's --allow-dir.
#include "interop/read_confinement.h"

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "interop/interop_test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kGood = "22222222-0000-4000-8000-000000000001";

json ExtremisSession(const std::string& id, const std::string& text) {
  return {{"id", id},
          {"version", 1},
          {"messages",
           {{{"id", "33333333-0000-4000-8000-000000000001"},
             {"role", "user"},
             {"content", text},
             {"timestamp", "2025-01-15T10:30:00Z"}}}}};
}

std::string AllText(Store& store) {
  std::string all;
  for (const Session& s : AllSessions(store)) {
    for (const Event& e : EventsOf(store, s.id)) all += e.message.Text() + "\n";
  }
  return all;
}

class ReadConfinementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    upload_ = dir_.Sub("upload");
    outside_ = dir_.Sub("outside");
    fs::create_directories(upload_);
    fs::create_directories(outside_);
    store_ = OpenTestStore(dir_);
  }

  // An Extremis folder in the upload whose index lists `ids`, with a good
  // session of its own, and a secret session file beside it outside.
  std::string ExtremisWithIds(const std::vector<std::string>& ids) {
    json entries = json::array();
    for (const std::string& id : ids) entries.push_back({{"id", id}, {"title", "t"}});
    entries.push_back({{"id", kGood}, {"title", "good"}});
    WriteFile(upload_ + "/index.json",
              json{{"version", 1}, {"sessions", entries}, {"lastUpdated", "2025-01-15T10:31:04Z"}}
                  .dump());
    WriteFile(upload_ + "/" + kGood + ".json", ExtremisSession(kGood, "inside").dump());
    WriteFile(outside_ + "/secret.json", ExtremisSession("secret", "SECRET TEXT").dump());
    return upload_ + "/index.json";
  }

  TempDir dir_;
  std::string upload_, outside_;
  std::unique_ptr<Store> store_;
};

TEST_F(ReadConfinementTest, ExtremisIdsThatClimbOutOfTheFolderAreRefusedAsNames) {
  const std::string index = ExtremisWithIds({"../outside/secret", "../outside/nothing-here"});
  // No allowed roots at all (the CLI, or a server without them): ids are
  // still names, never paths.
  ImportReport r = MustImport(*store_, index, "extremis");
  EXPECT_EQ(r.sessions_added, 1);
  EXPECT_EQ(AllText(*store_).find("SECRET"), std::string::npos);
  EXPECT_NE(AllText(*store_).find("inside"), std::string::npos);
  // One reason for both, that tells nothing of what exists outside.
  std::vector<std::string> reasons;
  for (const auto& s : r.skipped) {
    if (s.reason.find("plain file name") != std::string::npos) reasons.push_back(s.reason);
    EXPECT_EQ(s.reason.find("missing"), std::string::npos) << s.reason;
    EXPECT_EQ(s.reason.find("secret"), std::string::npos) << s.reason;
  }
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0], reasons[1]);
}

TEST_F(ReadConfinementTest, AnExtremisIdHoldingANulIsRefused) {
  const std::string nul_id = std::string("../outside/secret") + '\0' + "x";
  const std::string index = ExtremisWithIds({nul_id, std::string(kGood) + '\0'});
  ImportReport r = MustImport(*store_, index, "extremis");
  EXPECT_EQ(AllText(*store_).find("SECRET"), std::string::npos);
  EXPECT_TRUE(SkippedFor(r, "plain file name"));
}

TEST(PlainFileName, RefusesSeparatorsDotsAndControlCharacters) {
  using interop::IsPlainFileName;
  EXPECT_TRUE(IsPlainFileName(kGood));
  EXPECT_TRUE(IsPlainFileName("1719500000000-abcdef012345.png"));
  for (std::string bad : {"", ".", "..", "../x", "a/b", "a\\b", "x..", "a\tb", "a\x7f"}) {
    EXPECT_FALSE(IsPlainFileName(bad)) << bad;
  }
  EXPECT_FALSE(IsPlainFileName(std::string("a\0b", 3)));
}

// A Claude Code project folder inside the allowed root holds a transcript
// that is a link to a transcript elsewhere, a link to /etc/passwd, and a
// linked folder that leads outside.
TEST_F(ReadConfinementTest, SymbolicLinksLeadingOutsideTheAllowedRootsAreNotRead) {
  const std::string project = upload_ + "/projects/-home-dev";
  fs::create_directories(project);
  const std::string line =
      R"({"parentUuid":null,"type":"user","sessionId":"@S","cwd":"/x","uuid":"aaaaaaaa-0000-4000-8000-00000000000@N","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"@T"}})";
  auto transcript = [&](const std::string& session, const std::string& n, const std::string& text) {
    std::string l = line;
    l.replace(l.find("@S"), 2, session);
    l.replace(l.find("@N"), 2, n);
    l.replace(l.find("@T"), 2, text);
    return l + "\n";
  };
  WriteFile(project + "/aaaaaaaa-1111-4000-8000-000000000001.jsonl",
            transcript("aaaaaaaa-1111-4000-8000-000000000001", "1", "inside"));
  WriteFile(outside_ + "/private.jsonl",
            transcript("aaaaaaaa-1111-4000-8000-000000000002", "2", "PRIVATE"));
  fs::create_symlink(outside_ + "/private.jsonl",
                     project + "/aaaaaaaa-1111-4000-8000-000000000002.jsonl");
  fs::create_symlink("/etc/passwd", project + "/aaaaaaaa-1111-4000-8000-000000000003.jsonl");
  fs::create_directories(outside_ + "/more");
  WriteFile(outside_ + "/more/aaaaaaaa-1111-4000-8000-000000000004.jsonl",
            transcript("aaaaaaaa-1111-4000-8000-000000000004", "4", "LINKED FOLDER"));
  fs::create_directory_symlink(outside_ + "/more", upload_ + "/projects/-linked");

  auto r = ImportPath(*store_, upload_ + "/projects",
                      {.format = ImportFormat::kClaudeCode, .allowed_roots = {upload_}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const std::string text = AllText(*store_);
  EXPECT_NE(text.find("inside"), std::string::npos);
  EXPECT_EQ(text.find("PRIVATE"), std::string::npos);
  EXPECT_EQ(text.find("root:"), std::string::npos) << "/etc/passwd was read";
  EXPECT_EQ(text.find("LINKED FOLDER"), std::string::npos);
  EXPECT_EQ(AllSessions(*store_).size(), 1u);
}

TEST_F(ReadConfinementTest, AFileNamedDirectlyThatLinksOutsideIsRefused) {
  fs::create_symlink("/etc/passwd", upload_ + "/history.jsonl");
  auto r = ImportPath(*store_, upload_ + "/history.jsonl",
                      {.format = ImportFormat::kPixir, .allowed_roots = {upload_}});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("leads outside the folders"), std::string::npos)
      << r.error().message();
  EXPECT_TRUE(AllSessions(*store_).empty());
}

TEST_F(ReadConfinementTest, AnImageLinkedOutsideTheUploadIsLeftOut) {
  // ac-dc names its images in records; the image file is a link outside.
  const std::string acdc = upload_ + "/.ac-dc";
  fs::create_directories(acdc + "/images");
  const std::string png = MakePng(3, 3, "outside");
  WriteFile(outside_ + "/x.png", png);
  fs::create_symlink(outside_ + "/x.png", acdc + "/images/1719500000000-abcdef012345.png");
  WriteFile(
      acdc + "/history.jsonl",
      R"({"id":"1","session_id":"sess_1","timestamp":"2024-06-27T15:00:00Z","role":"user","content":"look","image_refs":["1719500000000-abcdef012345.png"]})"
      "\n");
  auto r = ImportPath(*store_, acdc, {.format = ImportFormat::kAcdc, .allowed_roots = {upload_}});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->images_added, 0);
  EXPECT_TRUE(SkippedFor(*r, "leads outside the folders")) << r->skipped.size();
  // Without confinement (the user's own CLI) the same link is followed.
  TempDir other;
  auto store = OpenTestStore(other);
  auto free = ImportPath(*store, acdc, {.format = ImportFormat::kAcdc});
  ASSERT_TRUE(free.has_value());
  EXPECT_FALSE(SkippedFor(*free, "leads outside the folders"));
}

}  // namespace
}  // namespace sessiondb::testing
