// Encryption at rest from the command line, against the real binary
// (docs/encryption.md): keys made, given by flag or environment, refused
// when wrong or missing before anything is written; a store encrypted,
// decrypted, rotated and re-keyed; and rotation and rekey killed at random
// points, after which the store opens with exactly one key and loses nothing.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <random>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

// Every byte of every file under `dir`, concatenated.
std::string AllBytes(const std::string& dir) {
  std::string all;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) all += Slurp(e.path().string());
  }
  return all;
}

class EncryptionCli : public Cli {
 protected:
  void SetUp() override {
    fs::create_directories(home_);
    ASSERT_EQ(Run({"key", "new", key_}, {.with_store = false}).exit_code, 0);
  }

  // Runs with the key given by flag.
  CliRun Keyed(std::vector<std::string> args, const std::string& key = "") {
    args.insert(args.begin(), {"--key-file", key.empty() ? key_ : key});
    return Sdb(args);
  }

  std::string Passphrase(const std::string& name, const std::string& text) {
    const std::string path = WriteFile(name, text);
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    return path;
  }

  // Starts `sessiondb ARGS` and kills it with SIGKILL after `delay_us`.
  void KillAfter(const std::vector<std::string>& args, int delay_us) {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      const int null_fd = open("/dev/null", O_WRONLY);
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
      setenv("HOME", home_.c_str(), 1);
      unsetenv("SESSIONDB_KEY_FILE");
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    usleep(static_cast<useconds_t>(delay_us));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }

  std::string key_ = dir_.Sub("key");
};

TEST_F(EncryptionCli, EachVerbsHelpNamesItsOptionsWithAnExample) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> verbs = {
      {{"key", "new"}, {"FILE"}},
      {{"key", "status"}, {"--json"}},
      {{"key", "rotate"}, {"--new-key-file"}},
      {{"key", "rekey"}, {"--new-key-file", "--remove-old"}},
      {{"encrypt"}, {"--remove-old", "key new"}},
      {{"decrypt"}, {"--remove-old"}},
      {{"copy"}, {"--from-key-file", "--to-key-file"}},
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
  EXPECT_TRUE(Contains(Run({"--help"}, {.with_store = false}).out, "--key-file"));
}

