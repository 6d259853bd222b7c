// Forgetting from the command line, against the real binary: rm to the
// trash, trash list/restore/empty, erase and its receipt, verify --erased
// (with hostile receipts), the ledger and retain.
#include <sys/stat.h>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class ForgetCli : public Cli {
 protected:
  std::string Listed() { return Sdb({"--json", "ls", "--all"}).out; }
  std::string TrashListed() { return Sdb({"--json", "trash"}).out; }
  std::vector<std::string> LedgerActions() {
    std::vector<std::string> out;
    const json ledger = Sdb({"--json", "ledger"}).Json();  // kept: the loop reads into it
    for (const json& e : ledger["entries"]) out.push_back(e["action"]);
    return out;
  }
};

TEST_F(ForgetCli, EachVerbsHelpNamesItsOptionsWithAnExample) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> verbs = {
      {{"rm"}, {"--erase", "--yes", "--receipt", "trash restore"}},
      {{"trash"}, {"restore", "empty"}},
      {{"trash", "restore"}, {"SESSION"}},
      {{"trash", "empty"}, {"--older-than", "--all", "--receipt"}},
      {{"erase"},
       {"--session", "--project", "--before", "--everything", "--search", "--limit", "--yes",
        "--receipt", "--reason"}},
      {{"ledger"}, {"--limit", "--before-id"}},
      {{"retain"}, {"--apply", "--show", "--set", "--trash-grace-days", "--rule"}},
      {{"verify"}, {"--erased"}},
      {{"serve"}, {"--retain-every"}},
  };
  for (const auto& [verb, options] : verbs) {
    std::vector<std::string> args = verb;
    args.push_back("--help");
    CliRun r = Run(args, {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << verb[0];
    EXPECT_TRUE(Contains(r.out, "Example")) << verb[0] << ":\n" << r.out;
    for (const std::string& o : options) {
      EXPECT_TRUE(Contains(r.out, o)) << verb[0] << " lacks " << o << ":\n" << r.out;
    }
  }
}

TEST_F(ForgetCli, TheTrashListsRestoresAndEmptiesWithAReceiptThatVerifies) {
  const std::string a = NewSession({"--title", "first"});
  const std::string b = NewSession({"--title", "second"});
  ASSERT_EQ(Sdb({"append", a, "hello there"}).exit_code, 0);
  CliRun human = Sdb({"rm", a});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(Contains(human.out, "sessiondb trash restore " + a)) << human.out;
  ASSERT_EQ(Sdb({"rm", b}).exit_code, 0);

  json trash = Sdb({"--json", "trash"}).Json();
  ASSERT_EQ(trash["sessions"].size(), 2u);
  for (const json& s : trash["sessions"]) {
    EXPECT_GT(s["trashed_ms"].get<int64_t>(), 0);
    EXPECT_TRUE(s["trashed"].get<std::string>().ends_with("Z")) << s;
  }
  CliRun table = Sdb({"trash"});
  EXPECT_TRUE(Contains(table.out, "first")) << table.out;
  EXPECT_TRUE(Contains(table.out, "TRASHED")) << table.out;

  // A unique prefix of a trashed id restores it. Ids made in the same 16 ms
  // share their first 12 characters (the time), so the prefix runs to where
  // a and b differ.
  size_t unique = 12;
  while (unique < a.size() && a.compare(0, unique, b, 0, unique) == 0) ++unique;
  CliRun restored = Sdb({"--json", "trash", "restore", a.substr(0, unique)});
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_EQ(restored.Json()["id"], a);
  EXPECT_EQ(Sdb({"--json", "show", a}).exit_code, 0);
  EXPECT_EQ(Sdb({"trash", "restore", "no-such-session"}).exit_code, 3);

  // The grace (30 days) holds b; --all takes it.
  CliRun kept = Sdb({"--json", "trash", "empty"});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_TRUE(kept.Json()["sessions"].empty()) << kept.out;
  const std::string receipt = dir_.Sub("receipt.json");
  CliRun emptied = Sdb({"trash", "empty", "--all", "--receipt", receipt});
  ASSERT_EQ(emptied.exit_code, 0) << emptied.err;
  EXPECT_TRUE(Contains(emptied.out, "erased 1 sessions")) << emptied.out;
  struct stat st {};
  ASSERT_EQ(stat(receipt.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(Sdb({"--json", "trash"}).Json()["sessions"].empty());

  CliRun verified = Sdb({"--json", "verify", "--erased", receipt});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_EQ(verified.Json()["erased"], true);
  EXPECT_EQ(verified.Json()["digest_ok"], true);

  const std::vector<std::string> actions = LedgerActions();
  ASSERT_FALSE(actions.empty());
  EXPECT_EQ(actions[0], "empty-trash");
  EXPECT_EQ(std::count(actions.begin(), actions.end(), "trash"), 2);
  EXPECT_EQ(std::count(actions.begin(), actions.end(), "restore"), 1);
  json entry = Sdb({"--json", "ledger", "--limit", "1"}).Json()["entries"][0];
  for (const char* key : {"id", "ts_ms", "ts", "actor", "action", "scope", "counts", "receipt_id",
                          "receipt_digest"}) {
    EXPECT_TRUE(entry.contains(key)) << key << " " << entry;
  }
  EXPECT_EQ(Sdb({"ledger", "--limit", "0"}).exit_code, 2);
}

TEST_F(ForgetCli, EraseRefusesWhatSelectsNothingOrIsUnclearAndChangesNothing) {
  const std::string a = NewSession();
  ASSERT_EQ(Sdb({"append", a, "keep me"}).exit_code, 0);
  const std::string before = Listed();
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"erase"}, 2, "needs what to erase"},
           {{"erase", "--before", "last tuesday"}, 2, "ISO-8601"},
           {{"erase", "--everything"}, 2, "--yes"},
           {{"erase", "--session", "no-such-session"}, 3, "no-such-session"},
           {{"erase", "--limit", "3"}, 1, "--search"},
           {{"erase", "--search", "keep", "--limit", "0"}, 2, "--limit"},
           {{"rm", "--receipt", "x.json", a}, 1, "--erase"},
       }) {
    CliRun r = Sdb(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args[1] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, c.says)) << r.err;
  }
  EXPECT_EQ(Listed(), before);
  EXPECT_TRUE(Sdb({"--json", "ledger"}).Json()["entries"].empty());
}

