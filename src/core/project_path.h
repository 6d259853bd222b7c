// The one form a session's project takes, whoever writes it: an import (from
// the "cwd" Claude Code and Codex record), an append through any face, a
// fork. `ls --meta project=P`, MCP's list_sessions {project} and `search
// --project P` then find the same sessions however P was typed.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb {

// `path` lexically normal ("/a/./b/../c/" -> "/a/c"), without a trailing
// slash ("/" stays "/"). Nothing on disk is read: a store may name folders of
// other machines.
std::string NormalProjectPath(std::string_view path);

// `metadata` (a JSON object as CanonicalJsonObject returns it) with its
// "project" string normalised, or, when it has no "project", one made from
// its "cwd" string; unchanged when it has neither.
Result<std::string> WithNormalProject(std::string_view metadata);

}  // namespace sessiondb
