// ShellQuote: one word for `sh -c`, for the commands sessiondb_pg_bench runs
// through popen (the throw-away cluster's script, pgbench).
//
// Example:
//   popen(("bash " + ShellQuote(script) + " start " + ShellQuote(dir)).c_str(), "r");
//
// Thread-safety: a pure function.
#pragma once

#include <string>

namespace sessiondb::bench {

// Single-quotes `s` for the shell; a quote inside becomes '\''.
inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace sessiondb::bench
