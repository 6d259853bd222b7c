// What every `sessiondb` verb shares: the global options, the store (opened
// on first use), and how results and errors are printed and turned into exit
// codes. The CLI holds no storage logic: everything goes through Store.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/text_rules.h"
#include "sessiondb/store.h"

namespace sessiondb::cli {

// Exit codes; documented in docs/cli.md and `sessiondb --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,
  kExitInvalidArgument = 2,
  kExitNotFound = 3,
  kExitAlreadyExists = 4,
  kExitBusy = 5,
  kExitStorageError = 6,
  kExitFailedPrecondition = 7,
  kExitVerifyFailed = 8,
};

int ExitCodeFor(StatusCode code);

struct GlobalOptions {
  std::string store;            // --store
  bool json = false;            // --json
  bool fast = false;            // --fast
  int64_t max_image_bytes = 0;  // 0: library default
  int max_images = -1;          // -1: library default
};

class CliContext {
 public:
  GlobalOptions options;
  int exit_code = kExitOk;

  // The store directory: --store, else $SESSIONDB_STORE, else
  // $XDG_DATA_HOME/sessiondb, else ~/.local/share/sessiondb.
  std::string StorePath() const;
  // Opens the store once; later calls return the same one. On failure prints
  // the error, sets exit_code and returns nullptr.
  Store* OpenStore(bool create_if_missing = true);

  // Prints the error (JSON on stdout with --json, else "sessiondb: error: …"
  // on stderr) and records the exit code for it.
  void Fail(const Status& status);
  // Prints a JSON value to stdout, pretty, one document.
  void PrintJson(const nlohmann::json& value) const;

 private:
  std::unique_ptr<Store> store_;
};

// JSON forms of the library's values; field names follow the C++ fields.
nlohmann::json ToJson(const Session& session);
nlohmann::json ToJson(const Resource& resource);
nlohmann::json ToJson(const Part& part);
nlohmann::json ToJson(const Message& message);
nlohmann::json ToJson(const AppendResult& result);

// "2026-11-22 11:03" in local time.
std::string FormatTime(int64_t unix_ms);

}  // namespace sessiondb::cli
