// What `sessiondb` says when its command line does not parse: CLI11's
// errors in our words, on lines that start with "sessiondb: ", naming the
// verb they concern and where its options are listed; an unknown option
// gets the closest options of that verb (and the global ones), as an
// unknown verb gets the closest verbs (verb_suggestion.h).
//
// Example:
//   $ sessiondb ls --limt 5
//   sessiondb: unknown option '--limt' for 'sessiondb ls'. See 'sessiondb ls --help'.
//
//   The most similar option is
//   	--limit
//
// Thread-safety: pure functions over a CLI::App, single-threaded like the CLI.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace sessiondb::cli {

struct UsageError {
  // One line without the "sessiondb: " prefix, e.g. "unknown option '--limt'
  // for 'sessiondb ls'": the message of the --json error document.
  std::string message;
  // All of it for stderr: "sessiondb: " + message + where to look, then the
  // similar names, if any; ends with a newline. Not yet escaped.
  std::string text;
  // True for a value an option's check refused (exit 2, "invalid_argument");
  // false for the rest (exit 1, "usage").
  bool invalid_argument = false;
};

// The error for `error`, which app.parse() threw (never a --help or
// --version "error": their exit code is 0), read against what `app` parsed
// before it stopped: the deepest verb given is the one the error concerns.
UsageError DescribeParseError(const CLI::App& app, const CLI::ParseError& error);

// The error for `typed` (e.g. "--stor"), a word before the verb that looks
// like an option but is none of `app`'s global options.
UsageError UnknownGlobalOption(const CLI::App& app, std::string_view typed);

}  // namespace sessiondb::cli
