// Claude Code's file checkpoints (interop/claude_file_history.h): the
// "file-history-snapshot" records of a transcript and the backups they name
// under ~/.claude/file-history/<sessionId>/ become file versions of the
// agent's session; a hostile backup name, a missing backup and a
// relative path are skipped with their reason, never followed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/iso_time.h"
#include "interop_fixture.h"

namespace sessiondb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kHistorySession = "3f2b8c1e-0a4d-4e55-9c1b-7d2e8f6a5b40";

json HistoryUserLine(const std::string& uuid, const std::string& text) {
  return {{"type", "user"},
          {"uuid", uuid},
          {"parentUuid", nullptr},
          {"sessionId", kHistorySession},
          {"cwd", "/home/dev/app"},
          {"timestamp", "2025-06-01T10:00:00.000Z"},
          {"message", {{"role", "user"}, {"content", text}}}};
}

json FileSnapshot(const std::string& message_id, const json& tracked) {
  // As Claude Code writes it: no sessionId, the backups keyed by the path it tracks.
  return {{"type", "file-history-snapshot"},
          {"messageId", message_id},
          {"snapshot",
           {{"messageId", message_id},
            {"trackedFileBackups", tracked},
            {"timestamp", "2025-06-01T10:00:01.000Z"}}},
          {"isSnapshotUpdate", false}};
}

class ClaudeFileHistory : public InteropTest {};

TEST_F(ClaudeFileHistory, SnapshotsAndTheirBackupsBecomeVersions) {
  const fs::path claude = dir_.Sub(".claude");
  const fs::path transcript =
      claude / "projects" / "-home-dev-app" / (std::string(kHistorySession) + ".jsonl");
  const fs::path backups = claude / "file-history" / kHistorySession;
  WriteFile(backups / "a1b2c3d4e5f60718@v1", "def main():\n    pass\n");
  WriteFile(backups / "a1b2c3d4e5f60718@v2", "def main():\n    print('hi')\n");
  WriteFile(claude / "secret.txt", "not a backup\n");
  std::string text;
  text += HistoryUserLine("u1", "write main").dump() + "\n";
  text += FileSnapshot("u1", {{"/home/dev/app/main.py",
                               {{"backupFileName", "a1b2c3d4e5f60718@v1"},
                                {"version", 1},
                                {"backupTime", "2025-06-01T10:00:01.000Z"}}},
                              {"/home/dev/app/new.py",
                               {{"backupFileName", nullptr},
                                {"version", 1},
                                {"backupTime", "2025-06-01T10:00:01.000Z"}}}})
              .dump() +
          "\n";
  text += HistoryUserLine("u2", "print hi").dump() + "\n";
  text +=
      FileSnapshot(
          "u2",
          {{"/home/dev/app/main.py",
            {{"backupFileName", "a1b2c3d4e5f60718@v2"},
             {"version", 2},
             {"backupTime", "2025-06-01T10:05:00.000Z"}}},
           // Hostile and broken entries: skipped, never followed.
           {"/home/dev/app/evil.py", {{"backupFileName", "../../secret.txt"}, {"version", 1}}},
           {"/home/dev/app/gone.py", {{"backupFileName", "ffffffffffffffff@v1"}, {"version", 1}}},
           {"relative.py", {{"backupFileName", "a1b2c3d4e5f60718@v1"}}}})
          .dump() +
      "\n";
  WriteFile(transcript, text);

  auto store = OpenStore("store");
  ASSERT_TRUE(store);
  auto report = ImportPath(*store, transcript.string(), {.format = ImportFormat::kClaudeCode});
  ASSERT_TRUE(report) << report.error().ToString();

  auto main_versions = store->ListFileVersions({.file_path = "/home/dev/app/main.py"});
  ASSERT_TRUE(main_versions) << main_versions.error().ToString();
  ASSERT_EQ(main_versions->size(), 2u);
  EXPECT_EQ(*store->ReadBlob((*main_versions)[0].sha256), "def main():\n    pass\n");
  EXPECT_EQ(*store->ReadBlob((*main_versions)[1].sha256), "def main():\n    print('hi')\n");
  for (const FileVersion& v : *main_versions) {
    EXPECT_EQ(v.agent_session, kHistorySession);
    EXPECT_EQ(v.tool, "snapshot");
    EXPECT_EQ(v.source, "import");
    EXPECT_EQ(v.phase, FileVersionPhase::kAfter);
  }
  EXPECT_EQ((*main_versions)[1].time_ms, *ParseIsoTime("2025-06-01T10:05:00.000Z"));

  auto created = store->ListFileVersions({.file_path = "/home/dev/app/new.py"});
  ASSERT_TRUE(created);
  ASSERT_EQ(created->size(), 1u);
  EXPECT_FALSE((*created)[0].exists);

  // Nothing was read through the hostile name, and each bad entry says why.
  auto all = store->ListFileVersions({});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 3u);
  for (const FileVersion& v : *all) {
    if (v.exists) {
      EXPECT_NE(*store->ReadBlob(v.sha256), "not a backup\n");
    }
  }
  auto skipped = [&](const std::string& words) {
    for (const auto& s : report->skipped) {
      if (s.reason.find(words) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(skipped("backup name is not one Claude Code writes"));
  EXPECT_TRUE(skipped("missing or not a regular file"));
  EXPECT_TRUE(skipped("names no absolute path"));

  // A second import keeps each snapshot once.
  auto again = ImportPath(*store, transcript.string(), {.format = ImportFormat::kClaudeCode});
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(store->ListFileVersions({})->size(), 3u);
}

}  // namespace
}  // namespace sessiondb::testing
