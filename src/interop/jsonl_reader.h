// JsonlReader: reads a JSON Lines file a line at a time, in memory bounded by
// the longest line it accepts, whatever the file's size. Lines longer than
// the limit are skipped whole (flagged too_long, never held in memory); a
// last line with no newline is flagged at_eof_without_newline, so a caller
// can tell a truncated final record from a complete one.
//
// What every JSON Lines importer would otherwise get wrong on its own: a
// UTF-8 byte-order mark before the first line is not part of it, and a line
// holding bytes that are not UTF-8 is handed over with each ill-formed
// sequence replaced by U+FFFD (flagged repaired_utf8), so one bad byte costs
// a character, not a record, and the text may go into a JSON tree (whose
// dump() throws on invalid UTF-8). ReadAt reads a line again by where Next
// found it, cleaned the same way, for importers that make two passes.
//
// Example:
//   ASSIGN_OR_RETURN(auto reader, JsonlReader::Open(path));
//   JsonlReader::Line line;
//   while (true) {
//     ASSIGN_OR_RETURN(bool more, reader->Next(&line));
//     if (!more) break;
//     if (line.too_long) { sink.Skip(...); continue; }
//     if (auto why = JsonLineProblem(line)) { sink.Skip(where, *why); continue; }
//     ...
//   }
//
// Thread-safety: one reader per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::interop {

inline constexpr size_t kMaxLineBytes = size_t{64} * 1024 * 1024;

class JsonlReader {
 public:
  struct Line {
    int64_t number = 0;     // 1-based
    std::string_view text;  // without the newline (and a BOM on line 1), ill-formed
                            // UTF-8 replaced; valid until the next call
    bool too_long = false;  // longer than the limit (raw, or once repaired): text is empty
    bool at_eof_without_newline = false;
    bool repaired_utf8 = false;  // some bytes were not UTF-8 and are U+FFFD in text
    int64_t offset = 0;          // of the line's first byte in the file (past a BOM)
    int64_t raw_size = 0;        // its bytes in the file, without "\r\n" or "\n"
  };

  // kNotFound / kIo naming the path.
  static Result<std::unique_ptr<JsonlReader>> Open(const std::string& path,
                                                   size_t max_line = kMaxLineBytes);
  ~JsonlReader();
  JsonlReader(const JsonlReader&) = delete;
  JsonlReader& operator=(const JsonlReader&) = delete;

  // The next line into *line; false at the end of the file. Blank lines are
  // passed on (text empty). kIo if reading fails.
  Result<bool> Next(Line* line);

  // The line Next found at `offset` with `raw_size` bytes, read again and
  // cleaned the same way; valid until the next call of Next or ReadAt. Does
  // not move Next's place in the file. kIo if it cannot be read whole (the
  // file shrank), kInvalidArgument if it is now over the limit.
  Result<std::string_view> ReadAt(int64_t offset, int64_t raw_size);

  // Frees the memory of the line last handed out (its text becomes
  // invalid), for a caller done with a long line before it reads the next.
  void ReleaseLine();

  // Calls `hook` (once per line) before Next holds more than `threshold`
  // bytes of one line: an importer whose writer runs beside it waits there,
  // so the two never hold a long record each (interop/claude_code.cc).
  void OnLongLine(size_t threshold, std::function<void()> hook) {
    long_line_bytes_ = threshold;
    long_line_hook_ = std::move(hook);
  }

  int64_t bytes_read() const { return consumed_; }
  int64_t total_bytes() const { return total_; }

 private:
  JsonlReader(std::FILE* file, std::string path, int64_t total, size_t max_line);
  // Refills the buffer; false at end of file.
  Result<bool> Fill();
  // Fills *line with `text` as it lies in the file, starting at `offset`:
  // strips a line-1 BOM and the "\r" of "\r\n", repairs UTF-8.
  void Finish(std::string_view text, int64_t offset, bool too_long, bool at_eof, Line* line);

  std::FILE* file_;
  const std::string path_;
  const int64_t total_;
  const size_t max_line_;
  std::string buffer_;
  size_t begin_ = 0;  // unread data is buffer_[begin_, end_)
  size_t end_ = 0;
  int64_t consumed_ = 0;
  int64_t line_number_ = 0;
  std::string line_;      // the current line when it spans refills, or ReadAt's bytes
  std::string repaired_;  // the current line with U+FFFD for ill-formed UTF-8
  size_t long_line_bytes_ = 0;
  std::function<void()> long_line_hook_;
};

// Why the text of `line` is not one JSON object, in words fit for a skip
// reason ("the line is not valid JSON: syntax error ... at byte 17", "the
// last line is cut short (no newline, not whole JSON)", "the line is JSON
// but an array, not an object", or ParseJson's nesting error), or nullopt
// when it is one. Parses the line; call it for lines a scan refused, or
// instead of parsing when the tree is not needed.
std::optional<std::string> JsonLineProblem(std::string_view text, bool at_eof_without_newline);
inline std::optional<std::string> JsonLineProblem(const JsonlReader::Line& line) {
  return JsonLineProblem(line.text, line.at_eof_without_newline);
}

// "an array", "a string", "a number", "true or false", "null", "an object":
// the kind of a JSON value, for reasons that say what was found instead.
// `kind` is nlohmann's type name ("array", "string", "number", "boolean",
// "null", "object").
std::string JsonKindPhrase(std::string_view kind);

}  // namespace sessiondb::interop
