// JsonlReader: reads a JSON Lines file a line at a time, in memory bounded by
// the longest line it accepts, whatever the file's size. Lines longer than
// the limit are skipped whole (flagged too_long, never held in memory); a
// last line with no newline is flagged at_eof_without_newline, so a caller
// can tell a truncated final record from a complete one.
// Thread-safety: one reader per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::interop {

inline constexpr size_t kMaxLineBytes = size_t{64} * 1024 * 1024;

class JsonlReader {
 public:
  struct Line {
    int64_t number = 0;            // 1-based
    std::string_view text;         // without the newline; valid until the next call
    bool too_long = false;         // longer than the limit: text is empty
    bool at_eof_without_newline = false;
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

  int64_t bytes_read() const { return consumed_; }
  int64_t total_bytes() const { return total_; }

 private:
  JsonlReader(std::FILE* file, int64_t total, size_t max_line);
  // Refills the buffer; false at end of file.
  Result<bool> Fill();

  std::FILE* file_;
  const int64_t total_;
  const size_t max_line_;
  std::string buffer_;
  size_t begin_ = 0;  // unread data is buffer_[begin_, end_)
  size_t end_ = 0;
  int64_t consumed_ = 0;
  int64_t line_number_ = 0;
  std::string line_;  // the current line when it spans refills
};

}  // namespace sessiondb::interop
