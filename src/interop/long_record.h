// What bounds the memory of one long record of a JSON Lines source, for
// every importer that reads one (claude-code, codex, ac-dc, pixir): the
// import's RSS stays under 256 MiB whatever the input (docs/interop.md,
// "Memory of a long record").
//
// The store's write of a message takes about ten times its text, and
// nlohmann's parser holds a string three times while it reads it, so:
//  - a record longer than kLeanParseBytes is parsed without its strings of
//    over kLongStringBytes (ParseLean), which are decoded straight from the
//    line, and only kMaxRecordTextBytes of them (the rest is cut, with
//    kCutNote and a reason); what is left may hold kMaxLeanBytes; an
//    image whose base64 is cut keeps its descriptor instead (CutImagePart),
//    its size and type read from the string's length and head;
//  - the line is let go (JsonlReader::ReleaseLine) as soon as the importer
//    is done with its bytes, and the importer moves the tree's strings into
//    the message rather than copying them;
//  - a line longer than kWaitForWriterBytes is read only once the writer is
//    done with what came before (WaitForWriter), so the two never hold a
//    long record each.
//
// Example:
//   reader->OnLongLine(kWaitForWriterBytes, [&] { WaitForWriter(sink); });
//   ...
//   if (line.text.size() > kLeanParseBytes) {
//     Result<LongRecord> r = ParseLongRecord(line.text);
//     reader->ReleaseLine();  // line.text is gone
//     if (!r) { sink.Skip(where, "the record is left out: " + r.error().message()); ... }
//     ...  // an image's cut base64: TakeCut, then CutImagePart
//     if (!r->cut.empty()) sink.Skip(where, CutReason(r->cut.size()));
//   }
//
// Thread-safety: pure functions, but for the reader and sink they are given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interop/import_sink.h"
#include "interop/jsonl_reader.h"
#include "interop/source_scan.h"
#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb::interop {

inline constexpr size_t kLeanParseBytes = size_t{4} << 20;
inline constexpr size_t kLongStringBytes = size_t{64} << 10;
inline constexpr size_t kMaxLeanBytes = size_t{4} << 20;
inline constexpr size_t kMaxRecordTextBytes = size_t{8} << 20;
inline constexpr size_t kWaitForWriterBytes = size_t{1} << 20;
inline constexpr std::string_view kCutNote =
    "\n[... cut by the import: sessiondb keeps 8 MiB of text of one record]";

// A long record parsed: its tree and the strings of it cut to the budget.
// Their nodes stay valid while the tree is not changed (moving the tree
// keeps them: its nodes stay where they are).
// NOLINTNEXTLINE(bugprone-exception-escape): its implicit members only move a json and a vector
struct LongRecord {
  nlohmann::json tree;
  std::vector<CutString> cut;
};

// `text` (a record longer than kLeanParseBytes) parsed lean, its long
// strings put back up to kMaxRecordTextBytes. The tree does not point into
// `text`. It may be any JSON value: the caller says what it expected.
// kInvalidArgument when it is not JSON (the parser's words), when what is
// left outside its long strings is over kMaxLeanBytes, or when a long
// string is not valid JSON text.
Result<LongRecord> ParseLongRecord(std::string_view text);

// The reason a record with `cut_strings` strings cut is listed with.
std::string CutReason(size_t cut_strings);

// Takes the entry for `node` out of `cut` (a string the importer makes
// something other than a text ending in kCutNote, so CutReason does not
// count it); nullopt if `node` was not cut.
std::optional<CutString> TakeCut(std::vector<CutString>* cut, const nlohmann::json* node);

// The part for an image whose base64 was cut to the record's budget (`cut`;
// its first `prefix` bytes are a data URL's "data:image/png;base64,"): a
// descriptor without bytes (Resource::not_stored), its size the base64's
// length * 3/4 less the padding, its type and dimensions sniffed from the
// head (else `declared_mime`), and a reason that says no option raises the
// bound. nullopt, with the sink's skip naming `where`, when the head is not
// an image's.
std::optional<Part> CutImagePart(ImportSink& sink, const CutString& cut, size_t prefix,
                                 std::string_view declared_mime, std::string_view where);

// Lets the sink's writer finish what it was handed (the sink's store()
// waits for it), then gives back what long records before left free: glibc
// keeps freed blocks under 32 MiB in its heaps, so a few long records in a
// row would hold the RSS of many.
void WaitForWriter(ImportSink& sink);

}  // namespace sessiondb::interop
