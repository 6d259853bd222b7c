// The declarations of the MCP tools and the check of a call's arguments
// against them: one table gives the inputSchema tools/list shows, the rules
// CheckArguments applies and the outputSchema of each tool's
// structuredContent, so none of them can drift apart. The output schemas
// describe the JSON forms of api/json_forms.h (docs/openapi.json gives the
// same shapes to the HTTP API); tests/node/mcp.test.mjs checks every tool's
// answers against them with the MCP SDK's own validator.
#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <string>
#include <vector>

#include "server/mcp_tools.h"

namespace sessiondb::server {
namespace {

using Type = ToolParam::Type;

// How every argument naming a session ends its description.
constexpr char kSessionIdForms[] =
    " The whole id or a unique prefix of it (at least 4 characters), as the CLI takes it; - is "
    "the active session.";

ToolParam SessionIdParam(std::string description) {
  return {.name = "session_id",
          .description = std::move(description) + kSessionIdForms,
          .required = true,
          .names_session = true};
}

// ---- The JSON Schemas of the results -----------------------------------------
// JSON Schema draft-07 (what the SDKs validate with), no "format" keywords.

Json StringSchema() { return {{"type", "string"}}; }
Json IntegerSchema() { return {{"type", "integer"}}; }
Json NumberSchema() { return {{"type", "number"}}; }
Json BooleanSchema() { return {{"type", "boolean"}}; }
Json Nullable(const char* type) { return {{"type", {type, "null"}}}; }
Json ArrayOf(Json items) { return {{"type", "array"}, {"items", std::move(items)}}; }
Json OneOfNames(std::initializer_list<const char*> names) {
  Json values = Json::array();
  for (const char* name : names) values.push_back(name);
  return {{"type", "string"}, {"enum", std::move(values)}};
}

// An object with these properties; `required`: the names that are always
// there (by default all: the JSON forms write every field).
Json ObjectSchema(Json properties, Json required = nullptr) {
  if (required.is_null()) {
    required = Json::array();
    for (const auto& [name, schema] : properties.items()) required.push_back(name);
  }
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}};
}

Json RoleSchema() { return OneOfNames({"system", "user", "assistant", "tool"}); }

Json SessionSchema() {
  return ObjectSchema({{"id", StringSchema()},
                       {"title", StringSchema()},
                       {"preview", StringSchema()},
                       {"created_ms", IntegerSchema()},
                       {"updated_ms", IntegerSchema()},
                       {"message_count", IntegerSchema()},
                       {"last_seq", IntegerSchema()},
                       {"archived", BooleanSchema()},
                       {"metadata", {{"type", "object"}}},
                       // null when the session is no fork.
                       {"parent_id", Nullable("string")},
                       {"fork_seq", IntegerSchema()}});
}

// A resource descriptor: fields that would be empty or 0 are left out.
Json ResourceSchema() {
  return ObjectSchema({{"resource_id", StringSchema()},
                       {"content_sha256", StringSchema()},
                       {"mime", StringSchema()},
                       {"size", IntegerSchema()},
                       {"width", IntegerSchema()},
                       {"height", IntegerSchema()},
                       {"origin", OneOfNames({"inline", "file", "link"})},
                       {"name", StringSchema()},
                       {"uri", StringSchema()},
                       {"not_stored", StringSchema()},
                       {"missing", BooleanSchema()}},
                      Json::array({"origin", "missing"}));
}

// A part: `type` says which fields it has.
Json PartSchema() {
  Json resource = {{"anyOf", {ResourceSchema(), {{"type", "null"}}}}};
  return {{"oneOf",
           {ObjectSchema({{"type", OneOfNames({"text", "reasoning"})}, {"text", StringSchema()}}),
            ObjectSchema({{"type", OneOfNames({"image", "file", "resource_link"})},
                          {"resource", std::move(resource)}}),
            // arguments: the call's JSON, whatever it was.
            ObjectSchema({{"type", OneOfNames({"tool_call"})},
                          {"tool_call_id", StringSchema()},
                          {"tool_name", StringSchema()},
                          {"arguments", Json::object()}}),
            ObjectSchema({{"type", OneOfNames({"tool_result"})},
                          {"tool_call_id", StringSchema()},
                          {"text", StringSchema()},
                          {"is_error", BooleanSchema()}})}}};
}

