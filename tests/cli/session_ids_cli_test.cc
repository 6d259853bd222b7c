// Session ids people can type: a unique prefix works wherever a session id
// does, an ambiguous one lists the candidates, `-` and `@` are the active
// session, and `ls` prints ids as short as they can be while still unique.
#include <sstream>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class SessionIds : public Cli {
 protected:
  void SetUp() override {
    for (const char* id : {"alpha-1111", "alpha-2222", "bravo-3333"}) {
      ASSERT_EQ(NewSession({"--id", id, "--title", std::string("title of ") + id}), id);
      ASSERT_EQ(Sdb({"append", id, std::string("hello from ") + id}).exit_code, 0);
    }
  }

  // The first column of `ls`'s table, header dropped.
  static std::vector<std::string> IdColumn(const std::string& table) {
    std::vector<std::string> ids;
    std::istringstream lines(table);
    std::string line;
    std::getline(lines, line);  // ID  TITLE ...
    while (std::getline(lines, line)) {
      if (line.empty() || line.starts_with("More:")) continue;
      ids.push_back(line.substr(0, line.find(' ')));
    }
    return ids;
  }
};

TEST_F(SessionIds, AUniquePrefixNamesTheSession) {
  json shown = Sdb({"--json", "show", "bravo"}).Json();
  EXPECT_EQ(shown["session"]["id"], "bravo-3333");
  EXPECT_EQ(Sdb({"--json", "show", "alpha-2"}).Json()["session"]["id"], "alpha-2222");
  // The whole id still works, and is found without a listing.
  EXPECT_EQ(Sdb({"--json", "show", "alpha-1111"}).Json()["session"]["id"], "alpha-1111");
}

