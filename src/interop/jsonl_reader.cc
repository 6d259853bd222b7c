#include "interop/jsonl_reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

constexpr size_t kBlock = size_t{4} * 1024 * 1024;
constexpr std::string_view kBom = "\xEF\xBB\xBF";
// A parser's message quotes what it last read, which for a broken string is
// the rest of the line: a reason keeps this much of it.
constexpr size_t kMaxReasonBytes = 300;

// `text` cut to at most `max` bytes at a character boundary, "…" marking the cut.
std::string Clip(std::string_view text, size_t max) {
  if (text.size() <= max) return ToValidUtf8(text);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return ToValidUtf8(text.substr(0, end)) + std::string(kEllipsis);
}

// Whether the parser's message `why` about `size` bytes puts the fault past
// the last byte: the text stops inside a value (an interrupted write), not
// at a wrong character ("parse error at line 1, column 61: ...").
bool FailsAtItsEnd(const std::string& why, size_t size) {
  if (why.find("unexpected end of input") != std::string::npos) return true;
  const size_t at = why.find("column ");
  if (at == std::string::npos) return false;
  size_t column = 0;
  for (size_t i = at + 7; i < why.size() && why[i] >= '0' && why[i] <= '9'; ++i) {
    column = column * 10 + static_cast<size_t>(why[i] - '0');
  }
  return column > size;
}

}  // namespace

Result<std::unique_ptr<JsonlReader>> JsonlReader::Open(const std::string& path, size_t max_line) {
  if (!MayRead(path)) return Err(Status::InvalidArgument(OutsideReason(path)));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    if (errno == ENOENT) return Err(Status::NotFound("no file " + path));
    return Err(Status::Io("cannot open " + path + ": " + std::strerror(errno)));
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return std::unique_ptr<JsonlReader>(
      new JsonlReader(f, path, ec ? 0 : static_cast<int64_t>(size), max_line));
}

JsonlReader::JsonlReader(std::FILE* file, std::string path, int64_t total, size_t max_line)
    : file_(file), path_(std::move(path)), total_(total), max_line_(max_line) {
  buffer_.resize(kBlock);
}

JsonlReader::~JsonlReader() { std::fclose(file_); }

Result<bool> JsonlReader::Fill() {
  begin_ = 0;
  end_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
  if (end_ == 0) {
    if (std::ferror(file_))
      return Err(Status::Io(std::string("read failed: ") + std::strerror(errno)));
    return false;
  }
  return true;
}

void JsonlReader::Finish(std::string_view text, int64_t offset, bool too_long, bool at_eof,
                         Line* line) {
  if (offset == 0 && text.starts_with(kBom)) {
    // A byte-order mark some editors put before the first line.
    text.remove_prefix(kBom.size());
    offset += static_cast<int64_t>(kBom.size());
  }
  const int64_t raw_size = static_cast<int64_t>(text.size());
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  bool repaired = false;
  if (!too_long && !IsValidUtf8(text)) {
    // A byte may become three; past the limit the line is too long after all.
    repaired = true;
    if (ReplaceInvalidUtf8(text, max_line_, &repaired_)) {
      text = repaired_;
    } else {
      too_long = true;
    }
  }
  if (too_long) text = {};
  *line = {++line_number_, text, too_long, at_eof, repaired, offset, raw_size};
}

Result<bool> JsonlReader::Next(Line* line) {
  // A long line's buffer is not kept for the short ones after it.
  if (line_.capacity() > kBlock) std::string().swap(line_);
  if (repaired_.capacity() > kBlock) std::string().swap(repaired_);
  line_.clear();
  bool too_long = false;
  bool any = false;
  const int64_t start = consumed_;
  while (true) {
    if (begin_ == end_) {
      ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) {
        if (!any) return false;
        Finish(line_, start, too_long, /*at_eof=*/true, line);
        return true;
      }
    }
    any = true;
    const char* begin = buffer_.data() + begin_;
    const void* nl = std::memchr(begin, '\n', end_ - begin_);
    const size_t take = nl ? static_cast<const char*>(nl) - begin : end_ - begin_;
    consumed_ += static_cast<int64_t>(take + (nl ? 1 : 0));
    if (!too_long) {
      if (line_.size() + take > max_line_) {
        too_long = true;
        std::string().swap(line_);
      } else if (nl && line_.empty()) {
        // The whole line is in the buffer: hand it out without a copy.
        begin_ += take + 1;
        Finish(std::string_view(begin, take), start, false, false, line);
        return true;
      } else {
        if (long_line_hook_ && line_.size() <= long_line_bytes_ &&
            line_.size() + take > long_line_bytes_) {
          long_line_hook_();
        }
        line_.append(begin, take);
      }
    }
    begin_ += take + (nl ? 1 : 0);
    if (nl) {
      Finish(line_, start, too_long, false, line);
      return true;
    }
  }
}

void JsonlReader::ReleaseLine() {
  std::string().swap(line_);
  std::string().swap(repaired_);
}

Result<std::string_view> JsonlReader::ReadAt(int64_t offset, int64_t raw_size) {
  if (raw_size < 0 || static_cast<size_t>(raw_size) > max_line_) {
    return Err(Status::InvalidArgument("the line is longer than the limit of " +
                                       std::to_string(max_line_) + " bytes"));
  }
  if (line_.capacity() > kBlock) std::string().swap(line_);
  if (repaired_.capacity() > kBlock) std::string().swap(repaired_);
  line_.resize(static_cast<size_t>(raw_size));
  size_t got = 0;
  while (got < line_.size()) {
    // pread leaves the stream's own position (Next's place) alone.
    const ssize_t n = ::pread(fileno(file_), line_.data() + got, line_.size() - got,
                              static_cast<off_t>(offset + static_cast<int64_t>(got)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Err(Status::Io("cannot read " + path_ + " again at byte " + std::to_string(offset) +
                            (n < 0 ? std::string(": ") + std::strerror(errno) : ": it shrank")));
    }
    got += static_cast<size_t>(n);
  }
  std::string_view text = line_;
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (IsValidUtf8(text)) return text;
  if (!ReplaceInvalidUtf8(text, max_line_, &repaired_)) {
    return Err(Status::InvalidArgument("the line is longer than the limit of " +
                                       std::to_string(max_line_) +
                                       " bytes once its invalid UTF-8 is replaced"));
  }
  return std::string_view(repaired_);
}

std::optional<std::string> JsonLineProblem(std::string_view text, bool at_eof_without_newline) {
  Result<nlohmann::json> parsed = ParseJson(text);
  if (parsed) {
    if (parsed->is_object()) return std::nullopt;
    return "the line is JSON but " + JsonKindPhrase(parsed->type_name()) + ", not an object";
  }
  const std::string& why = parsed.error().message();
  if (IsJsonNestingError(parsed.error())) return why;
  if (at_eof_without_newline && FailsAtItsEnd(why, text.size())) {
    return "the last line is cut short (no newline, not whole JSON): " + Clip(why, kMaxReasonBytes);
  }
  return "the line is not valid JSON: " + Clip(why, kMaxReasonBytes);
}

std::string JsonKindPhrase(std::string_view kind) {
  if (kind == "array") return "an array";
  if (kind == "object") return "an object";
  if (kind == "boolean") return "true or false";
  if (kind == "null") return "null";
  return "a " + std::string(kind);  // a string, a number
}

}  // namespace sessiondb::interop