Json MessageSchema() {
  Json usage = ObjectSchema({{"input_tokens", IntegerSchema()},
                             {"output_tokens", IntegerSchema()},
                             {"cached_tokens", IntegerSchema()},
                             {"reasoning_tokens", IntegerSchema()},
                             {"cache_write_tokens", IntegerSchema()}});
  return ObjectSchema({{"id", StringSchema()},
                       {"session_id", StringSchema()},
                       {"seq", IntegerSchema()},
                       {"ts_ms", IntegerSchema()},
                       {"role", RoleSchema()},
                       {"parts", ArrayOf(PartSchema())},
                       {"files", ArrayOf(StringSchema())},
                       {"files_modified", ArrayOf(StringSchema())},
                       {"edit_results", {{"type", "array"}}},
                       {"model", StringSchema()},
                       {"provider", StringSchema()},
                       // null when the provider reported none.
                       {"usage", {{"anyOf", {std::move(usage), {{"type", "null"}}}}}},
                       {"metadata", {{"type", "object"}}},
                       {"pruned", BooleanSchema()}});
}

Json SearchHitSchema() {
  Json role = RoleSchema();
  role["type"] = {"string", "null"};  // null for hits that are not messages
  role["enum"].push_back(nullptr);
  Json pair = ArrayOf(IntegerSchema());
  pair["minItems"] = 2;
  pair["maxItems"] = 2;
  Json schema =
      ObjectSchema({{"kind", OneOfNames({"message", "compaction", "resource_view", "code_write"})},
                    {"session_id", StringSchema()},
                    {"session_title", StringSchema()},
                    {"seq", IntegerSchema()},
                    {"event_id", StringSchema()},
                    {"role", std::move(role)},
                    {"time_ms", IntegerSchema()},
                    {"snippet", StringSchema()},
                    {"highlights", ArrayOf(std::move(pair))},
                    {"score", NumberSchema()},
                    {"keyword_rank", IntegerSchema()},
                    {"keyword_score", NumberSchema()},
                    {"vector_rank", IntegerSchema()},
                    {"vector_score", NumberSchema()}});
  // Code writes only.
  schema["properties"]["file_path"] = StringSchema();
  schema["properties"]["code_id"] = IntegerSchema();
  return schema;
}

Json ChurnEntrySchema() {
  return ObjectSchema({{"file_path", StringSchema()},
                       {"function", StringSchema()},
                       {"edits_24h", IntegerSchema()},
                       {"edits_30d", IntegerSchema()},
                       {"tier", OneOfNames({"gold", "silver", "bronze", "red"})}});
}

Json ListSessionsOutput() {
  return ObjectSchema({{"sessions", ArrayOf(SessionSchema())},
                       // null on the last page.
                       {"next_cursor", Nullable("string")}});
}

Json ReadSessionOutput() {
  return ObjectSchema({{"session", SessionSchema()},
                       {"messages", ArrayOf(MessageSchema())},
                       // null when the page reached the end.
                       {"next_from_seq", Nullable("integer")}});
}

Json SearchHistoryOutput() {
  return ObjectSchema({{"query", StringSchema()},
                       {"mode", OneOfNames({"keyword", "vector", "hybrid"})},
                       {"match_expression", StringSchema()},
                       {"corrected_query", StringSchema()},
                       {"corrected_words", ArrayOf(ObjectSchema({{"typed", StringSchema()},
                                                                 {"used", StringSchema()}}))},
                       {"did_you_mean", StringSchema()},
                       {"keyword_matches", IntegerSchema()},
                       {"bounded", BooleanSchema()},
                       {"pending_embeddings", IntegerSchema()},
                       {"pending_documents", IntegerSchema()},
                       {"note", StringSchema()},
                       {"hits", ArrayOf(SearchHitSchema())}});
}

