// Every window replays: whatever was imported or appended, any window a
// harness may ask for projects to a request each provider accepts
// (window_checks.h says which windows, request_validators.h what is
// accepted). The histories: every format's, written as its tool writes it
// (foreign_histories.h); the realistic store of the interop suites
// (interop_fixture.h) and its snapshot imported again; any fixture file
// under tests/golden/interop or tests/interop/fixtures. The importer suites
// of tests/interop check their own samples the same way.
//
// Bounded to run in about a second; the random windows come from a fixed
// seed, so a failure repeats.
#include "interop/interop_fixture.h"
#include "projection/foreign_histories.h"
#include "projection/window_checks.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

class EveryWindowReplays : public InteropTest {
 protected:
  void ImportAndCheck(const ForeignHistory& h) {
    auto store = OpenStore("store-" + std::to_string(stores_++));
    ASSERT_TRUE(store);
    auto report =
        ImportPath(*store, h.path.string(), {.format = ParseImportFormat(h.format).value()});
    ASSERT_TRUE(report) << h.format << " " << h.name << ": " << report.error().ToString();
    EXPECT_GT(report->sessions_added, 0) << h.format << " " << h.name;
    checker_.CheckStore(*store, h.format + " (" + h.name + ")");
  }

  void TearDown() override {
    RecordProperty("sessions", checker_.sessions());
    RecordProperty("projections", checker_.projections());
    RecordProperty("empty", checker_.empty());
  }

  WindowChecker checker_;
  int stores_ = 0;
};

TEST_F(EveryWindowReplays, ForEveryForeignFormat) {
  for (const ForeignHistory& h : WriteForeignHistories(dir_.path() / "histories")) {
    SCOPED_TRACE(h.format + ": " + h.name);
    ImportAndCheck(h);
  }
  EXPECT_GT(checker_.sessions(), 9);
  EXPECT_EQ(checker_.invalid(), 0) << "of " << checker_.projections() << " projections";
  // An empty window is one whose every event projects to nothing; they are rare.
  EXPECT_LT(checker_.empty(), checker_.projections() / 10);
  // The signed thinking of Claude Code and the encrypted reasoning of Codex
  // went back to their own providers.
  EXPECT_GT(checker_.replayed("thinking"), 0);
  EXPECT_GT(checker_.replayed("reasoning"), 0);
}

TEST_F(EveryWindowReplays, ForTheInteropSampleAndItsSnapshot) {
  auto store = OpenStore("sample");
  ASSERT_TRUE(store);
  FillSample(*store);
  checker_.CheckStore(*store, "sample");
  const fs::path snapshot = dir_.path() / "sample.json";
  ASSERT_TRUE(ExportTo(*store, snapshot.string(), {.format = ExportFormat::kSnapshot}));
  auto copy = OpenStore("from-snapshot");
  ASSERT_TRUE(ImportPath(*copy, snapshot.string(), {.format = ImportFormat::kSnapshot}));
  checker_.CheckStore(*copy, "snapshot");
  EXPECT_EQ(checker_.invalid(), 0) << "of " << checker_.projections() << " projections";
}

// Fixture files, whatever formats they hold: one import per entry below a
// format's folder.
TEST_F(EveryWindowReplays, ForEveryFixtureFile) {
  const fs::path tests = fs::path(SESSIONDB_TESTDATA_DIR).parent_path();
  int files = 0;
  for (const fs::path& root : {tests / "golden" / "interop", tests / "interop" / "fixtures"}) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& format_dir : fs::directory_iterator(root, ec)) {
      if (!format_dir.is_directory()) continue;
      for (const auto& entry : fs::directory_iterator(format_dir.path(), ec)) {
        auto store = OpenStore("fixture-" + std::to_string(files++));
        auto report = ImportPath(*store, entry.path().string(), {});
        if (!report) continue;  // a fixture of what must be refused
        checker_.CheckStore(
            *store, format_dir.path().filename().string() + " " + entry.path().filename().string());
      }
    }
  }
  EXPECT_GT(files, 0);
  EXPECT_EQ(checker_.invalid(), 0) << "of " << checker_.projections() << " projections";
}

}  // namespace
}  // namespace sessiondb::testing
