// The resident hook server: `sessiondb hook serve` keeps one store and its
// code memory open and answers `sessiondb hook claude-code` over a Unix
// socket, so a hook call no longer opens the store, reads its schema and
// rebuilds SQLite's WAL index (or, on PostgreSQL, starts a server backend)
// before every file write of the agent. The hook asks the server first and
// answers alone when none is running (docs/memory.md, "The resident hook
// server").
//
// The socket lives in a private folder, $XDG_RUNTIME_DIR/sessiondb-UID
// (else /tmp/sessiondb-UID), mode 0700 and owned by the user; a folder that
// is not is never used. Its name comes from the store's key (its location,
// namespace and key file), and the server says that key first on every
// connection, so a hook never talks to the server of another store. The
// server answers only processes of its own user (SO_PEERCRED).
//
// The same server answers the read verbs `ls` and `show` (served_reads.h).
//
// Protocol, version 1, one call per connection:
//   server: "sessiondb-hook-server 1 " KEY-LENGTH "\n" KEY
//   client: SEEN-MODE " " CHECKPOINTS(0|1) " " EVENT-LENGTH "\n" EVENT
//   server: STDOUT-LENGTH " " LOG-LENGTH "\n" STDOUT LOG
// or, for a read verb (served_reads.h):
//   client: "read " LENGTH "\n" ENVIRONMENT ARGUMENTS
//   server: EXIT-CODE "\n", with its stdout and stderr as two descriptors
// Lengths are decimal; an event is at most kMaxHookEventBytes, an answer's
// parts at most kMaxHookAnswerBytes. A hook that got no greeting has sent
// nothing, so it answers alone; one that sent its event and then lost the
// server does not (the server may have kept the write) and lets the call go
// on, as on any hook error.
//
// Thread-safety: single-threaded, like the CLI. The server answers one call
// at a time on one connection to the store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cli/cli_context.h"
#include "cli/unix_socket.h"
#include "sessiondb/memory.h"

namespace sessiondb::cli {

// The largest stdout or log of an answer a hook takes from a server.
inline constexpr size_t kMaxHookAnswerBytes = size_t{16} * 1024 * 1024;

// Where the server of one store listens.
struct HookServerPlace {
  std::string key;          // the store's location, namespace and key file
  std::string folder;       // the private folder of the user's servers
  std::string socket_path;  // folder/hook-HASH.sock
  std::string lock_path;    // folder/hook-HASH.lock: held by the live server, its pid
};

// The place of the server of the store `ctx` names. With `make_folder`, the
// folder is made (0700) when missing. kFailedPrecondition when the folder is
// not private (another owner, group or world access, a symlink) or the path
// would be too long for a socket.
Result<HookServerPlace> HookServerPlaceFor(const CliContext& ctx, bool make_folder);

// A connection to the server at `place` that greeted with this store's key,
// waiting a few seconds at most. kNotFound when none listens (`*why` empty);
// kBusy with `*why` when one did not greet in time or serves another store.
Result<Fd> ConnectToServer(const HookServerPlace& place, std::string* why);

// One hook call as the server answers it.
struct HookRequest {
  std::string seen_mode = "content";
  bool checkpoints = true;
  std::string event;
};

enum class HookServerReply {
  kNoServer,          // none answered before the event was sent: answer alone
  kAnswered,          // *answer is the server's
  kLostAfterSending,  // the event was sent, then the server failed: let the call go on
};

// Asks the server at `place` to answer `request`. Never blocks for more than
// a few seconds waiting for a greeting; once the event is sent, waits for the
// answer as long as the server takes (a server that dies closes the socket).
// `*why` says what went wrong for kNoServer (empty: no server listens) and
// kLostAfterSending.
HookServerReply AskHookServer(const HookServerPlace& place, const HookRequest& request,
                              HookAnswer* answer, std::string* why);

struct HookServeOptions {
  int64_t idle_exit_seconds = 600;   // ends after this long without a call; 0: never
  int64_t client_timeout_ms = 5000;  // a client's request must arrive within this
  bool quiet = false;                // no line per call on stderr (a server started by --resident)
};

// `sessiondb hook serve`: opens the store of `ctx` and its code memory and
// answers hook calls at HookServerPlaceFor(ctx) until idle for
// idle_exit_seconds, SIGTERM or SIGINT; then removes its socket. kBusy when
// another server of this store runs; kFailedPrecondition for a folder that is
// not private; the store's error when it cannot be opened. An embedded store
// whose database file is replaced or removed ends the server.
Status ServeHookCalls(CliContext& ctx, const HookServeOptions& options);

// Starts `sessiondb hook serve` for the store of `ctx` in the background
// (`hook claude-code --resident`), detached from the caller's session and
// its standard streams, so the agent waiting for the hook's output is not
// kept waiting by the server. Returns at once; the server that loses the
// race to a concurrent start exits by itself.
void StartHookServer(const CliContext& ctx);

}  // namespace sessiondb::cli
