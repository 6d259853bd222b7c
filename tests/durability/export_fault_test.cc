// Exports interrupted by ENOSPC or EIO at every write boundary of the
// FileSystem given in ExportOptions (tests/durability/faulty_file_system.h):
// the error reaches the caller, no file stands half-written under a name the
// export was writing, nothing it did not create is touched, and what it did
// leave is byte for byte what a good export writes.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "durability/faulty_file_system.h"
#include "sessiondb/interop.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every regular file under `root` (or `root` itself when it is a file), by
// its path relative to root's parent, with its bytes.
std::map<std::string, std::string> FilesUnder(const fs::path& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) {
    out[root.filename().string()] = Slurp(root);
    return out;
  }
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    out[fs::relative(it->path(), root.parent_path()).generic_string()] = Slurp(it->path());
  }
  return out;
}

// A store with two sessions, text and images (so the folder formats write
// image files too).
void Fill(Store& store) {
  ASSERT_TRUE(store.CreateSession({.id = "chat-a", .title = "A"}));
  ASSERT_TRUE(store.CreateSession({.id = "chat-b", .title = "B"}));
  for (int i = 0; i < 3; ++i) {
    Message m;
    m.role = i % 2 ? Role::kAssistant : Role::kUser;
    m.parts.push_back(Part::Text("message " + std::to_string(i) + " of a"));
    if (i == 0) m.parts.push_back(Part::ImageFromBytes(MakePng(4, 4, "a0"), "image/png"));
    ASSERT_TRUE(store.Append("chat-a", m));
  }
  Message m;
  m.parts.push_back(Part::Text("the only message of b"));
  m.parts.push_back(Part::ImageFromBytes(MakePng(6, 6, "b0"), "image/png"));
  ASSERT_TRUE(store.Append("chat-b", m));
}

struct Case {
  ExportFormat format;
  Fault fault;
};

class ExportFault : public ::testing::TestWithParam<Case> {};

TEST_P(ExportFault, EveryWriteBoundaryFailsWithoutAHalfWrittenFile) {
  const ExportFormat format = GetParam().format;
  TempDir dir;
  auto store = Store::Open(dir.Sub("store"));
  ASSERT_TRUE(store) << store.error().ToString();
  Fill(**store);
  if (HasFatalFailure()) return;

  // A good export: what is expected, and how many boundaries it crosses.
  // In a folder of its own, as each run below is.
  const fs::path good = dir.path() / "good" / "out";
  fs::create_directories(good.parent_path());
  FaultyFileSystem counter(0, GetParam().fault);
  auto report = ExportTo(**store, good.string(), {.format = format, .file_system = &counter});
  ASSERT_TRUE(report) << report.error().ToString();
  const std::map<std::string, std::string> expected = FilesUnder(good);
  ASSERT_FALSE(expected.empty());
  const int64_t total = counter.boundaries();
  ASSERT_GE(total, 5) << "create, append, sync, close, rename at least";

  for (int64_t at = 1; at <= total; ++at) {
    SCOPED_TRACE("fault at boundary " + std::to_string(at) + " of " + std::to_string(total));
    const fs::path run = dir.path() / ("run" + std::to_string(at));
    fs::create_directories(run);
    const fs::path out = run / "out";
    // Files of someone else's, where the export puts its temporary files.
    const std::string theirs = "not the export's";
    std::ofstream(run / "out.partial") << theirs;
    FaultyFileSystem faulty(at, GetParam().fault);
    auto r = ExportTo(**store, out.string(), {.format = format, .file_system = &faulty});
    ASSERT_TRUE(faulty.injected());
    ASSERT_FALSE(r) << "the error of " << faulty.injected_at() << " did not reach the caller";
    EXPECT_EQ(r.error().code(), StatusCode::kIo) << r.error().ToString();
    EXPECT_NE(r.error().message().find("(injected)"), std::string::npos) << r.error().ToString();
    EXPECT_EQ(Slurp(run / "out.partial"), theirs);
    // Whatever it left is whole: a file of the good export, byte for byte,
    // and no temporary file.
    for (const auto& [name, bytes] : FilesUnder(out)) {
      auto it = expected.find(name);
      ASSERT_NE(it, expected.end()) << name << " is not a file a good export writes";
      EXPECT_EQ(bytes, it->second) << name << " is not whole";
    }
  }
}

TEST(ExportFault, AnExistingFileIsNeverReplaced) {
  TempDir dir;
  auto store = Store::Open(dir.Sub("store"));
  ASSERT_TRUE(store) << store.error().ToString();
  Fill(**store);
  for (ExportFormat format : {ExportFormat::kSnapshot, ExportFormat::kJsonl}) {
    const fs::path out = dir.path() / ("good." + std::string(ExportFormatName(format)));
    std::ofstream(out) << "a good file";
    FaultyFileSystem faulty(0, Fault::kNoSpace);
    auto r = ExportTo(**store, out.string(), {.format = format, .file_system = &faulty});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), StatusCode::kAlreadyExists);
    EXPECT_EQ(faulty.boundaries(), 0) << "nothing is written when the target exists";
    EXPECT_EQ(Slurp(out), "a good file");
  }
}

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (ExportFormat f : {ExportFormat::kSnapshot, ExportFormat::kAcdc, ExportFormat::kAgentsKt,
                         ExportFormat::kMarkdown, ExportFormat::kJsonl}) {
    for (Fault fault : {Fault::kNoSpace, Fault::kIoError}) out.push_back({f, fault});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Formats, ExportFault, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name(ExportFormatName(info.param.format));
                           std::erase(name, '-');
                           return name +
                                  (info.param.fault == Fault::kNoSpace ? "NoSpace" : "IoError");
                         });

}  // namespace
}  // namespace sessiondb::testing
