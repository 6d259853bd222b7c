// "Permission denied", said as such: when opening the store, reading what
// `import` was given or writing where `export` was sent failed, these say
// whether the file system's permissions are why, naming the path, its mode
// and owner, and what to do, instead of the generic I/O error (or SQLite's
// "unable to open database file") the failure reported.
//
// They use the effective uid and groups (faccessat with AT_EACCESS), as
// opening does: root, whom permissions do not stop, always gets nullopt.
//
// Example:
//   if (std::optional<std::string> why = ReadDenied(path)) {
//     return ctx.Fail(Status::FailedPrecondition(*why + "; ..."));
//   }
//   // "permission denied: this user (uid 1001) may not read /srv/a.json
//   //  (-rw-------, owner root)"
//
// Thread-safety: pure functions of the file system.
#pragma once

#include <optional>
#include <string>

namespace sessiondb::cli {

// Why this process may not read the file or list the folder at `path`
// ("permission denied: ..."), counting the folders on the way to it, which
// it must be allowed to enter; nullopt when permissions do not stop it
// (it may, or there is nothing at `path`).
std::optional<std::string> ReadDenied(const std::string& path);

// Why this process may not write `path`: a file or folder there, or, when
// there is none, a new one in the nearest folder above it that exists.
// nullopt when permissions do not stop it.
std::optional<std::string> WriteDenied(const std::string& path);

// Why the embedded store at `dir` cannot be opened for permissions: its
// folder, or one of its database files, cannot be reached or read, or
// (with `create`) the folder cannot be made. A store that may be read but
// not written opens read-only (StoreOptions::read_only), so writing is not
// asked for. Ends with what to do; nullopt when permissions do not stop it.
std::optional<std::string> StoreAccessDenied(const std::string& dir, bool create);

}  // namespace sessiondb::cli
