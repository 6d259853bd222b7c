// The path a code write is recorded under: absolute and normal, so that one
// file is one file however a tool named it. Codex's apply_patch names files
// relative to the session's working folder ("src/app.css"), Claude Code by
// absolute path ("/home/dev/app/src/app.css"); churn must count both as one
// file, and `churn --path /home/dev/app` must find both.
//
// Thread-safety: pure functions.
//
// Example:
//   ResolveWritePath("src/./app.css", "/home/dev/app")  // "/home/dev/app/src/app.css"
//   ResolveWritePath("src/app.css", "")                 // "src/app.css": no folder known
#pragma once

#include <string>
#include <string_view>

namespace sessiondb::memory {

// True for "/..." and for Windows paths "C:\...", "C:/..." and "\\server\...".
bool IsAbsolutePath(std::string_view path);

// `path` made absolute and normal: as it is when absolute, else under
// `folder` when that is absolute; then "." and empty segments dropped and
// ".." applied (never above the root), with the separator of its style ('/'
// or, for a Windows path, '\'). A relative path with no absolute folder is
// returned unchanged: there is nothing true to resolve it against.
std::string ResolveWritePath(std::string_view path, std::string_view folder);

}  // namespace sessiondb::memory
