#include "interop/jsonl_reader.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {
constexpr size_t kBlock = 4 * 1024 * 1024;
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
      new JsonlReader(f, ec ? 0 : static_cast<int64_t>(size), max_line));
}

JsonlReader::JsonlReader(std::FILE* file, int64_t total, size_t max_line)
    : file_(file), total_(total), max_line_(max_line) {
  buffer_.resize(kBlock);
}

JsonlReader::~JsonlReader() { std::fclose(file_); }

Result<bool> JsonlReader::Fill() {
  begin_ = 0;
  end_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
  if (end_ == 0) {
    if (std::ferror(file_)) return Err(Status::Io(std::string("read failed: ") + std::strerror(errno)));
    return false;
  }
  return true;
}

Result<bool> JsonlReader::Next(Line* line) {
  line_.clear();
  bool too_long = false;
  bool any = false;
  while (true) {
    if (begin_ == end_) {
      ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) {
        if (!any) return false;
        *line = {++line_number_, too_long ? std::string_view() : std::string_view(line_),
                 too_long, true};
        return true;
      }
    }
    any = true;
    const char* start = buffer_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    const size_t take = nl ? static_cast<const char*>(nl) - start : end_ - begin_;
    consumed_ += static_cast<int64_t>(take + (nl ? 1 : 0));
    if (!too_long) {
      if (line_.size() + take > max_line_) {
        too_long = true;
        line_.clear();
        line_.shrink_to_fit();
      } else if (nl && line_.empty()) {
        // The whole line is in the buffer: hand it out without a copy.
        begin_ += take + 1;
        std::string_view text(start, take);
        if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
        *line = {++line_number_, text, false, false};
        return true;
      } else {
        line_.append(start, take);
      }
    }
    begin_ += take + (nl ? 1 : 0);
    if (nl) {
      std::string_view text = too_long ? std::string_view() : std::string_view(line_);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      *line = {++line_number_, text, too_long, false};
      return true;
    }
  }
}

}  // namespace sessiondb::interop
