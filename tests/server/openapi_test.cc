// docs/openapi.json held to the code: it parses as OpenAPI 3.1 whose every
// $ref resolves; every documented operation exists on the real server; every
// route src/server/routes_*.cc registers is documented; and real answers have
// the fields and types the documented schemas promise.
#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "blob/base64.h"
#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = SESSIONDB_SOURCE_DIR;

// The methods OpenAPI names that the server's router can take.
constexpr std::array<const char*, 5> kMethods = {"get", "post", "put", "patch", "delete"};

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// docs/openapi.json; a discarded value when it does not parse.
json LoadOpenApi() {
  return json::parse(ReadText(kSourceDir / "docs" / "openapi.json"), nullptr,
                     /*allow_exceptions=*/false);
}

struct Operation {
  std::string path;    // the template, "/v1/sessions/{id}"
  std::string method;  // lowercase, as OpenAPI spells it
  json spec;
};

std::vector<Operation> Operations(const json& doc) {
  std::vector<Operation> out;
  for (const auto& [path, item] : doc.at("paths").items()) {
    for (const char* method : kMethods) {
      if (item.contains(method)) out.push_back({path, method, item.at(method)});
    }
  }
  return out;
}

// What "#/components/schemas/X" points at; null when it points at nothing.
json Resolve(const json& doc, const std::string& ref) {
  if (!ref.starts_with("#/")) return json();
  const json::json_pointer pointer(ref.substr(1));
  return doc.contains(pointer) ? doc.at(pointer) : json();
}

// Follows $ref until the schema is not a reference (at most a few hops).
json Deref(const json& doc, json schema) {
  for (int hops = 0; hops < 8 && schema.is_object() && schema.contains("$ref"); ++hops) {
    schema = Resolve(doc, schema.at("$ref").get<std::string>());
  }
  return schema;
}

// "/v1/sessions/{id}/compactions/{seq}/prune" -> "/v1/sessions/{}/compactions/{}/prune":
// templates compared without their parameters' names.
std::string TemplateShape(const std::string& path) {
  static const std::regex kParam(R"(\{[^}/]+\})");
  return std::regex_replace(path, kParam, "{}");
}

// A router pattern in the same form: each top-level capture group becomes
// "{}" (R"(/v1/sessions/([^/]+))" -> "/v1/sessions/{}"). Returns "" for a
// pattern this cannot read (any other regex syntax outside the groups).
std::string PatternShape(const std::string& pattern) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (depth == 0 && i + 1 < pattern.size()) out += pattern[i + 1];
      ++i;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth == 0) out += "{}";
    } else if (depth == 0) {
      if (std::string_view("[]*+?|^$.{}").find(c) != std::string_view::npos) return "";
      out += c;
    }
  }
  return depth == 0 ? out : "";
}

struct RegisteredRoute {
  std::string file;     // "routes_sessions.cc"
  std::string method;   // "GET"
  std::string pattern;  // the regex, as written
};

// Every router.Add(METHOD, PATTERN, ...) in src/server/routes_*.cc. PATTERN
// is a string literal (plain or raw) or the name of a constexpr string of
// the same file. `unread` counts the calls this could not read.
std::vector<RegisteredRoute> RegisteredRoutes(int* unread) {
  static const std::regex kConstant(
      R"re(constexpr\s+(?:const\s+)?char\s*\*\s*(?:const\s+)?(\w+)\s*=\s*(?:R"\((.*?)\)"|"([^"]*)"))re");
  static const std::regex kAdd(
      R"re(router\.Add\(\s*"([A-Z]+)"\s*,\s*(?:R"\((.*?)\)"|"([^"]*)"|(\w+))\s*,)re");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "src" / "server")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("routes_") && name.ends_with(".cc")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<RegisteredRoute> out;
  *unread = 0;
  for (const fs::path& file : files) {
    const std::string text = ReadText(file);
    std::map<std::string, std::string> constants;
    for (std::sregex_iterator it(text.begin(), text.end(), kConstant), end; it != end; ++it) {
      constants[(*it)[1]] = (*it)[2].matched ? (*it)[2].str() : (*it)[3].str();
    }
    size_t calls = 0;
    for (size_t at = text.find("router.Add("); at != std::string::npos;
         at = text.find("router.Add(", at + 1)) {
      ++calls;
    }
    size_t read = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), kAdd), end; it != end; ++it) {
      const std::smatch& m = *it;
      std::string pattern = m[2].matched ? m[2].str() : m[3].matched ? m[3].str() : "";
      if (m[4].matched) {
        auto named = constants.find(m[4].str());
        if (named == constants.end()) continue;
        pattern = named->second;
      }
      out.push_back({file.filename().string(), m[1].str(), pattern});
      ++read;
    }
    *unread += static_cast<int>(calls - read);
  }
  return out;
}