TEST_F(ForgetCli, EraseBySessionWritesTheReceiptOrPrintsIt) {
  const std::string a = NewSession();
  const std::string b = NewSession();
  ASSERT_EQ(Sdb({"append", a, "one"}).exit_code, 0);
  CliRun printed = Sdb({"--json", "erase", "--session", a, "--reason", "asked"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  json r = printed.Json();
  EXPECT_EQ(r["sessions"], json::array({a}));
  EXPECT_FALSE(r["digest"].get<std::string>().empty());
  EXPECT_EQ(Sdb({"show", a}).exit_code, 3);
  EXPECT_EQ(Sdb({"show", b}).exit_code, 0);

  CliRun human = Sdb({"erase", "--session", b});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(Contains(human.out, "erased 1 sessions")) << human.out;
  EXPECT_TRUE(Contains(human.out, "receipt ")) << human.out;
}

TEST_F(ForgetCli, EraseBySearchShowsTheMessagesAndErasesOnlyWithYes) {
  const std::string a = NewSession();
  ASSERT_EQ(Sdb({"append", a, "the zanzibar password is hunter2"}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", a, "an ordinary answer"}).exit_code, 0);
  CliRun shown = Sdb({"erase", "--search", "zanzibar"});
  EXPECT_EQ(shown.exit_code, 2);
  EXPECT_TRUE(Contains(shown.out, a + " #1")) << shown.out;
  EXPECT_TRUE(Contains(shown.err, "--yes")) << shown.err;
  EXPECT_TRUE(Contains(Sdb({"show", a}).out, "hunter2"));

  CliRun erased = Sdb({"--json", "erase", "--search", "zanzibar", "--yes"});
  ASSERT_EQ(erased.exit_code, 0) << erased.err;
  const std::string shown_after = Sdb({"show", a}).out;
  EXPECT_FALSE(Contains(shown_after, "hunter2")) << shown_after;
  EXPECT_TRUE(Contains(shown_after, "an ordinary answer")) << shown_after;
}

TEST_F(ForgetCli, VerifyErasedRefusesHugeUnreadableAndTamperedReceipts) {
  const std::string a = NewSession();
  ASSERT_EQ(Sdb({"append", a, "to forget"}).exit_code, 0);
  const std::string receipt = dir_.Sub("receipt.json");
  ASSERT_EQ(Sdb({"rm", "--erase", a, "--yes", "--receipt", receipt}).exit_code, 0);
  NewSession();
  const std::string before = Listed();
  const std::string ledger_before = Sdb({"--json", "ledger"}).out;

  const std::string huge = dir_.Sub("huge.json");
  { std::ofstream(huge) << "{"; }
  std::filesystem::resize_file(huge, int64_t{65} * 1024 * 1024);  // sparse: costs no disk
  CliRun big = Sdb({"verify", "--erased", huge});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_TRUE(Contains(big.err, "at most")) << big.err;

  const std::string junk = dir_.Sub("junk.json");
  { std::ofstream(junk) << "this is not json"; }
  CliRun not_json = Sdb({"verify", "--erased", junk});
  EXPECT_EQ(not_json.exit_code, 2);
  EXPECT_TRUE(Contains(not_json.err, "junk.json: not an erasure receipt")) << not_json.err;

  EXPECT_EQ(Sdb({"verify", "--erased", dir_.Sub("absent.json")}).exit_code, 3);

  // One count changed after it was issued: the digest no longer checks.
  json doc = json::parse(Slurp(receipt));
  ASSERT_TRUE(doc.contains("id"));
  doc["scope"] = doc["scope"].get<std::string>() + " (edited)";
  const std::string tampered = dir_.Sub("tampered.json");
  { std::ofstream(tampered) << doc.dump(); }
  CliRun checked = Sdb({"verify", "--erased", tampered});
  EXPECT_EQ(checked.exit_code, 1) << checked.out << checked.err;
  EXPECT_TRUE(Contains(checked.out, "NOT ERASED")) << checked.out;
  EXPECT_TRUE(Contains(checked.out, "digest")) << checked.out;

  EXPECT_EQ(Listed(), before);
  EXPECT_EQ(Sdb({"--json", "ledger"}).out, ledger_before);
}

TEST_F(ForgetCli, RetainSetsShowsDryRunsAndAppliesThePolicy) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  CliRun fresh = Sdb({"--json", "retain", "--show"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(fresh.Json(), (json{{"trash_grace_days", 30}, {"rules", json::array()}}));

  for (int i = 0; i < 3; ++i) NewSession();
  CliRun set = Sdb({"--json", "retain", "--set", "--trash-grace-days", "14", "--rule",
                    "keep-newest=1", "--rule", "project=/src/app/,archive-after-idle-days=7"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  const json policy = {{"trash_grace_days", 14},
                       {"rules",
                        {{{"project", ""},
                          {"trash_after_idle_days", 0},
                          {"keep_newest", 1},
                          {"archive_after_idle_days", 0},
                          {"erase_archived_after_idle_days", 0}},
                         {{"project", "/src/app"},
                          {"trash_after_idle_days", 0},
                          {"keep_newest", 0},
                          {"archive_after_idle_days", 7},
                          {"erase_archived_after_idle_days", 0}}}}};
  EXPECT_EQ(set.Json(), policy);
  EXPECT_EQ(Sdb({"--json", "retain", "--show"}).Json(), policy);
  EXPECT_TRUE(Contains(Sdb({"retain", "--show"}).out, "/src/app"));

  const std::string before = Listed();
  CliRun dry = Sdb({"--json", "retain"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.Json()["dry_run"], true);
  EXPECT_EQ(dry.Json()["trashed"].size(), 2u);
  EXPECT_EQ(dry.Json()["ledger_id"], 0);
  EXPECT_TRUE(Contains(Sdb({"retain"}).out, "would trash 2 sessions"));
  EXPECT_EQ(Listed(), before);

  CliRun applied = Sdb({"--json", "retain", "--apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(applied.Json()["dry_run"], false);
  EXPECT_EQ(applied.Json()["trashed"], dry.Json()["trashed"]);
  EXPECT_EQ(Sdb({"--json", "ls"}).Json()["sessions"].size(), 1u);
  EXPECT_EQ(Sdb({"--json", "trash"}).Json()["sessions"].size(), 2u);
  json entry = Sdb({"--json", "ledger", "--limit", "1"}).Json()["entries"][0];
  EXPECT_EQ(entry["action"], "retain");
  EXPECT_EQ(entry["actor"], "policy");
  EXPECT_EQ(entry["id"], applied.Json()["ledger_id"]);
  EXPECT_EQ(entry["counts"]["trashed"], 2);
}

TEST_F(ForgetCli, RetainRefusesBadRulesWithExit2AndKeepsThePolicy) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  ASSERT_EQ(Sdb({"retain", "--set", "--rule", "keep-newest=5"}).exit_code, 0);
  const std::string before = Sdb({"--json", "retain", "--show"}).out;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"retain", "--set", "--rule", "keep-newest=-1"},
           {"retain", "--set", "--rule", "keep-newest=0x10"},
           {"retain", "--set", "--rule", "forget-everything=1"},
           {"retain", "--set", "--rule", "keep-newest"},
           {"retain", "--set", "--rule", "keep-newest=1,keep-newest=2"},
           {"retain", "--set", "--rule", "project=/a,keep-newest=1", "--rule",
            "project=/a/,keep-newest=2"},
           {"retain", "--set", "--trash-grace-days", "-1"},
           {"retain", "--set"},
       }) {
    CliRun r = Sdb(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_FALSE(r.err.empty());
  }
  EXPECT_EQ(Sdb({"retain", "--apply", "--show"}).exit_code, 1);  // usage: they exclude each other
  EXPECT_EQ(Sdb({"--json", "retain", "--show"}).out, before);
}

}  // namespace
}  // namespace sessiondb::testing
