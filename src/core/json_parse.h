// The one door through which JSON text becomes a nlohmann tree. Every parse
// of outside or stored text goes through ParseJson so that one nesting cap
// holds everywhere (tests/core/json_entry_test.cc fails the build's tests if a
// nlohmann parse call appears anywhere else in src/).
//
// Why a cap, and why these numbers:
//  - nlohmann parses without recursion, but dump(), operator==, and our own
//    walkers recurse once per level: ~60,000 levels (a 120 KB body) overflow
//    an 8 MiB stack and crash serve, import, mcp and the hook.
//  - SQLite's JSON functions (json_extract, json_valid; Debian 12 ships SQLite
//    3.40.1 whose JSON_MAX_DEPTH is 2000) refuse deeper text, so a value of
//    ~2,000 levels that we stored made `ls --meta`, reindex and later imports
//    fail for the whole store.
//  - Real conversations nest a dozen levels; JSON schemas in tool arguments a
//    few dozen.
// So a document (a request body, a JSONL line, an event body, an export file)
// may nest kMaxJsonDepth = 128 levels, and a value we keep inside a stored
// document (message metadata, tool arguments, edit results, session metadata)
// kMaxJsonValueDepth = 64, leaving 64 levels for the envelopes we wrap around
// it (event body, snapshot, exports) so whatever we write we can read back.
//
// The cap is applied while parsing (a SAX handler around nlohmann's DOM
// builder stops at the first level too deep): one pass, no pre-scan, and the
// partial tree is never deeper than the cap.
//
// Example:
//   ASSIGN_OR_RETURN(nlohmann::json body, ParseJson(text));
//
// Thread-safety: the functions are pure; call them from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb {

// Levels of arrays and objects a JSON document may nest ([] is 1 level).
inline constexpr int kMaxJsonDepth = 128;
// Levels a value kept inside a stored document may nest (see above).
inline constexpr int kMaxJsonValueDepth = 64;

// Parses one JSON document (surrounding whitespace allowed, nothing else).
// Returns InvalidArgument "JSON is nested deeper than N levels (at byte B);
// the limit is N" past max_depth, or InvalidArgument with nlohmann's syntax
// message (without its "[json.exception...]" tag) for malformed text.
Result<nlohmann::json> ParseJson(std::string_view text, int max_depth = kMaxJsonDepth);
// The same, keeping members in the order the text gives them.
Result<nlohmann::ordered_json> ParseOrderedJson(std::string_view text,
                                                int max_depth = kMaxJsonDepth);

// True when `s` is ParseJson's "nested deeper" error, for callers that word
// their own message for malformed text but must pass this one on.
bool IsJsonNestingError(const Status& s);

// Ok when `text` is one JSON document within max_depth, else ParseJson's
// error; builds no tree (json::accept with the cap, and the reason).
Status CheckJson(std::string_view text, int max_depth = kMaxJsonDepth);
// True when CheckJson(text, max_depth) is Ok.
bool IsJson(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace sessiondb
