#include "cli/numeric_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/output.h"

namespace sessiondb::cli {
namespace {

constexpr const char* kDecimalName = "DECIMAL";
constexpr const char* kSizeSyntaxName = "DECIMAL-SIZE";

bool AllDigits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The value as the message quotes it: short, and safe on a terminal.
std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 40;
  std::string shown(text.substr(0, kShown));
  if (text.size() > kShown) shown += "...";
  return "'" + EscapeForTerminal(shown) + "'";
}

// The type name is followed by the validators' descriptions: "INT:POSITIVE".
bool IsIntegerOption(CLI::Option& option) {
  const std::string type = option.get_type_name();
  return type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0;
}

bool IsFloatOption(CLI::Option& option) { return option.get_type_name().rfind("FLOAT", 0) == 0; }

std::string Shown(double number) {
  std::string text = std::to_string(number);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

// CLI11 answers "no such validator" only by throwing: asked of every option
// of every verb, that was hundreds of exceptions on each start of the
// program, the hook's too (issue 40). Walk asks only of numeric options.
bool HasValidator(CLI::Option& option, const std::string& name) {
  try {
    option.get_validator(name);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

bool IsSizeOption(CLI::Option& option) {
  // CLI::AsSizeValue describes itself as "SIZE [b, kb(=1000b), ...]".
  return option.get_type_name().find(":SIZE") != std::string::npos;
}

void Walk(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!IsFloatOption(*option) && !IsIntegerOption(*option)) continue;
    if (HasValidator(*option, kDecimalName)) continue;
    if (IsFloatOption(*option)) {
      option->check(FractionIn(0, 1e9));
      continue;
    }
    if (!IsIntegerOption(*option)) continue;
    if (IsSizeOption(*option)) {
      // Before AsSizeValue (transform puts it first): "10", "10MiB", "10 kb".
      option->transform(CLI::Validator(
          [](std::string& value) -> std::string {
            size_t digits = 0;
            while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits])))
              ++digits;
            size_t unit = digits;
            while (unit < value.size() && value[unit] == ' ') ++unit;
            const bool letters =
                std::all_of(value.begin() + static_cast<std::ptrdiff_t>(unit), value.end(),
                            [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
            if (digits > 0 && letters) return "";
            return "must be a size in decimal digits with an optional unit, e.g. 64MiB or "
                   "1000000 (got " +
                   Quoted(value) + ")";
          },
          "", kSizeSyntaxName));
      option->check(NumberIn(1, kMaxCount));
    } else {
      option->check(NumberIn(0, std::numeric_limits<int32_t>::max()));
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) Walk(*sub);
}

}  // namespace

CLI::Validator NumberIn(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        int64_t number = 0;
        const bool parsed =
            AllDigits(value) &&
            std::from_chars(value.data(), value.data() + value.size(), number).ec == std::errc();
        if (parsed && number >= min && number <= max) return "";
        return "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
               ", in decimal digits (got " + Quoted(value) + ")";
      },
      "", kDecimalName);
}

CLI::Validator FractionIn(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const size_t dot = value.find('.');
        const std::string_view whole = std::string_view(value).substr(0, dot);
        const std::string_view fraction =
            dot == std::string::npos ? "1" : std::string_view(value).substr(dot + 1);
        const bool parsed = AllDigits(whole) && AllDigits(fraction);
        const double number = parsed ? std::strtod(value.c_str(), nullptr) : 0;
        if (parsed && number >= min && number <= max) return "";
        return "must be a number from " + Shown(min) + " to " + Shown(max) +
               ", in decimal digits with an optional fraction such as 1.5 (got " + Quoted(value) +
               ")";
      },
      "", kDecimalName);
}

void RequireStrictNumbers(CLI::App& app) { Walk(app); }

}  // namespace sessiondb::cli
