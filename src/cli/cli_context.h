// What every `sessiondb` verb shares: the global options, where the store
// lives, the store itself (opened on first use), and the exit code the
// process ends with. The CLI holds no storage logic: everything goes through
// sessiondb::Store.
//
// Example (inside a verb's callback):
//   Store* store = ctx.OpenStore(/*create_if_missing=*/false);
//   if (!store) return;  // the error is printed and the exit code set
//   auto s = store->GetSession(id);
//   if (!s) return ctx.Fail(s.error());
//
// Thread-safety: single-threaded, like the CLI.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/output.h"
#include "cli/pager.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"

namespace sessiondb::cli {

struct GlobalOptions {
  std::string store;            // --store
  std::string namespace_name;   // --namespace
  bool json = false;            // --json
  bool no_pager = false;        // --no-pager
  bool fast = false;            // --fast
  int64_t max_image_bytes = 0;  // --max-image-bytes; 0: the library's default
  int64_t max_file_bytes = 0;   // --max-file-bytes; 0: the library's default
  int max_images = -1;          // --max-images; -1: the library's default
  std::string key_file;         // --key-file; empty: $SESSIONDB_KEY_FILE
};

class CliContext {
 public:
  // When stdout is a terminal, escapes control characters in everything the
  // verbs print there, except --json documents (see TerminalGuard).
  CliContext();
  CliContext(const CliContext&) = delete;
  CliContext& operator=(const CliContext&) = delete;

  GlobalOptions options;

  // `text` as it will look on stdout: EscapeForTerminal(text) when stdout is
  // a terminal and --json is off, else unchanged. For text laid out in
  // columns, whose widths must be measured after escaping.
  std::string ForTerminal(std::string_view text) const;

  // The store directory: --store, else $SESSIONDB_STORE, else
  // $XDG_DATA_HOME/sessiondb, else $HOME/.local/share/sessiondb. Empty
  // variables count as unset.
  std::string StorePath() const;

  // Opens the store once; later calls return the same one. Verbs that only
  // read or change existing sessions pass create_if_missing = false, so a
  // mistyped --store is reported (with a hint to run `sessiondb init`)
  // instead of creating an empty store. On failure prints the error, sets the
  // exit code and returns nullptr.
  Store* OpenStore(bool create_if_missing);
  // Closes what OpenStore, OpenSearchIndex and OpenCodeMemory opened.
  void CloseStore();

  // The search index and the code memory of the (existing, embedded) store,
  // opened once like the store; nullptr after printing the error.
  SearchIndex* OpenSearchIndex();
  CodeMemory* OpenCodeMemory();
  // Brings the full-text index up to what the store holds (it follows the
  // log: writes only record their documents), with a progress bar on a
  // terminal; returns the documents it indexed. For the verbs that write
  // much at once (import, reindex), so what they wrote is searchable when
  // they return.
  Result<int64_t> CatchUpTextIndex();

  // The StoreOptions the global flags ask for. The namespace is --namespace,
  // else $SESSIONDB_NAMESPACE (PostgreSQL stores; empty: the URI's or "default").
  StoreOptions MakeStoreOptions(bool create_if_missing) const;

  // The full id of the session the user typed: an id, a unique prefix of one,
  // or `-` / `@` for the active session (see session_ref.h). Opens the store
  // (an existing one). On failure prints the error, sets the exit code and
  // returns nullopt. Every verb that takes a session id calls this.
  std::optional<std::string> SessionId(std::string_view typed);

  // From here on, stdout goes through the pager (pager.h) when it is a
  // terminal and --no-pager is not given; the pager is waited for when the
  // context ends. Verbs whose output can be long call it just before printing,
  // so errors and short answers never open one.
  void StartPager();

  // True when text may be coloured: stdout is a terminal, --json is off, and
  // NO_COLOR is unset or empty (https://no-color.org).
  bool UseColor() const;

  // How wide a line of a table may be: the terminal's width when stdout is
  // one (as it was when the context was made, before a pager took stdout),
  // else $COLUMNS when it is a positive number, else 80.
  size_t OutputColumns() const;

  // Writes `sgr`, an SGR sequence of ours such as "\033[1m", to stdout as it
  // is: everything else on a terminal passes through TerminalGuard's escaping.
  void WriteStyle(std::string_view sgr);

  // Prints the error (see PrintError) and sets the exit code it maps to. In
  // human mode, an error about a store limit also names the flag that raises it.
  void Fail(const Status& status);

  // Prints one JSON document on stdout.
  void PrintJson(const Json& value) const { cli::PrintJson(value); }

  // The arguments the verb was given (argv without the program), as the
  // command line (command_line.h) saw them: what a read asks the resident
  // server to run (served_reads.h).
  void SetCommandLine(std::vector<std::string> args) { command_line_ = std::move(args); }
  const std::vector<std::string>& command_line() const { return command_line_; }

  // The resident server answering a read: OpenStore returns `store`, which
  // the server keeps open, and nothing asks a server again.
  void BorrowStore(Store* store) { borrowed_store_ = store; }
  bool serving_a_read() const { return borrowed_store_ != nullptr; }

  int exit_code() const { return exit_code_; }
  // exit_code() once stdout is flushed; kExitStorageError, said on stderr,
  // when stdout could not be written.
  int ExitCodeAfterFlush() const;
  void set_exit_code(int code) { exit_code_ = code; }

 private:
  bool stdout_is_terminal_ = false;
  size_t terminal_columns_ = 0;   // of stdout's terminal; 0: not one, or it did not say
  bool writing_style_ = false;    // WriteStyle is writing: TerminalGuard lets it through
  std::unique_ptr<Pager> pager_;  // before the guard: it ends after the guard's last write
  std::unique_ptr<TerminalGuard> terminal_guard_;  // after `options`: it reads options.json
  std::unique_ptr<Store> store_;
  Store* borrowed_store_ = nullptr;  // BorrowStore: not ours to close
  std::vector<std::string> command_line_;
  std::unique_ptr<SearchIndex> search_index_;
  std::unique_ptr<CodeMemory> code_memory_;
  int exit_code_ = kExitOk;
};

}  // namespace sessiondb::cli