TEST_F(SessionIds, EveryVerbThatTakesASessionTakesAPrefix) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"events", "bravo"},
           {"usage", "bravo"},
           {"drafts", "bravo"},
           {"project", "bravo"},
           {"append", "bravo", "more"},
           {"rename", "bravo", "Renamed"},
           {"archive", "bravo"},
           {"unarchive", "bravo"},
           {"active", "bravo"},
           {"search", "hello", "--session", "bravo"},
           {"export", "--format", "snapshot", "--session", "bravo", "--out", dir_.Sub("b.json")},
       }) {
    CliRun r = Sdb(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
  }
  json session = Sdb({"--json", "show", "bravo-3333"}).Json()["session"];
  EXPECT_EQ(session["title"], "Renamed");
  EXPECT_EQ(session["message_count"], 2);
  EXPECT_TRUE(Contains(Slurp(dir_.Sub("b.json")), "bravo-3333"));
  EXPECT_FALSE(Contains(Slurp(dir_.Sub("b.json")), "alpha-1111"));

  CliRun fork = Sdb({"--json", "fork", "bravo", "--at", "1"});
  ASSERT_EQ(fork.exit_code, 0) << fork.err;
  EXPECT_EQ(fork.Json()["parent_id"], "bravo-3333");
  CliRun compact = Sdb({"compact", "bravo", "--from", "1", "--to", "1", "--summary", "s"});
  EXPECT_EQ(compact.exit_code, 0) << compact.err;
  ASSERT_EQ(NewSession({"--id", "delta-4444"}), "delta-4444");
  CliRun rm = Sdb({"rm", "delta", "--yes"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(rm.out,
            "moved delta-4444 to the trash; `sessiondb trash restore delta-4444` brings it back\n");
  EXPECT_EQ(Sdb({"show", "delta-4444"}).exit_code, 3);
}

TEST_F(SessionIds, AnAmbiguousPrefixIsAnErrorListingTheCandidates) {
  CliRun r = Sdb({"show", "alpha"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "'alpha' is ambiguous")) << r.err;
  EXPECT_TRUE(Contains(r.err, "alpha-1111  title of alpha-1111")) << r.err;
  EXPECT_TRUE(Contains(r.err, "alpha-2222  title of alpha-2222")) << r.err;
  EXPECT_FALSE(Contains(r.err, "bravo")) << r.err;
  // Nothing was done to either of them.
  EXPECT_EQ(Sdb({"rm", "alpha", "--yes"}).exit_code, 2);
  EXPECT_EQ(Sdb({"show", "alpha-1111"}).exit_code, 0);
  EXPECT_EQ(Sdb({"show", "alpha-2222"}).exit_code, 0);
}

TEST_F(SessionIds, TheListOfCandidatesIsBounded) {
  for (int i = 0; i < 12; ++i) {
    ASSERT_FALSE(NewSession({"--id", "many-" + std::to_string(100 + i)}).empty());
  }
  CliRun r = Sdb({"show", "many-1"});
  EXPECT_EQ(r.exit_code, 2);
  size_t listed = 0;
  for (size_t at = r.err.find("\n  many-"); at != std::string::npos;
       at = r.err.find("\n  many-", at + 1)) {
    ++listed;
  }
  EXPECT_EQ(listed, 10u) << r.err;
  EXPECT_TRUE(Contains(r.err, "... and more")) << r.err;
}

TEST_F(SessionIds, AShortOrUnknownPrefixIsNotFound) {
  CliRun shorter = Sdb({"show", "bra"});  // fewer than 4 characters: never a prefix
  EXPECT_EQ(shorter.exit_code, 3);
  EXPECT_TRUE(Contains(shorter.err, "'bra' does not exist")) << shorter.err;
  EXPECT_EQ(Sdb({"show", "charlie"}).exit_code, 3);
}

TEST_F(SessionIds, DashAndAtAreTheActiveSessionAndShowDefaultsToIt) {
  CliRun none = Sdb({"show"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_TRUE(Contains(none.err, "none is set")) << none.err;
  EXPECT_EQ(Sdb({"events", "-"}).exit_code, 3);

  ASSERT_EQ(Sdb({"active", "alpha-2"}).exit_code, 0);
  EXPECT_EQ(Sdb({"active"}).out, "alpha-2222\n");
  EXPECT_EQ(Sdb({"--json", "show"}).Json()["session"]["id"], "alpha-2222");
  EXPECT_EQ(Sdb({"--json", "show", "-"}).Json()["session"]["id"], "alpha-2222");
  ASSERT_EQ(Sdb({"append", "@", "to the active one"}).exit_code, 0);
  EXPECT_EQ(MessageCount("alpha-2222"), 2u);
  EXPECT_EQ(MessageCount("alpha-1111"), 1u);
}

TEST_F(SessionIds, LsPrintsShortUniqueIdsFullOnesWithFullAndInJson) {
  // UUIDv7 ids made in the same moment share their first dozen characters.
  std::vector<std::string> made;
  for (int i = 0; i < 3; ++i) made.push_back(NewSession());
  CliRun ls = Sdb({"ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const std::vector<std::string> shown = IdColumn(ls.out);
  ASSERT_EQ(shown.size(), 6u) << ls.out;
  std::set<std::string> distinct(shown.begin(), shown.end());
  EXPECT_EQ(distinct.size(), shown.size()) << ls.out;
  for (const std::string& id : made) {
    const auto it = std::find_if(shown.begin(), shown.end(),
                                 [&](const std::string& s) { return id.starts_with(s); });
    ASSERT_NE(it, shown.end()) << id << " not in\n" << ls.out;
    EXPECT_GE(it->size(), 8u);
    EXPECT_LT(it->size(), id.size()) << "a UUID is shortened";
    // What ls prints can be typed back.
    EXPECT_EQ(Sdb({"--json", "show", *it}).Json()["session"]["id"], id);
  }
  // Custom ids shorter than the abbreviation are whole.
  EXPECT_TRUE(distinct.contains("alpha-1111")) << ls.out;

  const std::vector<std::string> full = IdColumn(Sdb({"ls", "--full"}).out);
  for (const std::string& id : made) {
    EXPECT_NE(std::find(full.begin(), full.end(), id), full.end()) << id;
  }
  json listed = Sdb({"--json", "ls"}).Json();
  std::set<std::string> json_ids;
  for (const auto& s : listed["sessions"]) json_ids.insert(s["id"].get<std::string>());
  for (const std::string& id : made) EXPECT_TRUE(json_ids.contains(id)) << id;
}

}  // namespace
}  // namespace sessiondb::testing