// ---- A small shape checker --------------------------------------------------

std::string JsonType(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

bool TypeAllows(const json& type, const std::string& actual) {
  auto allows = [&](const std::string& t) {
    return t == actual || (t == "number" && actual == "integer");
  };
  if (type.is_string()) return allows(type.get<std::string>());
  return std::any_of(type.begin(), type.end(),
                     [&](const json& t) { return allows(t.get<std::string>()); });
}

// Adds to `problems` why `value` does not have the shape `schema` documents:
// its JSON type (and enum or const), and for an object its required
// properties and the shapes of the properties it has, for an array those of
// its items, following $ref, allOf, and anyOf/oneOf (one alternative must
// fit). Enough to catch a renamed or retyped field; not a JSON Schema
// validator (no patterns, ranges or additionalProperties).
void CheckShape(const json& doc, const json& schema_or_ref, const json& value,
                const std::string& where, int depth, std::vector<std::string>& problems) {
  const json schema = Deref(doc, schema_or_ref);
  if (!schema.is_object()) {
    problems.push_back(where + ": the schema " + schema_or_ref.dump() + " does not resolve");
    return;
  }
  if (depth > 8) return;
  if (schema.contains("allOf")) {
    for (const json& part : schema.at("allOf"))
      CheckShape(doc, part, value, where, depth, problems);
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!schema.contains(key)) continue;
    std::vector<std::string> why;
    bool fits = false;
    for (const json& alternative : schema.at(key)) {
      std::vector<std::string> own;
      CheckShape(doc, alternative, value, where, depth, own);
      if (own.empty()) fits = true;
      why.insert(why.end(), own.begin(), own.end());
    }
    if (!fits) {
      std::string all;
      for (const std::string& w : why) all += "\n    " + w;
      problems.push_back(where + " fits none of the " + key + " alternatives:" + all);
    }
  }
  const std::string actual = JsonType(value);
  if (schema.contains("type") && !TypeAllows(schema.at("type"), actual)) {
    problems.push_back(where + " is " + actual + " (" + value.dump().substr(0, 80) +
                       "), documented as " + schema.at("type").dump());
    return;
  }
  if (schema.contains("enum")) {
    const json& values = schema.at("enum");
    if (std::find(values.begin(), values.end(), value) == values.end()) {
      problems.push_back(where + " is " + value.dump() + ", not one of " + values.dump());
    }
  }
  if (schema.contains("const") && schema.at("const") != value) {
    problems.push_back(where + " is " + value.dump() + ", documented as always " +
                       schema.at("const").dump());
  }
  if (value.is_object()) {
    for (const json& name : schema.value("required", json::array())) {
      if (!value.contains(name.get<std::string>())) {
        problems.push_back(where + " lacks the required " + name.dump());
      }
    }
    const json properties = schema.value("properties", json::object());
    for (const auto& [name, property] : properties.items()) {
      if (value.contains(name)) {
        CheckShape(doc, property, value.at(name), where + "." + name, depth + 1, problems);
      }
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < value.size(); ++i) {
      CheckShape(doc, schema.at("items"), value[i], where + "[" + std::to_string(i) + "]",
                 depth + 1, problems);
    }
  }
}

// ---- The document itself ----------------------------------------------------

// Calls `visit` with every "$ref" string in `node` and where it is.
void ForEachRef(const json& node, const std::string& where,
                const std::function<void(const std::string&, const std::string&)>& visit) {
  if (node.is_object()) {
    for (const auto& [key, child] : node.items()) {
      if (key == "$ref" && child.is_string()) visit(child.get<std::string>(), where);
      ForEachRef(child, where + "/" + key, visit);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i)
      ForEachRef(node[i], where + "/" + std::to_string(i), visit);
  }
}

