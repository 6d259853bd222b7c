// The Model Context Protocol over stdio (`sessiondb mcp`): JSON-RPC 2.0, one
// message per line, so an agent can list, read and search its own history,
// recall its past code writes and look at the images its sessions hold.
// Protocol revision 2025-06-18; a client asking for 2025-03-26 or 2024-11-05
// gets that one (without structuredContent and outputSchema, which came with
// 2025-06-18). docs/mcp.md describes the tools and the exchanges.
//
// What it answers: initialize, ping, tools/list, tools/call, resources/list,
// resources/templates/list, resources/read. Notifications get no answer.
// Requests that come before initialize are answered as if it had happened
// (ping, tools/list... work when typed by hand); nothing depends on it.
// A line that is not JSON gets a -32700 error (id null) and the server reads
// on; only end of input stops it.
//
// The server only reads the history. The one thing it writes is search
// vectors: an EmbeddingWorker embeds new documents in the background (derived
// data, never a session, message or blob); a search itself never writes.
//
// Thread-safety: none; one McpServer serves one stream. The Store it is given
// must outlive it.
//
// Example:
//   ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(path));
//   McpServer server(*store, {.store_path = path});
//   RETURN_IF_ERROR(server.Serve(std::cin, std::cout));
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "api/json_forms.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

// The protocol revisions this server speaks, newest first.
inline constexpr std::string_view kMcpLatestVersion = "2025-06-18";
inline constexpr std::string_view kMcpVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};
// The revision that brought structuredContent and outputSchema: clients of
// an older one get neither (the text content says the same).
inline constexpr std::string_view kMcpStructuredResultsVersion = "2025-06-18";

struct McpOptions {
  // view_resource returns images up to this size; larger ones are described.
  int64_t max_image_bytes = int64_t{5} * 1024 * 1024;
  // view_resource returns text files up to this many bytes, then cuts them.
  int64_t max_text_bytes = int64_t{100} * 1024;
  // Embed new documents in the background (see above).
  bool background_embedding = true;
  // A vector or hybrid search waits (at most 2 s) for the background
  // embedding when at most this many documents are pending, so it finds what
  // was just written; 0: never waits.
  int64_t embed_limit = 5000;
  // Offer rewind_session, the one tool that writes (a rewind event). Off by
  // default: the server is then read-only (docs/mcp.md).
  bool allow_rewind = false;
  // Where log lines go (never stdout). Default: stderr, "sessiondb mcp: ...".
  std::function<void(std::string_view)> log;
};

class McpTools;

class McpServer {
 public:
  McpServer(Store& store, McpOptions options);
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // Reads one message per line from `in` and writes each answer as one line
  // on `out`, flushed, until `in` ends. Returns Ok at end of input, kIo once
  // `out` can no longer be written (the client went away).
  Status Serve(std::istream& in, std::ostream& out);

  // The answer to one line of input: a JSON-RPC response (or batch of them)
  // on one line without its newline, or nullopt when there is nothing to
  // answer (a notification, a blank line, a response from the client).
  std::optional<std::string> HandleLine(std::string_view line);

 private:
  // A JSON-RPC error: code and message.
  struct RpcError {
    int code;
    std::string message;
  };
  using RpcResult = tl::expected<Json, RpcError>;

  std::optional<Json> HandleMessage(const Json& message);
  RpcResult Dispatch(const std::string& method, const Json& params);
  RpcResult Initialize(const Json& params);
  RpcResult CallTool(const Json& params);
  RpcResult ListResources(const Json& params);
  RpcResult ReadResource(const Json& params);
  void Log(std::string_view line) const;
  // Whether the revision agreed on has structuredContent and outputSchema.
  bool StructuredResults() const;

  Store& store_;
  McpOptions options_;
  std::unique_ptr<McpTools> tools_;
  // What initialize agreed on; the latest until then.
  std::string protocol_version_{kMcpLatestVersion};
};

}  // namespace sessiondb::server
