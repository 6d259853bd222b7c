// The name/parse pair every enum of the public API has (RoleName and
// ParseRole, ImportFormatName and ParseImportFormat, ...), written once over a
// table of {value, name}: the name is what the CLI, the HTTP API, MCP and the
// stored JSON spell, and an unknown name is refused with every valid one.
//
// Example:
//   constexpr std::array<std::pair<Role, std::string_view>, 2> kRoles{{...}};
//   std::string_view RoleName(Role r) { return NameOf(r, kRoles); }
//   Result<Role> ParseRole(std::string_view n) { return ParseName(n, kRoles, "role"); }
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "sessiondb/status.h"

namespace sessiondb {

// The value named `name`, or kInvalidArgument "unknown <what> 'x'; expected
// one of: a, b, c" listing the table's names in order.
template <typename Enum, size_t N>
Result<Enum> ParseName(std::string_view name,
                       const std::array<std::pair<Enum, std::string_view>, N>& table,
                       std::string_view what) {
  std::string accepted;
  for (const auto& [value, value_name] : table) {
    if (value_name == name) return value;
    if (!accepted.empty()) accepted += ", ";
    accepted += value_name;
  }
  return Err(Status::InvalidArgument("unknown " + std::string(what) + " '" + std::string(name) +
                                     "'; expected one of: " + accepted));
}

// The name of `value`; "unknown" for a value the table lacks (a cast int).
template <typename Enum, size_t N>
std::string_view NameOf(Enum value, const std::array<std::pair<Enum, std::string_view>, N>& table) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";
}

}  // namespace sessiondb