Json SearchCodeMemoryOutput() {
  Json recalled = ObjectSchema({{"file_path", StringSchema()},
                                {"preview", StringSchema()},
                                {"session_id", StringSchema()},
                                {"project", StringSchema()},
                                {"time_ms", IntegerSchema()},
                                {"code_id", IntegerSchema()},
                                {"score", NumberSchema()}});
  Json warning = ObjectSchema(
      {{"file_path", StringSchema()}, {"function", StringSchema()}, {"message", StringSchema()}});
  return ObjectSchema({{"path", StringSchema()},
                       {"recalled", ArrayOf(std::move(recalled))},
                       {"churn", ChurnEntrySchema()},
                       {"warnings", ArrayOf(std::move(warning))}});
}

Json CodeChurnOutput() { return ObjectSchema({{"entries", ArrayOf(ChurnEntrySchema())}}); }

Json ViewResourceOutput() {
  return ObjectSchema({{"resource", ResourceSchema()}, {"message_seq", IntegerSchema()}});
}

Json RewindSessionOutput() {
  Json event = ObjectSchema({{"id", StringSchema()},
                             {"session_id", StringSchema()},
                             {"seq", IntegerSchema()},
                             {"ts_ms", IntegerSchema()},
                             {"type", OneOfNames({"rewind"})},
                             {"rewind", ObjectSchema({{"to_seq", IntegerSchema()}})}});
  return ObjectSchema({{"event", std::move(event)}, {"session", SessionSchema()}});
}

