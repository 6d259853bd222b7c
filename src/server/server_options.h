// What `sessiondb serve` is told: where to listen, who may call, how much it
// accepts. The defaults are the safe ones (loopback, no files on disk, CORS
// off); docs/http-api.md, "Safety", explains each.
// Thread-safety: a value; copied into the server at start.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sessiondb::server {

// A folder of an agent's own history the page may offer to import
// (HistoryImports): chosen by whoever starts the server, never by a request.
struct HistorySource {
  std::string agent;   // "Claude Code", "Codex": what the page calls it
  std::string folder;  // ~/.claude/projects, ~/.codex/sessions, resolved
  std::string format;  // its import format's name: "claude-code", "codex"
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 7411;  // 0: any free port (the chosen one is reported)
  // Required to bind anything but a loopback address; when set, every /v1
  // request must carry it ("Authorization: Bearer TOKEN").
  std::string token;
  // Folders whose files the API may read (import by path) or write (export
  // to a folder). Empty: no file path is accepted over HTTP.
  std::vector<std::string> allowed_dirs;
  // Origins sent Access-Control-Allow-Origin, and allowed to write. Empty:
  // CORS off, and only the server's own pages may write.
  std::vector<std::string> cors_origins;
  // Host names a request may carry besides loopback names, IP addresses and
  // `host` (e.g. the name a reverse proxy forwards); any other Host is
  // refused (421), which stops DNS rebinding.
  std::vector<std::string> allowed_hosts;
  int64_t max_body_bytes = int64_t{64} * 1024 * 1024;
  int threads = 64;                  // requests handled at once (each further one waits)
  int max_streams = 16;              // live event streams open at once
  int max_connections = 1024;        // connections open at once, each with its thread
  int max_connections_per_ip = 256;  // of them, from one client address
  // Seconds a client has to send a request's headers (from connecting, or
  // from the previous answer on a kept-alive connection).
  int header_timeout_seconds = 10;
  int idle_timeout_seconds = 60;  // a connection silent this long is closed
  // How often a live stream looks for events written by other processes,
  // and sends a keep-alive comment when idle.
  int poll_ms = 1000;
  int keepalive_ms = 15'000;
  // Embed new documents for vector search on a thread of the server's own
  // (EmbeddingWorker); a search never does it itself.
  bool background_embedding = true;
  // The agents' history folders the page offers to import (`serve` fills it
  // with those of its user that exist). Empty: the page offers none.
  std::vector<HistorySource> history_sources;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

}  // namespace sessiondb::server
