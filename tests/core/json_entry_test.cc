// Keeps ParseJson the only door: fails when a nlohmann parse call (parse,
// accept, sax_parse, operator>>, from_* binary readers) appears in src/
// anywhere but src/core/json_parse.cc, where the nesting cap lives. A parse
// that bypasses the cap let ~60,000-deep JSON crash every face.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = SESSIONDB_SOURCE_DIR;

TEST(JsonEntry, NoNlohmannParseCallOutsideJsonParse) {
  // json::parse( / ordered_json::parse( / Json::parse( / basic_json<...>::parse(,
  // ::accept(, sax_parse(, from_cbor/msgpack/ubjson/bson/bjdata(, `>> some_json`.
  const std::regex call(
      R"((::|\b)(parse|accept|sax_parse|from_cbor|from_msgpack|from_ubjson|from_bson|from_bjdata)\s*\()");
  const std::regex json_type(R"(\b(json|Json|ordered_json|basic_json)\b)");
  std::vector<std::string> found;
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "src")) {
    const fs::path& p = entry.path();
    if (!entry.is_regular_file()) continue;
    const std::string ext = p.extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    ++files;
    if (p == kSourceDir / "src" / "core" / "json_parse.cc") continue;
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, call)) continue;
      // Our own Parse*(...) helpers are not the library's; a call on a JSON
      // type (json::parse, Json::accept) or a bare ::parse/::accept is.
      const std::string prefix = line.substr(0, m.position(0));
      const bool qualified = m[1].str() == "::";
      if (!qualified && m[2].str() != "sax_parse" && !m[2].str().starts_with("from_")) continue;
      if (qualified && !std::regex_search(prefix, json_type) &&
          prefix.find("nlohmann") == std::string::npos) {
        continue;
      }
      found.push_back(fs::relative(p, kSourceDir).string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  ASSERT_GT(files, 100u) << "the scan found no sources under " << kSourceDir;
  std::ostringstream list;
  for (const auto& f : found) list << "  " << f << "\n";
  EXPECT_TRUE(found.empty()) << "parse JSON through ParseJson (src/core/json_parse.h), which caps "
                                "nesting; these call nlohmann directly:\n"
                             << list.str();
}

TEST(JsonEntry, NoStreamExtractionIntoAJsonValue) {
  const std::regex extract(R"(>>\s*(j|json|doc|body|root|value|settings)\b)");
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "src")) {
    const fs::path& p = entry.path();
    if (!entry.is_regular_file() || (p.extension() != ".cc" && p.extension() != ".h")) continue;
    std::ifstream in(p);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    if (text.find("nlohmann") == std::string::npos) continue;
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
      if (std::regex_search(line, extract)) {
        found.push_back(fs::relative(p, kSourceDir).string() + ":" + std::to_string(n));
      }
    }
  }
  EXPECT_TRUE(found.empty()) << "operator>> into a JSON value bypasses the nesting cap: "
                             << (found.empty() ? "" : found.front());
}

}  // namespace

// nlohmann's value("key", fallback) throws on a non-object or a member of
// another type; foreign JSON is read with MemberOr (src/core/json_access.h).
TEST(JsonEntry, NoThrowingValueLookupOutsideJsonAccess) {
  const std::regex lookup(R"(\.value\(\s*")");
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "src")) {
    const fs::path& p = entry.path();
    if (!entry.is_regular_file() || (p.extension() != ".cc" && p.extension() != ".h")) continue;
    if (p == kSourceDir / "src" / "core" / "json_access.h") continue;  // names it in comments
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (std::regex_search(line, lookup)) {
        found.push_back(fs::relative(p, kSourceDir).string() + ":" + std::to_string(n) + ": " +
                        line);
      }
    }
  }
  std::ostringstream list;
  for (const auto& f : found) list << "  " << f << "\n";
  EXPECT_TRUE(found.empty()) << "read members with MemberOr (src/core/json_access.h); "
                                "value() throws on foreign JSON:\n"
                             << list.str();
}