std::vector<ToolSpec> MakeSpecs() {
  std::vector<ToolSpec> specs;
  specs.push_back(
      {.name = "list_sessions",
       .title = "List sessions",
       .description =
           "List the stored chat sessions and agent histories, most recently updated first: id, "
           "title, preview (the first user message), created and updated times, message count, "
           "archived, and for a fork the session and seq it was forked from. Pass the returned "
           "cursor to get the next page. Use the ids with read_session, or find sessions by "
           "content with search_history.",
       .params =
           {
               {.name = "limit",
                .type = Type::kInteger,
                .description = "Sessions per page (1-200).",
                .minimum = 1,
                .maximum = 200,
                .default_value = 20},
               {.name = "cursor",
                .description = "The next_cursor of the previous page; omit for the first page."},
               {.name = "archived",
                .description = "Which sessions: active (not archived), archived, or all.",
                .choices = {"active", "archived", "all"},
                .default_value = "active"},
               {.name = "project",
                .description = "Only sessions whose metadata \"project\" equals this exactly "
                               "(e.g. /home/me/src/app)."},
           },
       .output_schema = ListSessionsOutput()});
  specs.push_back(
      {.name = "read_session",
       .title = "Read a session",
       .description =
           "Read a session's messages in order: seq, role, time, model, the text, tool calls and "
           "results folded to one short line each, and attachments named by resource_id with "
           "their MIME type and size (pass a resource_id to view_resource to see an image). "
           "Reads from from_seq (default 1), or the last N messages with `last`. A page stops "
           "early when its text grows past about 100 KB; the answer then says which "
           "from_seq to read next. Text parts longer than max_text_chars are cut, saying so.",
       .params =
           {
               SessionIdParam("The session's id (from list_sessions or search_history)."),
               {.name = "from_seq",
                .type = Type::kInteger,
                .description = "First seq to read (default 1). Not with `last`.",
                .minimum = 1},
               {.name = "limit",
                .type = Type::kInteger,
                .description = "At most this many messages (1-500).",
                .minimum = 1,
                .maximum = 500,
                .default_value = 50},
               {.name = "last",
                .type = Type::kInteger,
                .description = "Read only the last N messages (1-500) instead of from from_seq.",
                .minimum = 1,
                .maximum = 500},
               {.name = "max_text_chars",
                .type = Type::kInteger,
                .description = "Cut each text part after this many characters; 0 shows it whole.",
                .minimum = 0,
                .default_value = 8000},
           },
       .output_schema = ReadSessionOutput()});
  specs.push_back(
      {.name = "search_history",
       .title = "Search the history",
       .description =
           "Search every stored message, tool call and result, compaction summary and code write "
           "of every session. The query takes words (all must match), \"a phrase\", a OR b, "
           "-excluded and prefix*; code and punctuation are fine as they are. Modes: keyword "
           "(BM25 full text), vector (meaning, by embeddings) or hybrid (both fused; the "
           "default). Each hit gives its session, seq, role, time and a snippet with the "
           "matches in **bold**; call read_session with that session_id and a from_seq a little "
           "before the hit's seq to read around it.",
       .params =
           {
               {.name = "query", .description = "What to look for.", .required = true},
               {.name = "mode",
                .description = "keyword, vector or hybrid.",
                .choices = {"keyword", "vector", "hybrid"},
                .default_value = "hybrid"},
               {.name = "session_id",
                .description = std::string("Only this session.") + kSessionIdForms,
                .names_session = true},
               {.name = "role",
                .description = "Only messages of this role.",
                .choices = {"system", "user", "assistant", "tool"}},
               {.name = "project",
                .description = "Only sessions whose metadata project (or cwd) starts with this "
                               "path, and code writes under it."},
               {.name = "kind",
                .description = "What to search: all, messages (no code writes) or code (only code "
                               "writes).",
                .choices = {"all", "messages", "code"},
                .default_value = "all"},
               {.name = "since",
                .description = "Only from this time on: 2026-11-20, 2026-11-20T14:30:00Z (UTC "
                               "unless it has an offset)."},
               {.name = "until", .description = "Only before this time (same forms as since)."},
               {.name = "limit",
                .type = Type::kInteger,
                .description = "Hits to return (1-100).",
                .minimum = 1,
                .maximum = 100,
                .default_value = 10},
               {.name = "offset",
                .type = Type::kInteger,
                .description = "Hits to skip, for the next page.",
                .minimum = 0,
                .maximum = 10000,
                .default_value = 0},
           },
       .output_schema = SearchHistoryOutput()});
  specs.push_back(
      {.name = "search_code_memory",
       .title = "Recall past code writes",
       .description =
           "Before writing or editing a file, recall what was written before: the past code "
           "writes most like it (one per file, best first, each with a preview, its session "
           "and time), how often the file was edited (churn: edits in 30 days and 24 hours, "
           "tier gold/silver/bronze/red) and warnings when the functions in `code` were "
           "edited again and again today. Give the code you are about to write to find "
           "similar code elsewhere; without it, recall goes by the file's name.",
       .params =
           {
               {.name = "path",
                .description = "The file about to be written (absolute, as the agent writes it).",
                .required = true},
               {.name = "code",
                .description = "The code about to be written: the whole file or the new fragment."},
               {.name = "limit",
                .type = Type::kInteger,
                .description = "Past writes to return (1-10).",
                .minimum = 1,
                .maximum = 10,
                .default_value = 3},
           },
       .output_schema = SearchCodeMemoryOutput()});
  specs.push_back(
      {.name = "code_churn",
       .title = "Most edited files",
       .description =
           "The files (or functions) agents edited most in the last 30 days, most first, with "
           "edits in 30 days and in 24 hours and the tier: gold 0-2 edits, silver 3-10, bronze "
           "11-20, red over 20 or 5 and more in 24 hours. Red code is being rewritten in "
           "circles: step back before editing it again.",
       .params =
           {
               {.name = "path_prefix", .description = "Only files under this path."},
               {.name = "functions",
                .type = Type::kBoolean,
                .description = "Count per function instead of per file.",
                .default_value = false},
               {.name = "limit",
                .type = Type::kInteger,
                .description = "At most this many entries (1-100).",
                .minimum = 1,
                .maximum = 100,
                .default_value = 20},
           },
       .output_schema = CodeChurnOutput()});
  specs.push_back(
      {.name = "view_resource",
       .title = "View an attachment",
       .description =
           "Show an attachment of a session's message: an image comes back as an image "
           "(up to 5 MiB), a text file as its text (the first 100 KB), any other file as a "
           "description. The resource_id is what read_session shows for the attachment "
           "(res_...).",
       .params =
           {
               SessionIdParam("The session whose message attached it."),
               {.name = "resource_id",
                .description = "The attachment's id, res_... (from read_session).",
                .required = true},
           },
       .output_schema = ViewResourceOutput()});
  specs.push_back(
      {.name = "rewind_session",
       .title = "Rewind a session",
       .description =
           "End a session's view at a seq, as when a user takes back the last turns: the "
           "messages after to_seq leave the view (read_session, projections and exports no "
           "longer see them) and messages appended later follow it. The log keeps everything, "
           "the rewind included, for audit. to_seq is a seq read_session showed (0 empties the "
           "view). Offered only when the server runs with --allow-rewind.",
       .params =
           {
               SessionIdParam("The session to rewind (from list_sessions or search_history)."),
               {.name = "to_seq",
                .type = Type::kInteger,
                .description = "The last seq the view keeps (0 .. the session's last seq).",
                .required = true,
                .minimum = 0},
           },
       .output_schema = RewindSessionOutput(),
       .writes = true});
  return specs;
}

