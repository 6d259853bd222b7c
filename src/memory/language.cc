#include "memory/language.h"

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

}  // namespace sessiondb::memory
