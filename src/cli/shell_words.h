// Command lines the CLI prints for a person to paste into a shell or writes
// into an agent's settings: each word quoted only when it must be, and the
// running binary found by its absolute path.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace sessiondb::cli {

// `word` as one POSIX shell word: unchanged when it holds only characters no
// shell treats specially ([A-Za-z0-9_@%+=:,./-], not empty), else inside
// single quotes with each ' written as '\''.
std::string ShellQuote(std::string_view word);

// The absolute path of the running binary (/proc/self/exe); empty if it
// cannot be read.
std::string SelfExecutable();

// How a person should call this binary: "sessiondb" when that name, looked
// up in $PATH, is this very file; else its absolute path, quoted.
std::string SelfCommandWord();

// True if `location` names a PostgreSQL store (postgresql:// or postgres://).
bool IsDatabaseUri(std::string_view location);

// `location` (a store directory or a postgresql:// URI) as an absolute
// location: a relative directory is made absolute against the working
// directory; a URI is returned unchanged.
std::string AbsoluteStoreLocation(const std::string& location);

}  // namespace sessiondb::cli