std::string TypeName(Type type) {
  switch (type) {
    case Type::kString:
      return "string";
    case Type::kInteger:
      return "integer";
    case Type::kBoolean:
      return "boolean";
  }
  return "string";
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string ParamNames(const ToolSpec& spec) {
  std::vector<std::string> names;
  for (const ToolParam& p : spec.params) names.push_back(p.name);
  return Join(names);
}

// The value of `given` as the param's type, or why it is not one.
Result<Json> Coerce(const ToolSpec& spec, const ToolParam& param, const Json& given) {
  const std::string where = spec.name + ": argument '" + param.name + "'";
  switch (param.type) {
    case Type::kString: {
      if (!given.is_string()) {
        return Err(Status::InvalidArgument(where + " must be a string, not " +
                                           std::string(given.type_name())));
      }
      const std::string& text = given.get_ref<const std::string&>();
      if (!param.choices.empty() &&
          std::find(param.choices.begin(), param.choices.end(), text) == param.choices.end()) {
        return Err(Status::InvalidArgument(where + " is one of " + Join(param.choices) + ", not '" +
                                           text + "'"));
      }
      if (param.required && text.empty()) {
        return Err(Status::InvalidArgument(where + " must not be empty"));
      }
      return given;
    }
    case Type::kInteger: {
      int64_t value = 0;
      bool ok = false;
      if (given.is_number_integer()) {
        value = given.get<int64_t>();
        ok = given.is_number_unsigned() ? given.get<uint64_t>() <= INT64_MAX : true;
      } else if (given.is_number_float()) {
        const double d = given.get<double>();
        // The range first: converting a double outside int64 (or NaN) is
        // undefined behaviour (found by the mcp_line fuzzer).
        ok = d > -9e18 && d < 9e18 && d == static_cast<double>(static_cast<int64_t>(d));
        value = ok ? static_cast<int64_t>(d) : 0;
      } else if (given.is_string()) {
        const std::string& s = given.get_ref<const std::string&>();
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
        ok = ec == std::errc() && end == s.data() + s.size() && !s.empty();
      }
      if (!ok) {
        return Err(Status::InvalidArgument(where + " must be an integer, not " + given.dump()));
      }
      if (value < param.minimum || value > param.maximum) {
        std::string range = param.maximum == INT64_MAX ? "at least " + std::to_string(param.minimum)
                                                       : std::to_string(param.minimum) + "-" +
                                                             std::to_string(param.maximum);
        return Err(Status::InvalidArgument(where + " must be " + range + ", not " +
                                           std::to_string(value)));
      }
      return Json(value);
    }
    case Type::kBoolean:
      if (given.is_boolean()) return given;
      if (given == "true") return Json(true);
      if (given == "false") return Json(false);
      return Err(Status::InvalidArgument(where + " must be true or false, not " + given.dump()));
  }
  return given;
}

}  // namespace

