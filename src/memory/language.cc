#include "memory/language.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace sessiondb::memory {

std::string LanguageForPath(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 19> kByExtension = {{
      {"py", "python"},      {"pyi", "python"},     {"js", "javascript"}, {"jsx", "javascript"},
      {"mjs", "javascript"}, {"cjs", "javascript"}, {"ts", "typescript"}, {"tsx", "typescript"},
      {"go", "go"},          {"rs", "rust"},        {"c", "c"},           {"h", "c"},
      {"cc", "cpp"},         {"cpp", "cpp"},        {"cxx", "cpp"},       {"hpp", "cpp"},
      {"hh", "cpp"},         {"hxx", "cpp"},        {"c++", "cpp"},
  }};
  const size_t slash = path.find_last_of("/\\");
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == base.size()) return "";
  std::string ext;
  for (char c : base.substr(dot + 1)) {
    ext += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const auto& [e, language] : kByExtension) {
    if (e == ext) return std::string(language);
  }
  return "";
}

bool IsReservedWord(std::string_view word) {
  // Of three or more letters (recall drops shorter words anyway), sorted.
  static constexpr std::array<std::string_view, 109> kReserved = {{
      "abstract",   "and",       "assert",    "async",    "auto",       "await",       "bool",
      "boolean",    "break",     "case",      "catch",    "chan",       "char",        "class",
      "const",      "constexpr", "continue",  "crate",    "def",        "default",     "defer",
      "del",        "delete",    "double",    "dyn",      "elif",       "else",        "enum",
      "except",     "explicit",  "export",    "extends",  "extern",     "fallthrough", "false",
      "final",      "finally",   "float",     "for",      "friend",     "from",        "func",
      "function",   "global",    "goto",      "impl",     "implements", "import",      "inline",
      "instanceof", "int",       "interface", "lambda",   "let",        "long",        "mut",
      "mutable",    "namespace", "new",       "nil",      "noexcept",   "none",        "nonlocal",
      "not",        "null",      "nullptr",   "operator", "override",   "package",     "pass",
      "private",    "protected", "pub",       "public",   "raise",      "readonly",    "register",
      "return",     "self",      "short",     "signed",   "sizeof",     "static",      "struct",
      "super",      "switch",    "template",  "this",     "throw",      "throws",      "trait",
      "true",       "try",       "typedef",   "typename", "typeof",     "union",       "unsafe",
      "unsigned",   "use",       "using",     "var",      "virtual",    "void",        "volatile",
      "where",      "while",     "with",      "yield",
  }};
  return std::binary_search(kReserved.begin(), kReserved.end(), word);
}

}  // namespace sessiondb::memory
