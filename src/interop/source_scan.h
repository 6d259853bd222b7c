// Small helpers the importers of agent logs share: finding the files of a
// tree, peeking at a file's first bytes, and a fast scan of a JSON object's
// top-level members that pulls out a few of them without building a DOM (the
// first pass over a multi-gigabyte transcript only needs ids).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb::interop {

// Up to `n` bytes from the start of the file at `path` ("" if unreadable).
std::string PeekFile(const std::filesystem::path& path, size_t n = 4096);

// The regular files under `root` (recursively) for which `keep` is true,
// sorted by path so imports run in the same order every time. The folders
// under `root` this process may not list are passed over; when `unlisted`
// is given, they are added to it (sorted).
std::vector<std::filesystem::path> FilesUnder(
    const std::filesystem::path& root,
    const std::function<bool(const std::filesystem::path&)>& keep,
    std::vector<std::filesystem::path>* unlisted = nullptr);

// Why the file at `path` cannot be opened for reading: "permission denied",
// else the system's words ("input/output error"); nullopt when it can. For a
// folder import, which leaves such a file out and goes on.
std::optional<std::string> UnreadableReason(const std::filesystem::path& path);

// The size in bytes of each file (0 for one that cannot be read), to weigh
// each file's share of an import's progress.
std::vector<int64_t> FileSizes(const std::vector<std::filesystem::path>& files);

// One top-level member found by ScanTopLevel: the raw text of its value.
// For a string, the characters between the quotes, escapes left as they are;
// for anything else, the literal text ("null", "true", "12", "{...}").
struct ScannedValue {
  bool found = false;
  bool is_string = false;
  std::string_view raw;
  bool is_null() const { return found && !is_string && raw == "null"; }
};

// The text of a scanned string member with its escapes decoded, or nullopt
// when it is not a string or is not valid JSON text (a stray control
// character, a lone surrogate, bytes that are not UTF-8). A value kept from a
// scan goes through here: `raw` is unchecked bytes, good only for matching.
std::optional<std::string> ScannedString(const ScannedValue& v);

// Scans the JSON object `text` and fills `out[i]` for the member named
// `keys[i]` (the first occurrence). False if `text` is not a well-formed
// object at the level this checks (balanced brackets, closed strings, nothing
// after the object); values it does not capture are skipped, not validated.
bool ScanTopLevel(std::string_view text, std::initializer_list<std::string_view> keys,
                  ScannedValue* out);

// Calls `fn` with each member of the JSON object `text`: its name as written
// (escapes left as they are) and the whole text of its value (a string with
// its quotes). The same checks as ScanTopLevel; false if they fail, after
// the members before the fault were handed over.
bool ForEachMember(std::string_view text,
                   const std::function<void(std::string_view key, std::string_view value)>& fn);

// The same for each element of the JSON array `text`.
bool ForEachElement(std::string_view text, const std::function<void(std::string_view value)>& fn);

// A JSON document parsed without its long strings. nlohmann's parser holds a
// string three times while it reads it (its token, the raw characters kept
// for error messages, the tree's copy), so a record of tens of MiB cost six
// times its size; here each string value longer than a threshold is cut out
// of the text before parsing and stands in the tree as a mark, to be decoded
// straight from the text (once, and only as much of it as a caller keeps)
// by InflateLongStrings.
// NOLINTNEXTLINE(bugprone-exception-escape): its implicit members only move a json and a vector
struct LeanDocument {
  nlohmann::json tree;
  std::vector<std::string_view> long_strings;  // raw, escapes kept; views into the text
};

// Parses `text` (valid UTF-8; through ParseJson, with its nesting cap and
// errors) with every string longer than `min_long` bytes between its quotes
// taken out. kInvalidArgument when what is left is over `max_lean` bytes (a
// tree of many small values takes ten times their text). The views in the
// result point into `text`.
Result<LeanDocument> ParseLean(std::string_view text, size_t min_long, size_t max_lean);

// A long string InflateLongStrings cut: where it stands in the tree, and
// what a caller may still want to know of the whole of it without holding
// it (the size and type of an image whose base64 it was).
struct CutString {
  inline static constexpr size_t kHeadBytes = 4096;
  inline static constexpr size_t kTailBytes = 4;

  const nlohmann::json* node = nullptr;  // stays valid until the tree changes
  size_t bytes = 0;                      // its whole length, decoded
  std::string head;                      // its first kHeadBytes bytes, decoded
  std::string tail;                      // its last kTailBytes bytes, decoded
};

// Puts the long strings of `doc` back into its tree, in document order,
// decoded, while their total stays within `budget` bytes; the string that
// passes it is cut at a character boundary and ends with `cut_note`, those
// after it keep only the note, and each one cut is added to *cut with its
// length, head and tail (measured while it is checked, never held whole).
// kInvalidArgument, like the parser, for a long string that is not valid
// JSON text (a bad escape, a lone surrogate, a control character).
Status InflateLongStrings(LeanDocument* doc, size_t budget, std::string_view cut_note,
                          std::vector<CutString>* cut);

}  // namespace sessiondb::interop
