// `sessiondb verify` checks the database as well as the blobs: a page of the
// event log overwritten on disk is reported with the session it belongs to
// and exit code 8, where before it printed "all present and intact".
#include <fstream>
#include <optional>
#include <string_view>

#include "cli/cli_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

constexpr size_t kPageSize = 4096;  // SQLite's default, which the store keeps

class VerifyDatabase : public Cli {
 protected:
  // Three sessions whose logs each fill several pages of the events table, so
  // a page in the middle of one holds only that session's rows.
  void SetUp() override {
    auto store = Store::Open(store_);
    ASSERT_TRUE(store) << store.error().ToString();
    for (const std::string id : {"session-a", "session-b", "session-c"}) {
      ASSERT_TRUE((*store)->CreateSession({.id = id}));
      for (int i = 0; i < 60; ++i) {
        Message m;
        m.parts = {
            Part::Text("MARKER-" + id + " " + std::string(300, static_cast<char>('a' + i % 26)))};
        ASSERT_TRUE((*store)->Append(id, m));
      }
    }
    // Closing the last connection checkpoints the WAL into the database file.
  }

  // Overwrites the b-tree header of a leaf page of the event log that holds
  // rows of `session` and of no other session with 0xFF: the page is no
  // longer a valid b-tree page, as after a torn or stray write. (The rows of
  // interior pages are keys every session's reads go through.)
  void DamageALeafPageOnlyOf(const std::string& session) {
    const std::string path = store_ + "/sessiondb.db";
    ASSERT_FALSE(std::filesystem::exists(path + "-wal") &&
                 std::filesystem::file_size(path + "-wal") > 0);
    const std::string bytes = Slurp(path);
    std::optional<size_t> chosen;
    for (size_t page = 1; (page + 1) * kPageSize <= bytes.size() && !chosen; ++page) {
      const std::string_view p(bytes.data() + page * kPageSize, kPageSize);
      const bool leaf = p[0] == 0x0A;  // a leaf page of an index b-tree (WITHOUT ROWID table)
      bool others = false;
      for (const std::string other : {"session-a", "session-b", "session-c"}) {
        if (other != session && p.find(other) != std::string_view::npos) others = true;
      }
      if (leaf && !others && p.find("MARKER-" + session) != std::string_view::npos) chosen = page;
    }
    ASSERT_TRUE(chosen.has_value()) << "no leaf page holds only " << session << "'s rows";
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(*chosen * kPageSize));
    const std::string garbage(8, '\xFF');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    ASSERT_TRUE(f.good());
  }
};

TEST_F(VerifyDatabase, AHealthyStoreSaysTheDatabaseIsIntact) {
  CliRun r = Sdb({"verify"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "database: intact (SQLite integrity_check")) << r.out;
  json j = Sdb({"--json", "verify"}).Json();
  EXPECT_EQ(j["clean"], true);
  EXPECT_TRUE(j["database_problems"].empty());
}

TEST_F(VerifyDatabase, APageOfFlippedBytesIsReportedWithTheSessionItBelongsTo) {
  DamageALeafPageOnlyOf("session-b");

  CliRun r = Sdb({"verify"});
  EXPECT_EQ(r.exit_code, 8) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "database: DAMAGED")) << r.out;
  EXPECT_TRUE(Contains(r.out, "damaged session  session-b")) << r.out;
  EXPECT_FALSE(Contains(r.out, "damaged session  session-a")) << r.out;
  EXPECT_FALSE(Contains(r.out, "damaged session  session-c")) << r.out;

  CliRun jr = Sdb({"--json", "verify"});
  EXPECT_EQ(jr.exit_code, 8);
  json j = jr.Json();
  EXPECT_EQ(j["clean"], false);
  EXPECT_FALSE(j["database_problems"].empty());
  ASSERT_EQ(j["damaged_sessions"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["damaged_sessions"][0]["id"], "session-b");

  // The sessions the damage did not reach still read.
  EXPECT_EQ(Sdb({"show", "session-a"}).exit_code, 0);
  EXPECT_EQ(Sdb({"show", "session-c"}).exit_code, 0);
}

}  // namespace
}  // namespace sessiondb::testing