TEST_F(EncryptionCli, AStoreMadeWithAKeyOpensOnlyWithItByFlagOrEnvironment) {
  CliRun made = Keyed({"new", "--title", "sealedtitle"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string id = made.out.substr(0, made.out.size() - 1);
  ASSERT_EQ(Keyed({"append", id, "sealedword in a message"}).exit_code, 0);
  json status = Sdb({"--json", "key", "status"}).Json();
  EXPECT_EQ(status["encrypted"], true) << status;
  EXPECT_EQ(status["kdf"], "hkdf");
  EXPECT_EQ(AllBytes(store_).find("sealedword"), std::string::npos);
  EXPECT_EQ(AllBytes(store_).find("sealedtitle"), std::string::npos);

  CliRun env = Run({"--json", "show", id}, {.env = {{"SESSIONDB_KEY_FILE", key_}}});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_TRUE(Contains(env.out, "sealedword")) << env.out;

  const std::string before = AllBytes(store_);
  CliRun none = Sdb({"show", id});
  EXPECT_EQ(none.exit_code, 7) << none.err;
  EXPECT_TRUE(Contains(none.err, "is encrypted")) << none.err;
  EXPECT_TRUE(Contains(none.err, "--key-file")) << none.err;
  ASSERT_EQ(Run({"key", "new", dir_.Sub("other")}, {.with_store = false}).exit_code, 0);
  CliRun wrong = Keyed({"append", id, "never written"}, dir_.Sub("other"));
  EXPECT_EQ(wrong.exit_code, 7) << wrong.err;
  EXPECT_TRUE(Contains(wrong.err, "does not open")) << wrong.err;
  EXPECT_EQ(AllBytes(store_), before) << "a refused key writes nothing";
  // A key file others may read is refused with the fix.
  fs::permissions(key_, fs::perms::others_read, fs::perm_options::add);
  CliRun careless = Keyed({"show", id});
  EXPECT_NE(careless.exit_code, 0);
  EXPECT_TRUE(Contains(careless.err, "chmod 600")) << careless.err;
}

TEST_F(EncryptionCli, EncryptDecryptAndRekeyConvertAStoreAndKeepEverything) {
  const std::string id = NewSession({"--title", "plaintitle"});
  ASSERT_EQ(Sdb({"append", id, "plainword one"}).exit_code, 0);
  const std::string png = WritePng("p.png", "plainpngsalt");
  ASSERT_EQ(Sdb({"append", id, "with a picture", "--image", png}).exit_code, 0);
  EXPECT_NE(AllBytes(store_).find("plainword"), std::string::npos);

  CliRun enc = Sdb({"--json", "--key-file", key_, "encrypt", "--remove-old"});
  ASSERT_EQ(enc.exit_code, 0) << enc.err;
  EXPECT_EQ(enc.Json()["blobs"], 1) << enc.out;
  const std::string first_key_id = enc.Json()["key_id"];
  EXPECT_EQ(AllBytes(store_).find("plainword"), std::string::npos);
  EXPECT_EQ(AllBytes(store_).find("plaintitle"), std::string::npos);
  EXPECT_EQ(AllBytes(store_).find("plainpngsalt"), std::string::npos);
  CliRun shown = Keyed({"--json", "show", id});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.Json()["messages"].size(), 2u);
  CliRun search = Keyed({"--json", "search", "plainword", "--mode", "keyword"});
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_EQ(search.Json()["hits"].size(), 1u) << search.out;
  EXPECT_EQ(Keyed({"verify"}).exit_code, 0);
  // Already encrypted: refused.
  EXPECT_EQ(Sdb({"--key-file", key_, "encrypt"}).exit_code, 7);

  CliRun rekey = Keyed({"--json", "key", "rekey"});
  ASSERT_EQ(rekey.exit_code, 0) << rekey.err;
  EXPECT_NE(rekey.Json()["key_id"], first_key_id);
  const std::string old_copy = rekey.Json()["old_copy"];
  EXPECT_TRUE(fs::exists(old_copy)) << "kept unless --remove-old";
  EXPECT_EQ(Keyed({"--json", "show", id}).Json()["messages"].size(), 2u);

  CliRun dec = Keyed({"--json", "decrypt", "--remove-old"});
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  EXPECT_FALSE(Sdb({"--json", "key", "status"}).Json()["encrypted"].get<bool>());
  CliRun plain = Sdb({"--json", "show", id});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(Contains(plain.out, "plainword one"));
  EXPECT_EQ(Sdb({"verify"}).exit_code, 0);
}

TEST_F(EncryptionCli, ARotationKilledAnywhereLeavesExactlyOneKeyThatOpens) {
  const std::string id = NewSession({"--title", "t"});
  ASSERT_EQ(Sdb({"--key-file", key_, "encrypt", "--remove-old"}).exit_code, 0);
  ASSERT_EQ(Keyed({"append", id, "survivesrotation"}).exit_code, 0);
  // A passphrase's stretch (scrypt) gives the kill a window of ~0.1 s.
  std::vector<std::string> keys = {key_, Passphrase("pass", "the second passphrase here")};
  std::mt19937 rng(7);
  int current = 0;
  int moved = 0;
  for (int round = 0; round < 12; ++round) {
    const int next = 1 - current;
    KillAfter({"--key-file", keys[current], "key", "rotate", "--new-key-file", keys[next]},
              static_cast<int>(rng() % 250'000));
    const bool old_opens = Keyed({"show", id}, keys[current]).exit_code == 0;
    const bool new_opens = Keyed({"show", id}, keys[next]).exit_code == 0;
    ASSERT_NE(old_opens, new_opens) << "round " << round << ": exactly one key opens";
    if (new_opens) {
      current = next;
      ++moved;
    }
    CliRun shown = Keyed({"--json", "show", id}, keys[current]);
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_TRUE(Contains(shown.out, "survivesrotation"));
  }
  // Leftover temp files of killed rotations are not envelopes that open.
  std::cout << "rotations that finished before the kill: " << moved << " of 12\n";
}

TEST_F(EncryptionCli, ARekeyKilledAnywhereLosesNothingAndFinishesWhenRunAgain) {
  const std::string id = NewSession({"--title", "t"});
  for (int i = 0; i < 6; ++i) {
    const std::string png = WritePng("p" + std::to_string(i) + ".png", "s" + std::to_string(i));
    ASSERT_EQ(Sdb({"append", id, "message " + std::to_string(i), "--image", png}).exit_code, 0);
  }
  ASSERT_EQ(Sdb({"--key-file", key_, "encrypt", "--remove-old"}).exit_code, 0);
  std::mt19937 rng(11);
  for (int round = 0; round < 8; ++round) {
    KillAfter({"--key-file", key_, "key", "rekey", "--remove-old"},
              static_cast<int>(rng() % 120'000));
    // Killed between the two renames the store may be missing: the next run finishes.
    if (!fs::exists(store_)) {
      ASSERT_EQ(Keyed({"key", "rekey", "--remove-old"}).exit_code, 0);
    }
    CliRun shown = Keyed({"--json", "show", id});
    ASSERT_EQ(shown.exit_code, 0) << "round " << round << ": " << shown.err;
    EXPECT_EQ(shown.Json()["messages"].size(), 6u);
    ASSERT_EQ(Keyed({"verify"}).exit_code, 0) << "round " << round;
  }
  CliRun finished = Keyed({"--json", "key", "rekey", "--remove-old"});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_FALSE(fs::exists(store_ + ".converting"));
  EXPECT_EQ(Keyed({"--json", "show", id}).Json()["messages"].size(), 6u);
}

// On PostgreSQL the three verbs convert the namespace in place, each
// reporting the rows it re-sealed; a rotation is refused while one is
// under way (here: one whose first transaction was all that ran).
TEST_F(EncryptionCli, APostgresNamespaceIsEncryptedRekeyedAndDecryptedInPlace) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  const std::string uri = pg.uri() + (Contains(pg.uri(), "?") ? "&" : "?") + "namespace=team-a";
  auto at = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--store", uri});
    return Run(args, {.with_store = false});
  };
  ASSERT_EQ(at({"init"}).exit_code, 0);
  CliRun made = at({"new", "--title", "sealed title"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string id = made.out.substr(0, made.out.find('\n'));
  ASSERT_EQ(at({"append", id, "a word to find: quillwort"}).exit_code, 0);

  CliRun encrypted = at({"--json", "--key-file", key_, "encrypt"});
  ASSERT_EQ(encrypted.exit_code, 0) << encrypted.err;
  EXPECT_GT(encrypted.Json()["rows"].get<int64_t>(), 1);
  const std::string first_key = encrypted.Json()["key_id"];
  EXPECT_FALSE(first_key.empty());
  EXPECT_EQ(at({"show", id}).exit_code, 7) << "opened without its key";
  EXPECT_EQ(PgQuery(pg.uri(), "SELECT count(*) FROM events WHERE text LIKE '%quillwort%'"), "0");

  CliRun rekeyed = at({"--json", "--key-file", key_, "key", "rekey"});
  ASSERT_EQ(rekeyed.exit_code, 0) << rekeyed.err;
  EXPECT_NE(rekeyed.Json()["key_id"], first_key);
  CliRun found = at({"--json", "--key-file", key_, "search", "quillwort"});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_TRUE(Contains(found.out, id)) << found.out;

  // A conversion under way (its row as the first transaction writes it):
  // opening and rotating are refused with what to run.
  PgQuery(pg.uri(),
          "INSERT INTO index_meta (namespace, key, value) VALUES ('team-a', "
          "'encryption:convert', 'decrypt')");
  CliRun refused = at({"--key-file", key_, "show", id});
  EXPECT_EQ(refused.exit_code, 7);
  EXPECT_TRUE(Contains(refused.err, "sessiondb decrypt")) << refused.err;
  const std::string other_key = dir_.Sub("other.key");
  ASSERT_EQ(Run({"key", "new", other_key}, {.with_store = false}).exit_code, 0);
  CliRun rotate = at({"--key-file", key_, "key", "rotate", "--new-key-file", other_key});
  EXPECT_EQ(rotate.exit_code, 7) << rotate.err;
  PgQuery(pg.uri(), "DELETE FROM index_meta WHERE key = 'encryption:convert'");

  CliRun decrypted = at({"--json", "--key-file", key_, "decrypt"});
  ASSERT_EQ(decrypted.exit_code, 0) << decrypted.err;
  EXPECT_EQ(decrypted.Json()["key_id"], "");
  CliRun shown = at({"--json", "show", id});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.Json()["session"]["title"], "sealed title") << shown.out;
}

}  // namespace
}  // namespace sessiondb::testing