TEST(OpenApi, ParsesAsOpenApi31AndEveryRefResolvesToAComponent) {
  const json doc = LoadOpenApi();
  ASSERT_TRUE(doc.is_object()) << "docs/openapi.json is not a JSON object (does it parse?)";
  ASSERT_TRUE(doc.contains("openapi") && doc.at("openapi").is_string());
  EXPECT_TRUE(doc.at("openapi").get<std::string>().starts_with("3.1."))
      << "openapi is " << doc.at("openapi");
  ASSERT_TRUE(doc.contains("paths") && doc.at("paths").is_object());
  ASSERT_TRUE(doc.contains("components") && doc.at("components").is_object());
  EXPECT_EQ(doc.at("servers").at(0).at("url"), "http://127.0.0.1:7411");

  int refs = 0;
  ForEachRef(doc, "#", [&](const std::string& ref, const std::string& where) {
    ++refs;
    EXPECT_TRUE(ref.starts_with("#/components/")) << where << ": " << ref << " is not a component";
    EXPECT_FALSE(Resolve(doc, ref).is_null()) << where << ": " << ref << " resolves to nothing";
  });
  EXPECT_GT(refs, 50);

  const json& schemes = doc.at("components").at("securitySchemes");
  for (const auto& requirement : doc.at("security")) {
    for (const auto& [scheme, scopes] : requirement.items()) {
      EXPECT_TRUE(schemes.contains(scheme)) << "security names an undefined scheme " << scheme;
    }
  }
}

TEST(OpenApi, EveryPathTemplateParameterIsDeclaredInThePath) {
  const json doc = LoadOpenApi();
  ASSERT_TRUE(doc.is_object());
  static const std::regex kParam(R"(\{([^}/]+)\})");
  for (const Operation& op : Operations(doc)) {
    std::vector<json> declared;
    for (const json* list : {&doc.at("paths").at(op.path), &op.spec}) {
      for (const json& p : list->value("parameters", json::array()))
        declared.push_back(Deref(doc, p));
    }
    for (std::sregex_iterator it(op.path.begin(), op.path.end(), kParam), end; it != end; ++it) {
      const std::string name = (*it)[1];
      const bool found = std::any_of(declared.begin(), declared.end(), [&](const json& p) {
        return p.value("name", "") == name && p.value("in", "") == "path" &&
               p.value("required", false);
      });
      EXPECT_TRUE(found) << Upper(op.method) << " " << op.path << ": {" << name
                         << "} has no required path parameter";
    }
  }
}

TEST(OpenApi, EveryOperationDocumentsItsRefusalsAndTheTokenOne) {
  const json doc = LoadOpenApi();
  ASSERT_TRUE(doc.is_object());
  for (const Operation& op : Operations(doc)) {
    const json& responses = op.spec.at("responses");
    bool client_error = false;
    for (const auto& [status, response] : responses.items()) {
      if (status.size() == 3 && status[0] == '4') client_error = true;
    }
    EXPECT_TRUE(client_error) << Upper(op.method) << " " << op.path << " documents no 4xx";
    // The token check comes before routing, so every route can answer it.
    EXPECT_TRUE(responses.contains("401")) << Upper(op.method) << " " << op.path;
    // So do the Host check, and for writes the cross-site checks.
    EXPECT_TRUE(responses.contains("421")) << Upper(op.method) << " " << op.path;
    if (op.method != "get") {
      EXPECT_TRUE(responses.contains("415")) << Upper(op.method) << " " << op.path;
      EXPECT_TRUE(responses.contains("403")) << Upper(op.method) << " " << op.path;
    }
  }
}

TEST(OpenApi, EveryRouteTheServerRegistersIsDocumented) {
  const json doc = LoadOpenApi();
  ASSERT_TRUE(doc.is_object());
  std::map<std::string, std::string> documented;  // shape -> template
  for (const auto& [path, item] : doc.at("paths").items()) documented[TemplateShape(path)] = path;

  int unread = 0;
  const std::vector<RegisteredRoute> routes = RegisteredRoutes(&unread);
  EXPECT_EQ(unread, 0) << "some router.Add calls in src/server/routes_*.cc could not be read; "
                          "teach RegisteredRoutes their form";
  ASSERT_GE(routes.size(), 30u) << "found too few routes in " << (kSourceDir / "src/server");
  for (const RegisteredRoute& route : routes) {
    const std::string shape = PatternShape(route.pattern);
    ASSERT_FALSE(shape.empty()) << route.file << ": cannot turn the pattern " << route.pattern
                                << " into a path template; teach PatternShape its syntax";
    auto path = documented.find(shape);
    ASSERT_NE(path, documented.end()) << route.file << ": " << route.method << " " << route.pattern
                                      << " (" << shape << ") is not in docs/openapi.json";
    const std::string method = [&] {
      std::string m = route.method;
      for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return m;
    }();
    EXPECT_TRUE(doc.at("paths").at(path->second).contains(method))
        << route.file << ": " << route.method << " " << path->second
        << " is registered but docs/openapi.json does not document that method";
  }
}

// ---- Against the real server ------------------------------------------------

class OpenApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    doc_ = LoadOpenApi();
    ASSERT_TRUE(doc_.is_object());
    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"), std::vector<std::string>{});
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
  }

  httplib::Result Send(const std::string& method, const std::string& path,
                       const std::string& body) {
    if (method == "get") return client_->Get(path);
    if (method == "delete") return client_->Delete(path);
    if (method == "post") return client_->Post(path, body, "application/json");
    if (method == "put") return client_->Put(path, body, "application/json");
    return client_->Patch(path, body, "application/json");
  }

  json doc_;
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

// Path parameters that name nothing in an empty store.
std::string FillWithMissing(const std::string& path) {
  static const std::map<std::string, std::string> kMissing = {
      {"id", "no-such-session"},
      {"draft_id", "draft_no-such-draft"},
      {"sha256", std::string(64, '0')},
      {"seq", "1"},
  };
  static const std::regex kParam(R"(\{([^}/]+)\})");
  std::string out;
  auto last = path.cbegin();
  for (std::sregex_iterator it(path.begin(), path.end(), kParam), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    auto known = kMissing.find((*it)[1]);
    out += known != kMissing.end() ? known->second : "no-such-" + (*it)[1].str();
    last = (*it)[0].second;
  }
  out.append(last, path.cend());
  return out;
}

TEST_F(OpenApiServerTest, EveryDocumentedOperationIsARouteOfTheServer) {
  const std::vector<Operation> operations = Operations(doc_);
  ASSERT_GE(operations.size(), 30u);
  for (const Operation& op : operations) {
    const std::string path = FillWithMissing(op.path);
    const std::string what = Upper(op.method) + " " + path + " (" + op.path + ")";
    auto r = Send(op.method, path, "{}");
    ASSERT_TRUE(r) << what << ": no answer";
    EXPECT_NE(r->status, 405) << what << ": " << r->body;
    const json body = Body(r);
    std::string message;
    if (body.is_object() && body.contains("error")) message = body["error"].value("message", "");
    EXPECT_FALSE(r->status == 404 && message.starts_with("no route"))
        << what << " is documented but the router does not know it: " << r->body;
    EXPECT_TRUE(op.spec.at("responses").contains(std::to_string(r->status)))
        << what << " answered " << r->status
        << ", which docs/openapi.json does not list: " << r->body;
  }
}

std::string DataUri(const std::string& png) {
  return "data:image/png;base64," + blob::Base64Encode(png);
}

// A request whose answer is checked against the schema documented for its
// status and application/json.
struct ShapeCase {
  std::string method;
  std::string documented_path;  // the template in docs/openapi.json
  std::string path;             // what is sent
  json body;
  int status;
};

