// Runs the real `sessiondb` binary against throw-away stores and checks exit
// codes, human output and --json output.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
  json Json() const { return json::parse(out); }
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class Cli : public ::testing::Test {
 protected:
  // Runs `sessiondb --store <store> ARGS`, feeding `input` on stdin.
  CliRun Sdb(const std::vector<std::string>& args, const std::string& input = "",
             bool with_store = true, const std::string& env = "") {
    std::string cmd = env + " " + Quote(SESSIONDB_CLI_PATH);
    if (with_store) cmd += " --store " + Quote(store_);
    for (const auto& a : args) cmd += " " + Quote(a);
    const std::string in = dir_.Sub("stdin"), out = dir_.Sub("stdout"), err = dir_.Sub("stderr");
    { std::ofstream(in, std::ios::binary) << input; }
    cmd += " < " + Quote(in) + " > " + Quote(out) + " 2> " + Quote(err);
    CliRun r;
    int status = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }

  static std::string Slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  }

  std::string NewSession(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"new"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliRun r = Sdb(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string id = r.out;
    while (!id.empty() && id.back() == '\n') id.pop_back();
    return id;
  }

  std::string WritePng(const std::string& name, const std::string& salt) {
    std::string path = dir_.Sub(name);
    std::ofstream(path, std::ios::binary) << MakePng(4, 3, salt);
    return path;
  }

  TempDir dir_;
  std::string store_ = dir_.Sub("store");
};

TEST_F(Cli, HelpTeachesWithExamplesAndExitCodes) {
  CliRun r = Sdb({"--help"}, "", false);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
  EXPECT_NE(r.out.find("append"), std::string::npos);
  CliRun verb = Sdb({"append", "--help"}, "", false);
  EXPECT_EQ(verb.exit_code, 0);
  EXPECT_NE(verb.out.find("--image"), std::string::npos);
}

TEST_F(Cli, AnUnknownVerbIsAUsageError) { EXPECT_EQ(Sdb({"frobnicate"}).exit_code, 1); }

TEST_F(Cli, NewAppendShowRoundTripsTextAndAnImage) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  std::string id = NewSession({"--title", "Screenshots"});
  ASSERT_FALSE(id.empty());
  std::string png = WritePng("shot.png", "cli-roundtrip");
  CliRun a = Sdb({"--json", "append", id, "What is in this screenshot?", "--image", png});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json appended = a.Json();
  EXPECT_EQ(appended["seq"], 1);
  ASSERT_EQ(appended["resources"].size(), 1u);
  EXPECT_EQ(appended["resources"][0]["mime"], "image/png");
  EXPECT_EQ(appended["resources"][0]["width"], 4);
  EXPECT_EQ(appended["resources"][0]["height"], 3);

  CliRun reply = Sdb({"append", id, "--role", "assistant", "A terminal window."});
  ASSERT_EQ(reply.exit_code, 0) << reply.err;
  EXPECT_NE(reply.out.find("seq 2"), std::string::npos);

  CliRun shown = Sdb({"show", id, "--json", "--data-uris"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  json j = shown.Json();
  EXPECT_EQ(j["session"]["title"], "Screenshots");
  ASSERT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][0]["role"], "user");
  EXPECT_EQ(j["messages"][0]["parts"][0]["text"], "What is in this screenshot?");
  EXPECT_EQ(j["messages"][1]["role"], "assistant");
  std::string uri = j["messages"][0]["parts"][1]["data_uri"];
  EXPECT_EQ(uri.rfind("data:image/png;base64,", 0), 0u);

  CliRun human = Sdb({"show", id});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("image/png"), std::string::npos);
  EXPECT_NE(human.out.find("4x3"), std::string::npos);
  EXPECT_NE(human.out.find("A terminal window."), std::string::npos);
}

TEST_F(Cli, TextIsReadFromStdinWhenNotGiven) {
  std::string id = NewSession();
  CliRun a = Sdb({"append", id}, "piped question\n");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json j = Sdb({"--json", "show", id}).Json();
  EXPECT_EQ(j["messages"][0]["parts"][0]["text"], "piped question");
  EXPECT_EQ(j["session"]["title"], "piped question");
}

