// JSON-RPC 2.0 and the MCP lifecycle: lines in, lines out, requests routed
// to the tools (mcp_tools.h) and the resources.
#include "server/mcp_server.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <utility>

#include "core/json_access.h"
#include "core/json_parse.h"
#include "server/mcp_text.h"
#include "server/mcp_tools.h"

namespace sessiondb::server {
namespace {

// JSON-RPC 2.0 error codes, and MCP's for a resource that does not exist.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kResourceNotFound = -32002;

// A request line longer than this is refused, and never held: Serve keeps
// at most this much of a line while reading it and drops the rest up to the
// newline (no MCP request comes near it; the answers can be large, the
// questions are not).
constexpr size_t kMaxLineBytes = size_t{4} << 20;
// Sessions per resources/list page.
constexpr int kResourcePage = 50;

constexpr char kServerName[] = "sessiondb";
// The project's version (CMakeLists.txt).
constexpr char kServerVersion[] = SESSIONDB_VERSION;  // CMake: the project version

constexpr char kInstructions[] =
    "sessiondb holds past chat sessions and agent histories (messages, tool calls, images, code "
    "writes). Use search_history to find where something was discussed or done, read_session "
    "to read a session around a hit (by seq), list_sessions to browse, view_resource to see an "
    "image or file a message attached, and search_code_memory before rewriting a file to "
    "recall earlier versions and how often it was edited. Everything here is read-only.";

Json ErrorResponse(const Json& id, int code, std::string message) {
  return {
      {"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", std::move(message)}}}};
}

std::string Dump(const Json& message) {
  // Text from the store that is not UTF-8 becomes U+FFFD instead of failing
  // the answer; dump() escapes newlines, so the answer is one line.
  return message.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// MCP request ids are strings or numbers (JSON-RPC's null is not allowed).
bool ValidId(const Json& id) { return id.is_string() || id.is_number(); }

}  // namespace

McpServer::McpServer(Store& store, McpOptions options)
    : store_(store), options_(std::move(options)) {
  if (!options_.log) {
    options_.log = [](std::string_view line) { std::cerr << "sessiondb mcp: " << line << "\n"; };
  }
  tools_ = std::make_unique<McpTools>(store_, options_);
}

McpServer::~McpServer() = default;

void McpServer::Log(std::string_view line) const { options_.log(line); }

bool McpServer::StructuredResults() const {
  // ISO dates compare as strings.
  return protocol_version_ >= kMcpStructuredResultsVersion;
}

Status McpServer::Serve(std::istream& in, std::ostream& out) {
  std::streambuf* source = in.rdbuf();
  std::string line;
  while (true) {
    // One line, kept up to kMaxLineBytes + 1 bytes (enough for HandleLine to
    // see it is too long), however long it really is.
    line.clear();
    size_t length = 0;
    bool any = false;
    for (int c = source->sbumpc(); c != std::char_traits<char>::eof(); c = source->sbumpc()) {
      any = true;
      if (c == '\n') break;
      if (length++ <= kMaxLineBytes) line.push_back(static_cast<char>(c));
    }
    if (!any) break;
    std::optional<std::string> answer;
    if (length > kMaxLineBytes) {
      Log("refused a message of " + std::to_string(length) + " bytes");
      answer = Dump(ErrorResponse(nullptr, kInvalidRequest,
                                  "Invalid Request: a message of " + std::to_string(length) +
                                      " bytes; the limit is " + std::to_string(kMaxLineBytes)));
    } else {
      answer = HandleLine(line);
    }
    if (!answer) continue;
    out << *answer << '\n' << std::flush;
    if (!out) return Status::Io("cannot write to standard output: the client closed it");
  }
  return Status::Ok();
}

