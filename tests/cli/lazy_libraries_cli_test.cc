// libpq, libcurl and libmicrohttpd are loaded when a command first needs them,
// not when `sessiondb` starts (src/core/shared_library.h): the Claude Code
// hook, which the agent waits for on every file write, loads none of them and
// none of the thirty libraries they bring. These run the real binary and ask
// the real loader (glibc's LD_TRACE_LOADED_OBJECTS and LD_DEBUG=files) what
// it loads, and what a user sees when one of the libraries is missing.
#include <string>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class LazyLibrariesCli : public Cli {};

// The libraries the hook must not load: the three opened on first use and the
// heaviest of what they bring (TLS, Kerberos, LDAP).
const char* const kLazy[] = {"libpq.so",  "libcurl.so", "libmicrohttpd.so", "libgnutls.so",
                             "libssl.so", "libkrb5.so", "libldap",          "libgssapi"};

// A URI libpq refuses at once (no server, no retries): it is loaded to say so.
const char* kNoServer =
    "postgresql://nobody@/postgres?host=/nonexistent-sessiondb-socket-dir&sslmode=bogus";

TEST_F(LazyLibrariesCli, TheProgramNeedsNoneOfThemAtStart) {
  // What the loader maps before main(), the whole closure (what ldd prints);
  // the program itself does not run.
  CliRun traced =
      Run({"version"}, {.with_store = false, .env = {{"LD_TRACE_LOADED_OBJECTS", "1"}}});
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  ASSERT_TRUE(Contains(traced.out, "libsqlite3.so")) << "not the loader's list:\n" << traced.out;
  for (const char* library : kLazy) {
    EXPECT_FALSE(Contains(traced.out, library)) << library << " is loaded at start:\n"
                                                << traced.out;
  }
}

TEST_F(LazyLibrariesCli, TheHookRunLoadsNoneOfThem) {
  const std::string event =
      json{{"hook_event_name", "PostToolUse"},
           {"tool_name", "Write"},
           {"session_id", "s1"},
           {"cwd", "/work"},
           {"tool_input", {{"file_path", "/work/a.py"}, {"content", "def f():\n    return 1\n"}}}}
          .dump();
  // LD_DEBUG=files logs every object the process loads, dlopen included, to stderr.
  CliRun hook = Run({"hook", "claude-code"}, {.input = event, .env = {{"LD_DEBUG", "files"}}});
  ASSERT_EQ(hook.exit_code, 0) << hook.err;
  ASSERT_TRUE(Contains(hook.err, "recorded 1 write(s)")) << hook.err;
  ASSERT_TRUE(Contains(hook.err, "file=libsqlite3.so")) << "no loader log:\n" << hook.err;
  for (const char* library : kLazy) {
    EXPECT_FALSE(Contains(hook.err, std::string("file=") + library)) << library << " loaded";
  }
}

TEST_F(LazyLibrariesCli, APostgresStoreLoadsLibpqWhenItIsOpened) {
  CliRun ls =
      Run({"--store", kNoServer, "ls"}, {.with_store = false, .env = {{"LD_DEBUG", "files"}}});
  EXPECT_NE(ls.exit_code, 0);
  EXPECT_TRUE(Contains(ls.err, "cannot connect to PostgreSQL: invalid sslmode")) << ls.err;
  EXPECT_TRUE(Contains(ls.err, "file=libpq.so.5 [0];  dynamically loaded by")) << ls.err;
}

TEST_F(LazyLibrariesCli, AMissingLibpqSaysWhatToInstall) {
  CliRun ls = Run(
      {"--store", kNoServer, "ls"},
      {.with_store = false, .env = {{"SESSIONDB_LIBPQ", "/nonexistent-sessiondb-lib/libpq.so.5"}}});
  EXPECT_EQ(ls.exit_code, 7) << ls.err;  // failed_precondition
  EXPECT_TRUE(Contains(ls.err, "PostgreSQL support needs libpq5 (libpq.so.5): apt install libpq5"))
      << ls.err;
  EXPECT_TRUE(Contains(ls.err, "/nonexistent-sessiondb-lib/libpq.so.5")) << ls.err;
  EXPECT_TRUE(Contains(ls.err, "$SESSIONDB_LIBPQ")) << ls.err;
}

TEST_F(LazyLibrariesCli, AMissingLibcurlSaysWhatToInstallWhenAnEndpointIsSet) {
  ASSERT_EQ(Run({"init"}, {}).exit_code, 0);
  CliRun reindex =
      Run({"reindex"}, {.env = {{"SESSIONDB_EMBED_URL", "http://127.0.0.1:9/v1"},
                                {"SESSIONDB_EMBED_MODEL", "m"},
                                {"SESSIONDB_LIBCURL", "/nonexistent-sessiondb-lib/x.so"}}});
  EXPECT_EQ(reindex.exit_code, 7) << reindex.err;
  EXPECT_TRUE(Contains(reindex.err, "needs libcurl4 (libcurl.so.4): apt install libcurl4"))
      << reindex.err;
}

TEST_F(LazyLibrariesCli, AMissingLibmicrohttpdSaysWhatToInstall) {
  ASSERT_EQ(Run({"init"}, {}).exit_code, 0);
  CliRun serve = Run({"serve", "--port", "0"},
                     {.env = {{"SESSIONDB_LIBMICROHTTPD", "/nonexistent-sessiondb-lib/x.so"}}});
  EXPECT_EQ(serve.exit_code, 7) << serve.err;
  EXPECT_TRUE(Contains(serve.err,
                       "needs libmicrohttpd12 (libmicrohttpd.so.12): apt install libmicrohttpd12"))
      << serve.err;
}

}  // namespace
}  // namespace sessiondb::testing
