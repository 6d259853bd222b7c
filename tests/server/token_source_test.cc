// Where `sessiondb serve` takes its token from: never the command line, which
// every local user reads in /proc/PID/cmdline, but $SESSIONDB_TOKEN or a file
// only its owner can read (--token-file). Against the real binary.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kToken = "s3cret-token-8f2a";

std::string CommandLineOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::string WriteTokenFile(const std::string& path, mode_t mode, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  chmod(path.c_str(), mode);
  return path;
}

TEST(TokenSource, AnInlineTokenIsRefusedWithExit2BeforeAnythingStarts) {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--token", kToken}, {std::string("--token=") + kToken}}) {
    ServerProcess server(dir.Sub("store"), args);
    EXPECT_FALSE(server.listening());
    EXPECT_EQ(server.exit_code(), 2) << server.log();
    const std::string log = server.log();
    EXPECT_NE(log.find("$SESSIONDB_TOKEN"), std::string::npos) << log;
    EXPECT_NE(log.find("--token-file"), std::string::npos) << log;
    EXPECT_NE(log.find("chmod 600"), std::string::npos) << log;
    // Refused before the store is opened: nothing was created.
    EXPECT_FALSE(std::filesystem::exists(dir.Sub("store")));
  }
}

TEST(TokenSource, ATokenFileOthersCanReadIsRefusedWithTheChmodThatFixesIt) {
  TempDir dir;
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    const std::string file = WriteTokenFile(dir.Sub("token"), mode, std::string(kToken) + "\n");
    ServerProcess server(dir.Sub("store"), {"--token-file", file});
    EXPECT_FALSE(server.listening());
    EXPECT_EQ(server.exit_code(), 2) << server.log();
    EXPECT_NE(server.log().find("chmod 600"), std::string::npos) << server.log();
    EXPECT_EQ(server.log().find(kToken), std::string::npos) << "the token was printed";
  }
  std::filesystem::create_directory(dir.Sub("folder"));
  chmod(dir.Sub("folder").c_str(), 0700);
  ServerProcess folder(dir.Sub("store"), {"--token-file", dir.Sub("folder")});
  EXPECT_EQ(folder.exit_code(), 2) << folder.log();
  EXPECT_NE(folder.log().find("not a regular file"), std::string::npos) << folder.log();

  ServerProcess missing(dir.Sub("store"), {"--token-file", dir.Sub("nope")});
  EXPECT_EQ(missing.exit_code(), 3) << missing.log();
  EXPECT_NE(missing.log().find("no such file"), std::string::npos) << missing.log();

  ServerProcess empty(dir.Sub("store"), {"--token-file", WriteTokenFile(dir.Sub("e"), 0600, "\n")});
  EXPECT_EQ(empty.exit_code(), 2) << empty.log();
}

TEST(TokenSource, AnOwnerOnlyTokenFileGuardsTheApiAndStaysOutOfTheCommandLine) {
  TempDir dir;
  const std::string file = WriteTokenFile(dir.Sub("token"), 0600, std::string(kToken) + "\r\n");
  ServerProcess server(dir.Sub("store"), {"--token-file", file, "--host", "0.0.0.0"});
  ASSERT_TRUE(server.listening()) << server.log();
  EXPECT_EQ(CommandLineOf(server.pid()).find(kToken), std::string::npos);
  EXPECT_EQ(server.Client()->Get("/v1/sessions")->status, 401);
  EXPECT_EQ(server.Client("wrong")->Get("/v1/sessions")->status, 401);
  EXPECT_EQ(server.Client(kToken)->Get("/v1/sessions")->status, 200);
}

TEST(TokenSource, TheEnvironmentStillGivesTheTokenAndTheFileWinsOverIt) {
  TempDir dir;
  const std::string env = std::string("SESSIONDB_TOKEN=") + kToken;
  ServerProcess from_env(dir.Sub("a"), {}, {env});
  ASSERT_TRUE(from_env.listening()) << from_env.log();
  EXPECT_EQ(from_env.Client()->Get("/v1/sessions")->status, 401);
  EXPECT_EQ(from_env.Client(kToken)->Get("/v1/sessions")->status, 200);

  const std::string file = WriteTokenFile(dir.Sub("token"), 0400, "from-the-file");
  ServerProcess both(dir.Sub("b"), {"--token-file", file}, {env});
  ASSERT_TRUE(both.listening()) << both.log();
  EXPECT_EQ(both.Client(kToken)->Get("/v1/sessions")->status, 401);
  EXPECT_EQ(both.Client("from-the-file")->Get("/v1/sessions")->status, 200);
}

}  // namespace
}  // namespace sessiondb::testing