std::optional<std::string> McpServer::HandleLine(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return std::nullopt;
  if (line.size() > kMaxLineBytes) {
    Log("refused a message of " + std::to_string(line.size()) + " bytes");
    return Dump(ErrorResponse(nullptr, kInvalidRequest,
                              "Invalid Request: a message of " + std::to_string(line.size()) +
                                  " bytes; the limit is " + std::to_string(kMaxLineBytes)));
  }
  Result<Json> parsed = ParseJson(line);
  if (!parsed) {
    Log("a line that is not JSON: " + OneLine(line, 80));
    return Dump(ErrorResponse(nullptr, kParseError,
                              "Parse error: the line is not JSON: " + parsed.error().message()));
  }
  Json& message = *parsed;
  if (!message.is_array()) {
    std::optional<Json> answer = HandleMessage(message);
    return answer ? std::optional(Dump(*answer)) : std::nullopt;
  }
  // A batch (JSON-RPC 2.0; MCP 2025-03-26 allowed them): one answer holding
  // the answers to its requests, none when it held only notifications.
  if (message.empty()) {
    return Dump(ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: an empty batch"));
  }
  Json answers = Json::array();
  for (const Json& item : message) {
    if (std::optional<Json> answer = HandleMessage(item)) answers.push_back(std::move(*answer));
  }
  return answers.empty() ? std::nullopt : std::optional(Dump(answers));
}

std::optional<Json> McpServer::HandleMessage(const Json& message) {
  if (!message.is_object()) {
    return ErrorResponse(nullptr, kInvalidRequest, "Invalid Request: not a JSON object");
  }
  const bool has_id = message.contains("id");
  const Json id = has_id && ValidId(message["id"]) ? message["id"] : Json();
  auto method_it = message.find("method");
  if (method_it == message.end()) {
    // A response to a request of ours: we send none, so there is nothing to match.
    if (has_id && (message.contains("result") || message.contains("error"))) return std::nullopt;
    return ErrorResponse(id, kInvalidRequest, "Invalid Request: no method");
  }
  if (MemberOr(message, "jsonrpc", Json()) != "2.0") {
    return ErrorResponse(id, kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  }
  if (!method_it->is_string()) {
    return ErrorResponse(id, kInvalidRequest, "Invalid Request: method must be a string");
  }
  if (has_id && !ValidId(message["id"])) {
    return ErrorResponse(nullptr, kInvalidRequest,
                         "Invalid Request: id must be a string or a number");
  }
  const std::string& method = method_it->get_ref<const std::string&>();
  Json params = MemberOr(message, "params", Json::object());
  if (params.is_null()) params = Json::object();

  if (!has_id) {
    // Notifications: initialized, cancelled (every call here is answered
    // before the next is read, so there is nothing to cancel), and any other
    // is ignored, as JSON-RPC asks.
    if (method != "notifications/initialized" && method != "notifications/cancelled") {
      Log("ignored the notification " + method);
    }
    return std::nullopt;
  }
  if (!params.is_object()) {
    return ErrorResponse(id, kInvalidParams, "Invalid params: params must be an object");
  }
  RpcResult result = [&]() -> RpcResult {
    try {
      return Dispatch(method, params);
    } catch (const std::exception& e) {
      // The library returns errors as values; this is a bug or an allocation failure.
      Log(method + " failed: " + e.what());
      return tl::make_unexpected(
          RpcError{kInternalError, std::string("Internal error: ") + e.what()});
    }
  }();
  if (!result) return ErrorResponse(id, result.error().code, std::move(result.error().message));
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(*result)}};
}

McpServer::RpcResult McpServer::Dispatch(const std::string& method, const Json& params) {
  if (method == "initialize") return Initialize(params);
  if (method == "ping") return Json::object();
  if (method == "tools/list") {
    Json tools = Json::array();
    for (const ToolSpec& spec : ToolSpecs(options_.allow_rewind)) {
      tools.push_back(ToolListEntry(spec, StructuredResults()));
    }
    return Json{{"tools", std::move(tools)}};
  }
  if (method == "tools/call") return CallTool(params);
  if (method == "resources/list") return ListResources(params);
  if (method == "resources/templates/list") {
    return Json{
        {"resourceTemplates",
         {{{"uriTemplate", "sessiondb://session/{session_id}"},
           {"name", "session"},
           {"title", "A session's messages"},
           {"description", "The session's messages as text, as read_session gives them"},
           {"mimeType", "text/plain"}},
          {{"uriTemplate", "sessiondb://session/{session_id}/resource/{resource_id}"},
           {"name", "attachment"},
           {"title", "An attachment of a session"},
           {"description", "The bytes of an image or file a message of the session attached"}}}}};
  }
  if (method == "resources/read") return ReadResource(params);
  return tl::make_unexpected(RpcError{kMethodNotFound, "Method not found: " + method});
}