ToolResult ToolResult::Text(std::string text, Json structured) {
  ToolResult r;
  r.content.push_back({{"type", "text"}, {"text", std::move(text)}});
  r.structured = std::move(structured);
  return r;
}

ToolResult ToolResult::Error(std::string text) {
  ToolResult r = Text(std::move(text));
  r.is_error = true;
  return r;
}

std::string ToolArgs::String(std::string_view name, std::string fallback) const {
  auto it = values_.find(name);
  return it != values_.end() && it->is_string() ? it->get<std::string>() : std::move(fallback);
}

int64_t ToolArgs::Int(std::string_view name, int64_t fallback) const {
  auto it = values_.find(name);
  return it != values_.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

bool ToolArgs::Bool(std::string_view name, bool fallback) const {
  auto it = values_.find(name);
  return it != values_.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

const std::vector<ToolSpec>& ToolSpecs(bool with_writes) {
  static const std::vector<ToolSpec> all = MakeSpecs();
  static const std::vector<ToolSpec> reads = [] {
    std::vector<ToolSpec> out;
    for (const ToolSpec& spec : all) {
      if (!spec.writes) out.push_back(spec);
    }
    return out;
  }();
  return with_writes ? all : reads;
}

const ToolSpec* FindTool(std::string_view name, bool with_writes) {
  for (const ToolSpec& spec : ToolSpecs(with_writes)) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

Json ToolListEntry(const ToolSpec& spec, bool with_output_schema) {
  Json properties = Json::object();
  Json required = Json::array();
  for (const ToolParam& p : spec.params) {
    Json schema = {{"type", TypeName(p.type)}, {"description", p.description}};
    if (!p.choices.empty()) schema["enum"] = p.choices;
    if (p.type == Type::kInteger) {
      schema["minimum"] = p.minimum;
      if (p.maximum != INT64_MAX) schema["maximum"] = p.maximum;
    }
    if (!p.default_value.is_null()) schema["default"] = p.default_value;
    properties[p.name] = std::move(schema);
    if (p.required) required.push_back(p.name);
  }
  Json input_schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) input_schema["required"] = std::move(required);
  input_schema["additionalProperties"] = false;
  Json entry = {{"name", spec.name},
                {"title", spec.title},
                {"description", spec.description},
                {"inputSchema", std::move(input_schema)}};
  if (with_output_schema) entry["outputSchema"] = spec.output_schema;
  entry["annotations"] = {{"title", spec.title},
                          {"readOnlyHint", !spec.writes},
                          // A rewind only hides: the log keeps what it took out of the view.
                          {"destructiveHint", false},
                          {"idempotentHint", !spec.writes},
                          {"openWorldHint", false}};
  return entry;
}

Result<ToolArgs> CheckArguments(const ToolSpec& spec, const Json& arguments) {
  if (!arguments.is_null() && !arguments.is_object()) {
    return Err(Status::InvalidArgument(spec.name + ": arguments must be an object, not " +
                                       std::string(arguments.type_name())));
  }
  Json values = Json::object();
  if (arguments.is_object()) {
    for (const auto& [name, given] : arguments.items()) {
      auto param = std::find_if(spec.params.begin(), spec.params.end(),
                                [&key = name](const ToolParam& p) { return p.name == key; });
      if (param == spec.params.end()) {
        return Err(Status::InvalidArgument(spec.name + " has no argument '" + name +
                                           "'; its arguments are " + ParamNames(spec)));
      }
      // A null is an argument left out, as clients that fill every field send it.
      if (given.is_null()) continue;
      ASSIGN_OR_RETURN(values[name], Coerce(spec, *param, given));
    }
  }
  for (const ToolParam& p : spec.params) {
    if (values.contains(p.name)) continue;
    if (p.required) {
      return Err(Status::InvalidArgument(spec.name + ": missing required argument '" + p.name +
                                         "': " + p.description));
    }
    if (!p.default_value.is_null()) values[p.name] = p.default_value;
  }
  return ToolArgs(std::move(values));
}

}  // namespace sessiondb::server
