// `sessiondb redact` through the real binary: appends are redacted by
// default; with redaction off a secret is stored, `--scan` lists where it is
// (never the secret), `--apply` rewrites it and no file of the store holds it
// any more; `--allow` lets a kind through.
#include "cli_fixture.h"
#include "secret_corpus.h"

namespace sessiondb::testing {
namespace {

class RedactCli : public Cli {
 protected:
  // True if any file of the store's directory holds `needle`.
  bool InStoreFiles(const std::string& needle) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(store_)) {
      if (e.is_regular_file() && Contains(Slurp(e.path().string()), needle)) return true;
    }
    return false;
  }

  SecretCorpus corpus_;
};

TEST_F(RedactCli, AnAppendedSecretIsStoredAsItsMarker) {
  const std::string token = "ghp_" + corpus_.ChecksummedBody();
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "my token is " + token}).exit_code, 0);
  const std::string shown = Sdb({"show", sid}).out;
  EXPECT_TRUE(Contains(shown, "my token is [REDACTED:github-token:")) << shown;
  EXPECT_FALSE(Contains(shown, token));
  EXPECT_FALSE(InStoreFiles(token));
}

TEST_F(RedactCli, ScanListsWhereAndApplyRewritesAndErases) {
  const std::string token = "npm_" + corpus_.ChecksummedBody();
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  CliRun off = Sdb({"redact", "--off"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_TRUE(Contains(off.out, "redaction is off")) << off.out;
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "hello"}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", sid, "publish with " + token}).exit_code, 0);
  EXPECT_TRUE(Contains(Sdb({"show", sid}).out, token));

  CliRun scan = Sdb({"--json", "redact", "--scan"});
  ASSERT_EQ(scan.exit_code, 0) << scan.err;
  EXPECT_FALSE(Contains(scan.out, token));
  const json found = scan.Json();
  ASSERT_EQ(found.size(), 1u) << scan.out;
  EXPECT_EQ(found[0]["kind"], "npm-token");
  EXPECT_EQ(found[0]["session_id"], sid);
  EXPECT_EQ(found[0]["seq"], 2);
  CliRun text_scan = Sdb({"redact", "--scan"});
  EXPECT_TRUE(Contains(text_scan.out, "npm-token\t" + sid + "\t2\n")) << text_scan.out;

  CliRun apply = Sdb({"--json", "redact", "--apply"});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  EXPECT_EQ(apply.Json()["secrets_redacted"], 1);
  EXPECT_EQ(apply.Json()["events_rewritten"], 1);
  EXPECT_TRUE(Sdb({"--json", "redact", "--scan"}).Json().empty());
  EXPECT_TRUE(Contains(Sdb({"show", sid}).out, "publish with [REDACTED:npm-token:"));
  EXPECT_FALSE(InStoreFiles(token));
}

TEST_F(RedactCli, AllowLetsAKindThroughAndOnTurnsItBack) {
  const std::string token = "ghp_" + corpus_.ChecksummedBody();
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  CliRun allow = Sdb({"redact", "--allow", "github-token"});
  ASSERT_EQ(allow.exit_code, 0) << allow.err;
  EXPECT_TRUE(Contains(allow.out, "redaction is on; 1 allowed")) << allow.out;
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, token}).exit_code, 0);
  EXPECT_TRUE(Contains(Sdb({"show", sid}).out, token));
}

TEST_F(RedactCli, ScanAndApplyCannotBeAskedTogether) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  CliRun both = Sdb({"redact", "--scan", "--apply"});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_TRUE(Contains(both.err, "excludes")) << both.err;
}

}  // namespace
}  // namespace sessiondb::testing