McpServer::RpcResult McpServer::Initialize(const Json& params) {
  auto asked = params.find("protocolVersion");
  if (asked == params.end() || !asked->is_string()) {
    return tl::make_unexpected(
        RpcError{kInvalidParams, "Invalid params: initialize needs protocolVersion (a string)"});
  }
  const std::string& version = asked->get_ref<const std::string&>();
  const bool supported = std::ranges::find(kMcpVersions, version) != std::end(kMcpVersions);
  protocol_version_ = supported ? version : std::string(kMcpLatestVersion);
  std::string client = "an MCP client";
  if (auto info = params.find("clientInfo"); info != params.end() && info->is_object()) {
    client = MemberOr(*info, "name", client) + " " + MemberOr(*info, "version", "");
  }
  Log(client + " asked for protocol " + version + "; speaking " + protocol_version_);
  return Json{
      {"protocolVersion", protocol_version_},
      {"capabilities", {{"tools", Json::object()}, {"resources", Json::object()}}},
      {"serverInfo",
       {{"name", kServerName}, {"title", "sessiondb history"}, {"version", kServerVersion}}},
      {"instructions", kInstructions}};
}

McpServer::RpcResult McpServer::CallTool(const Json& params) {
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return tl::make_unexpected(
        RpcError{kInvalidParams, "Invalid params: tools/call needs the tool's name"});
  }
  const ToolSpec* spec = FindTool(name->get<std::string>(), options_.allow_rewind);
  if (spec == nullptr) {
    std::string names;
    for (const ToolSpec& s : ToolSpecs(options_.allow_rewind)) {
      names += (names.empty() ? "" : ", ") + s.name;
    }
    return tl::make_unexpected(
        RpcError{kInvalidParams,
                 "Unknown tool: " + name->get<std::string>() + " (the tools are " + names + ")"});
  }
  auto args = CheckArguments(*spec, MemberOr(params, "arguments", Json()));
  if (!args) {
    return tl::make_unexpected(
        RpcError{kInvalidParams, "Invalid params: " + args.error().message()});
  }
  ToolResult r = tools_->Call(*spec, std::move(*args));
  Json result = {{"content", std::move(r.content)}};
  if (!r.structured.is_null() && StructuredResults()) {
    result["structuredContent"] = std::move(r.structured);
  }
  result["isError"] = r.is_error;
  return result;
}

McpServer::RpcResult McpServer::ListResources(const Json& params) {
  ListOptions options{.limit = kResourcePage, .archived = ArchiveFilter::kAll};
  if (auto cursor = params.find("cursor"); cursor != params.end() && cursor->is_string()) {
    options.cursor = cursor->get<std::string>();
  }
  auto page = store_.ListSessions(options);
  if (!page) {
    return tl::make_unexpected(RpcError{
        page.error().code() == StatusCode::kInvalidArgument ? kInvalidParams : kInternalError,
        page.error().message()});
  }
  Json resources = Json::array();
  for (const Session& s : page->sessions) {
    resources.push_back({{"uri", "sessiondb://session/" + s.id},
                         {"name", s.id},
                         {"title", s.title},
                         {"description", s.preview},
                         {"mimeType", "text/plain"}});
  }
  Json result = {{"resources", std::move(resources)}};
  if (!page->next_cursor.empty()) result["nextCursor"] = page->next_cursor;
  return result;
}

McpServer::RpcResult McpServer::ReadResource(const Json& params) {
  auto uri = params.find("uri");
  if (uri == params.end() || !uri->is_string()) {
    return tl::make_unexpected(
        RpcError{kInvalidParams, "Invalid params: resources/read needs the resource's uri"});
  }
  auto contents = tools_->ReadResource(uri->get<std::string>());
  if (!contents) {
    const StatusCode code = contents.error().code();
    return tl::make_unexpected(RpcError{code == StatusCode::kNotFound          ? kResourceNotFound
                                        : code == StatusCode::kInvalidArgument ? kInvalidParams
                                                                               : kInternalError,
                                        contents.error().message()});
  }
  return Json{{"contents", std::move(*contents)}};
}

}  // namespace sessiondb::server