TEST_F(OpenApiServerTest, RealAnswersHaveTheDocumentedShapes) {
  ASSERT_EQ(
      Send("post", "/v1/sessions", R"({"id":"shapes","metadata":{"project":"/src/a"}})")->status,
      201);
  json first = {
      {"role", "user"},
      {"parts",
       {{{"type", "text"}, {"text", "the zanzibar configuration parser"}},
        {{"type", "image"}, {"data_uri", DataUri(MakePng(3, 2, "openapi"))}, {"name", "a.png"}},
        {{"type", "resource_link"}, {"uri", "https://example.com/a.pdf"}, {"name", "a.pdf"}}}},
  };
  json answer = {
      {"role", "assistant"},
      {"model", "m1"},
      {"provider", "openai"},
      {"usage", {{"input_tokens", 7}, {"output_tokens", 3}}},
      {"parts",
       {{{"type", "reasoning"}, {"text", "look at it"}},
        {{"type", "tool_call"},
         {"tool_call_id", "c1"},
         {"tool_name", "read"},
         {"arguments", {{"path", "a"}}}},
        {{"type", "tool_result"},
         {"tool_call_id", "c1"},
         {"text", "zanzibar"},
         {"is_error", false}}}},
  };
  const json batch = {{"messages", {answer}}};
  const json compaction = {{"from_seq", 1}, {"to_seq", 1}, {"summary", "A picture of zanzibar."}};
  const std::vector<ShapeCase> cases = {
      {"post", "/v1/sessions/{id}/messages", "/v1/sessions/shapes/messages", first, 201},
      {"post", "/v1/sessions/{id}/messages", "/v1/sessions/shapes/messages", batch, 201},
      {"get", "/v1/sessions", "/v1/sessions", {}, 200},
      {"get", "/v1/sessions/{id}", "/v1/sessions/shapes", {}, 200},
      {"get", "/v1/sessions/{id}/messages", "/v1/sessions/shapes/messages?data_uris=1", {}, 200},
      {"get", "/v1/sessions/{id}/events", "/v1/sessions/shapes/events", {}, 200},
      {"get", "/v1/search", "/v1/search?q=zanzibar&mode=keyword", {}, 200},
      {"post", "/v1/sessions/{id}/fork", "/v1/sessions/shapes/fork", {{"at_seq", 1}}, 201},
      {"post", "/v1/sessions/{id}/compactions", "/v1/sessions/shapes/compactions", compaction, 201},
      {"get", "/v1/sessions/{id}/usage", "/v1/sessions/shapes/usage", {}, 200},
      {"post", "/v1/sessions/{id}/drafts", "/v1/sessions/shapes/drafts", {{"model", "m"}}, 201},
      {"get", "/v1/sessions/{id}/drafts", "/v1/sessions/shapes/drafts", {}, 200},
      {"get", "/v1/active", "/v1/active", {}, 200},
      {"get", "/v1/stats", "/v1/stats", {}, 200},
      {"get", "/v1/health", "/v1/health", {}, 200},
      {"post", "/v1/verify", "/v1/verify", {}, 200},
      {"post", "/v1/gc", "/v1/gc?dry_run=1", {}, 200},
      {"get", "/v1/sessions/{id}", "/v1/sessions/no-such-session", {}, 404},
      {"get", "/v1/search", "/v1/search?q=x&mode=psychic", {}, 400},
  };
  for (const ShapeCase& c : cases) {
    const std::string what = Upper(c.method) + " " + c.path;
    auto r = Send(c.method, c.path, c.body.is_object() ? c.body.dump() : "");
    ASSERT_TRUE(r) << what << ": no answer";
    ASSERT_EQ(r->status, c.status) << what << ": " << r->body;
    EXPECT_TRUE(r->get_header_value("Content-Type").starts_with("application/json")) << what;
    const json& responses = doc_.at("paths").at(c.documented_path).at(c.method).at("responses");
    ASSERT_TRUE(responses.contains(std::to_string(c.status)))
        << what << " documents no " << c.status;
    const json response = Deref(doc_, responses.at(std::to_string(c.status)));
    const json::json_pointer schema("/content/application~1json/schema");
    ASSERT_TRUE(response.contains(schema))
        << what << ": no application/json schema for " << c.status;
    std::vector<std::string> problems;
    CheckShape(doc_, response.at(schema), Body(r), "answer", 0, problems);
    std::string all;
    for (const std::string& p : problems) all += "\n  " + p;
    EXPECT_TRUE(problems.empty()) << what << " does not have the documented shape:" << all;
  }
}

TEST_F(OpenApiServerTest, TheInfoVersionIsTheServersVersion) {
  const json health = Body(client_->Get("/v1/health"));
  EXPECT_EQ(doc_.at("info").at("version"), health.at("version"))
      << "docs/openapi.json describes another version than /v1/health reports";
}

// The checker itself: a renamed or retyped field is caught, through $ref.
TEST(OpenApiShapeChecker, CatchesARenamedARetypedAndAnUnlistedEnumValue) {
  const json doc = LoadOpenApi();
  ASSERT_TRUE(doc.is_object());
  const json session_ref = {{"$ref", "#/components/schemas/Session"}};
  json session = {{"id", "s"},
                  {"title", "t"},
                  {"preview", ""},
                  {"created_ms", 1},
                  {"updated_ms", 2},
                  {"message_count", 0},
                  {"last_seq", 0},
                  {"archived", false},
                  {"metadata", json::object()},
                  {"parent_id", nullptr},
                  {"fork_seq", 0}};
  std::vector<std::string> problems;
  CheckShape(doc, session_ref, session, "session", 0, problems);
  EXPECT_TRUE(problems.empty()) << problems.front();

  json renamed = session;
  renamed.erase("updated_ms");
  renamed["updated_at"] = 2;
  problems.clear();
  CheckShape(doc, session_ref, renamed, "session", 0, problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("updated_ms"), std::string::npos) << problems[0];

  json retyped = session;
  retyped["archived"] = "no";
  problems.clear();
  CheckShape(doc, session_ref, retyped, "session", 0, problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("session.archived"), std::string::npos) << problems[0];

  json page = {{"sessions", {session}}, {"next_cursor", 5}};
  page["sessions"][0]["parent_id"] = 3;
  problems.clear();
  CheckShape(doc, {{"$ref", "#/components/schemas/SessionPage"}}, page, "page", 0, problems);
  EXPECT_EQ(problems.size(), 2u);  // next_cursor and sessions[0].parent_id

  problems.clear();
  CheckShape(doc, {{"$ref", "#/components/schemas/Resource"}},
             {{"origin", "carrier-pigeon"}, {"missing", false}}, "resource", 0, problems);
  EXPECT_EQ(problems.size(), 1u);
}

}  // namespace
}  // namespace sessiondb::testing