TEST_F(Cli, AnUnknownSessionExitsThreeAndNamesIt) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  CliRun r = Sdb({"show", "no-such-session"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no-such-session"), std::string::npos);
  CliRun j = Sdb({"--json", "append", "no-such-session", "hi"});
  EXPECT_EQ(j.exit_code, 3);
  EXPECT_EQ(j.Json()["error"]["code"], "not_found");
}

TEST_F(Cli, AMissingImageFileNamesThePathAndAppendsNothing) {
  std::string id = NewSession();
  ASSERT_EQ(Sdb({"append", id, "first"}).exit_code, 0);
  std::string missing = dir_.Sub("nope.png");
  CliRun r = Sdb({"append", id, "with image", "--image", missing});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(missing), std::string::npos);
  EXPECT_EQ(Sdb({"--json", "show", id}).Json()["messages"].size(), 1u);
}

TEST_F(Cli, AnImageOverTheLimitIsRefusedWithTheLimitNamed) {
  std::string id = NewSession();
  std::string png = dir_.Sub("big.png");
  std::ofstream(png, std::ios::binary) << MakePng(10, 10, "big", 4000);
  CliRun r = Sdb({"--max-image-bytes", "1000", "append", id, "big", "--image", png});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the limit is"), std::string::npos);
  EXPECT_EQ(Sdb({"--json", "show", id}).Json()["messages"].size(), 0u);
}

TEST_F(Cli, RenameArchiveUnarchiveAndListFilters) {
  std::string a = NewSession({"--id", "alpha", "--meta", "project=/src/app"});
  std::string b = NewSession({"--id", "beta"});
  ASSERT_EQ(Sdb({"rename", "alpha", "Alpha work"}).exit_code, 0);
  ASSERT_EQ(Sdb({"archive", "beta"}).exit_code, 0);
  json active = Sdb({"--json", "ls"}).Json();
  ASSERT_EQ(active["sessions"].size(), 1u);
  EXPECT_EQ(active["sessions"][0]["title"], "Alpha work");
  EXPECT_EQ(Sdb({"--json", "ls", "--archived"}).Json()["sessions"][0]["id"], "beta");
  EXPECT_EQ(Sdb({"--json", "ls", "--all"}).Json()["sessions"].size(), 2u);
  json by_project = Sdb({"--json", "ls", "--all", "--meta", "project=/src/app"}).Json();
  ASSERT_EQ(by_project["sessions"].size(), 1u);
  EXPECT_EQ(by_project["sessions"][0]["id"], "alpha");
  ASSERT_EQ(Sdb({"unarchive", "beta"}).exit_code, 0);
  EXPECT_EQ(Sdb({"--json", "ls"}).Json()["sessions"].size(), 2u);
  CliRun human = Sdb({"ls"});
  EXPECT_NE(human.out.find("Alpha work"), std::string::npos);
}

TEST_F(Cli, PagingWithTheCursorShowsEverySession) {
  for (int i = 0; i < 5; ++i) NewSession({"--id", "s" + std::to_string(i)});
  json first = Sdb({"--json", "ls", "--limit", "3"}).Json();
  ASSERT_EQ(first["sessions"].size(), 3u);
  ASSERT_TRUE(first["next_cursor"].is_string());
  json second = Sdb({"--json", "ls", "--limit", "3", "--cursor", first["next_cursor"]}).Json();
  EXPECT_EQ(second["sessions"].size(), 2u);
  EXPECT_TRUE(second["next_cursor"].is_null());
}

TEST_F(Cli, RmNeedsYesAndThenDeletes) {
  std::string id = NewSession();
  CliRun refused = Sdb({"rm", id});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--yes"), std::string::npos);
  EXPECT_EQ(Sdb({"show", id}).exit_code, 0);
  EXPECT_EQ(Sdb({"rm", id, "--yes"}).exit_code, 0);
  EXPECT_EQ(Sdb({"show", id}).exit_code, 3);
}

TEST_F(Cli, ActiveSessionCanBeSetShownAndCleared) {
  std::string id = NewSession();
  EXPECT_EQ(Sdb({"active"}).out, "no active session\n");
  ASSERT_EQ(Sdb({"active", id}).exit_code, 0);
  EXPECT_EQ(Sdb({"--json", "active"}).Json()["active_session"], id);
  EXPECT_EQ(Sdb({"active", "ghost"}).exit_code, 3);
  ASSERT_EQ(Sdb({"active", "--clear"}).exit_code, 0);
  EXPECT_TRUE(Sdb({"--json", "active"}).Json()["active_session"].is_null());
}

