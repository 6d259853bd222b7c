// `sessiondb __complete WORD...`: what the shell completions
// (dist/completions/) ask the program, so that the verbs, their options, the
// values an option takes and the session ids they offer are the program's
// own and never drift from it. Hidden: not a verb of --help.
//
// The WORDs are the command line after `sessiondb` up to the cursor, the last
// one the word being completed (empty after a space). The answer is a
// candidate a line, those that begin with the last word, each as
// "CANDIDATE<TAB>DESCRIPTION" (verbs, options: their --help text; session
// ids: their titles) or "CANDIDATE" (values); a line ":files" or ":dirs" asks
// the shell to add file or folder names. Session ids come from the store the
// command line names (--store, --namespace, --key-file, else the default),
// opened read-only, when it is an embedded one (a Tab never waits on the
// network); nothing when it does not open. Exit 0 whatever the words.
//
// Example:
//   $ sessiondb __complete -- search --mode h
//   hybrid
//   $ sessiondb __complete -- show 0192
//   0192f3a1-...	Bug triage
//
// Thread-safety: single-threaded, like the CLI; OfferValues is called while
// the verbs are built.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cli_context.h"

namespace sessiondb::cli {

// Records that `option` takes one of `values` (e.g. --mode: keyword, vector,
// hybrid), for completion; returns `option`. For options whose check is the
// library's parser rather than CLI11's.
CLI::Option* OfferValues(CLI::Option* option, std::vector<std::string> values);

// Answers `sessiondb __complete WORDS...` (a leading "--" is skipped) on
// stdout for the verbs of `app`; returns the exit code (0).
int CompleteCommandLine(const CLI::App& app, CliContext& ctx, std::vector<std::string> words);

}  // namespace sessiondb::cli
