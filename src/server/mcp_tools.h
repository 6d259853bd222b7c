// The tools `sessiondb mcp` offers (list_sessions, read_session,
// search_history, search_code_memory, code_churn, view_resource, and with
// --allow-rewind rewind_session): their
// declarations (name, description, JSON Schema of the arguments and of the
// structured result), the check of a call's arguments against that
// declaration, and the calls themselves. An argument that names a session
// takes what the CLI takes (api/session_ref.h: a unique prefix, `-`).
// The JSON-RPC side is mcp_server.cc; this file knows nothing of it.
//
// Errors come back two ways, as MCP asks: arguments that do not fit the
// declared schema are a Status (kInvalidArgument; the server answers -32602),
// while what goes wrong in the call itself (no such session, a search on a
// PostgreSQL store) is a ToolResult with is_error set and a sentence the
// agent can act on.
//
// Thread-safety: none; used by one McpServer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_forms.h"
#include "server/mcp_server.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

// What a tool call returns: MCP content blocks ({type:"text",text} or
// {type:"image",data,mimeType}), the JSON forms of what it found (null when
// none), and whether the call failed.
struct ToolResult {
  Json content = Json::array();
  Json structured;
  bool is_error = false;

  static ToolResult Text(std::string text, Json structured = nullptr);
  static ToolResult Error(std::string text);
};

// One argument of a tool, as its inputSchema declares it.
struct ToolParam {
  enum class Type { kString, kInteger, kBoolean };
  std::string name;
  Type type = Type::kString;
  std::string description;
  bool required = false;
  std::vector<std::string> choices;  // kString: the accepted values, when only these
  int64_t minimum = 0;               // kInteger
  int64_t maximum = INT64_MAX;       // kInteger
  Json default_value;                // null: none
  // kString naming a session: McpTools::Call resolves it (a unique prefix,
  // `-` for the active session) to the full id before the tool sees it.
  bool names_session = false;
};

struct ToolSpec {
  std::string name;
  std::string title;
  std::string description;
  std::vector<ToolParam> params;
  // The JSON Schema (type object) of the tool's structuredContent: every
  // result that is not an error carries one that fits it.
  Json output_schema;
  // The tool changes the store (rewind_session): offered only when
  // McpOptions::allow_rewind says so, and annotated as not read-only.
  bool writes = false;
};

// A call's arguments once checked against the tool's params: every declared
// argument the call gave, with the declared type.
class ToolArgs {
 public:
  explicit ToolArgs(Json values) : values_(std::move(values)) {}
  bool Has(std::string_view name) const { return values_.contains(name); }
  // The argument, else `fallback` (else the declared default, filled in by Check).
  std::string String(std::string_view name, std::string fallback = "") const;
  int64_t Int(std::string_view name, int64_t fallback = 0) const;
  bool Bool(std::string_view name, bool fallback = false) const;
  // Replaces (or adds) the argument `name`.
  void Set(std::string_view name, Json value) { values_[std::string(name)] = std::move(value); }

 private:
  Json values_;
};

// A failed store call as a tool error an agent can act on (a missing session
// adds where session ids come from).
ToolResult StoreError(const Status& status);

// The declarations of every tool, in the order tools/list gives them (those
// that write only when `with_writes`).
const std::vector<ToolSpec>& ToolSpecs(bool with_writes = false);
// The tool named `name` among ToolSpecs(with_writes), or nullptr.
const ToolSpec* FindTool(std::string_view name, bool with_writes = false);
// The tools/list entry of a tool: name, title, description, inputSchema
// (type object, properties, required, additionalProperties false),
// outputSchema when `with_output_schema` (protocol 2025-06-18 on: older
// clients get no structuredContent either) and annotations (read-only unless
// it writes, closed world).
Json ToolListEntry(const ToolSpec& spec, bool with_output_schema = true);
// Checks `arguments` (an object, or null for none) against the tool's params:
// kInvalidArgument naming the argument for one that is missing, unknown, of
// the wrong type or out of range. Integers may come as numbers or as strings
// of digits, booleans as true/false or "true"/"false"; defaults are filled in.
Result<ToolArgs> CheckArguments(const ToolSpec& spec, const Json& arguments);

class McpTools {
 public:
  // Starts the background embedding unless options.background_embedding is off.
  McpTools(Store& store, const McpOptions& options);

  // Runs the tool `spec` with arguments CheckArguments accepted. Arguments
  // that name a session are resolved first (ResolveSessionRef): an unknown id
  // or an ambiguous prefix is an error result naming it (and the candidates).
  ToolResult Call(const ToolSpec& spec, ToolArgs args);

  // The resources side of the server, built on the same reads:
  // sessiondb://session/{id} (the session as read_session text, cut at
  // max_text_bytes) and sessiondb://session/{id}/resource/{resource_id} (the
  // attachment's bytes); {id} may be a unique prefix, as in the tools.
  // kNotFound for an unknown session or resource, kInvalidArgument for an
  // ambiguous prefix or a URI of another form. Returns MCP resource contents.
  Result<Json> ReadResource(std::string_view uri);

 private:
  ToolResult ListSessions(const ToolArgs& args);
  ToolResult ReadSession(const ToolArgs& args);
  ToolResult SearchHistory(const ToolArgs& args);
  ToolResult SearchCodeMemory(const ToolArgs& args);
  ToolResult CodeChurn(const ToolArgs& args);
  ToolResult ViewResource(const ToolArgs& args);
  ToolResult RewindSession(const ToolArgs& args);

  // The search index and the code memory of store_, opened on first use and
  // kept (the first vector search loads the vectors).
  Result<SearchIndex*> Index();
  Result<CodeMemory*> Memory();

  // The attachment `resource_id` of a message of the session (inherited ones
  // included), and that message's seq. kNotFound when none attaches it.
  struct FoundResource {
    Resource resource;
    int64_t message_seq = 0;
    Role role = Role::kUser;
    int64_t ts_ms = 0;
  };
  Result<FoundResource> FindResource(std::string_view session_id, std::string_view resource_id);

  void Log(std::string_view line) const;

  Store& store_;
  const McpOptions& options_;
  std::unique_ptr<SearchIndex> index_;
  std::unique_ptr<CodeMemory> memory_;
  // Embeds new documents in the background; null when off or unavailable.
  // Declared last: stopped first, before the store's other users go.
  std::unique_ptr<EmbeddingWorker> worker_;
};

}  // namespace sessiondb::server