TEST_F(Cli, StatsGcAndVerifyReportTheStore) {
  std::string a = NewSession();
  std::string b = NewSession();
  std::string png = WritePng("p.png", "stats");
  ASSERT_EQ(Sdb({"append", a, "x", "--image", png}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", b, "y", "--image", png}).exit_code, 0);
  json stats = Sdb({"--json", "stats"}).Json();
  EXPECT_EQ(stats["sessions"], 2);
  EXPECT_EQ(stats["messages"], 2);
  EXPECT_EQ(stats["blobs"], 1);

  json verify = Sdb({"--json", "verify"}).Json();
  EXPECT_EQ(verify["clean"], true);
  EXPECT_EQ(verify["blobs_checked"], 1);

  ASSERT_EQ(Sdb({"rm", a, "--yes"}).exit_code, 0);
  ASSERT_EQ(Sdb({"rm", b, "--yes"}).exit_code, 0);
  json young = Sdb({"--json", "gc"}).Json();
  EXPECT_EQ(young["blobs_deleted"], 0);
  EXPECT_EQ(young["blobs_in_grace"], 1);
  json gc = Sdb({"--json", "gc", "--grace-minutes", "0"}).Json();
  EXPECT_EQ(gc["blobs_deleted"], 1);
  EXPECT_EQ(Sdb({"--json", "stats"}).Json()["blobs"], 0);
}

TEST_F(Cli, VerifyExitsEightWhenABlobIsMissing) {
  std::string id = NewSession();
  std::string png = WritePng("p.png", "verify-missing");
  json appended = Sdb({"--json", "append", id, "x", "--image", png}).Json();
  std::string sha = appended["resources"][0]["content_sha256"];
  std::filesystem::remove(store_ + "/blobs/sha256/" + sha.substr(0, 2) + "/" + sha);
  CliRun r = Sdb({"verify"});
  EXPECT_EQ(r.exit_code, 8);
  EXPECT_NE(r.out.find(sha), std::string::npos);
  CliRun shown = Sdb({"show", id});
  EXPECT_EQ(shown.exit_code, 0);
  EXPECT_NE(shown.out.find("MISSING"), std::string::npos);
}

TEST_F(Cli, TheStoreComesFromTheFlagThenTheEnvironmentThenXdg) {
  std::string env_store = dir_.Sub("env-store");
  std::string xdg = dir_.Sub("xdg");
  CliRun via_env = Sdb({"--json", "init"}, "", false, "SESSIONDB_STORE=" + Quote(env_store));
  EXPECT_EQ(via_env.Json()["store"], env_store);
  CliRun flag_wins = Sdb({"--json", "init"}, "", true, "SESSIONDB_STORE=" + Quote(env_store));
  EXPECT_EQ(flag_wins.Json()["store"], store_);
  CliRun via_xdg =
      Sdb({"--json", "init"}, "", false, "SESSIONDB_STORE= XDG_DATA_HOME=" + Quote(xdg));
  EXPECT_EQ(via_xdg.Json()["store"], xdg + "/sessiondb");
  EXPECT_TRUE(std::filesystem::exists(xdg + "/sessiondb/sessiondb.db"));
}

TEST_F(Cli, ReadingAStoreThatDoesNotExistSaysToRunInit) {
  CliRun r = Sdb({"ls"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("sessiondb init"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(store_));
}

TEST_F(Cli, PurgeRemovesOnlyOldArchivedSessions) {
  std::string keep = NewSession();
  std::string old = NewSession();
  ASSERT_EQ(Sdb({"archive", old}).exit_code, 0);
  // Nothing is older than a day yet.
  EXPECT_EQ(Sdb({"--json", "purge", "--older-than", "1"}).Json()["purged"], 0);
  EXPECT_EQ(Sdb({"--json", "purge", "--older-than", "0"}).Json()["purged"], 1);
  EXPECT_EQ(Sdb({"show", old}).exit_code, 3);
  EXPECT_EQ(Sdb({"show", keep}).exit_code, 0);
}

}  // namespace
}  // namespace sessiondb::testing
