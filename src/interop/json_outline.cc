#include "interop/json_outline.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/json_parse.h"

namespace sessiondb::interop {
namespace {

constexpr size_t kBlock = size_t{4} * 1024 * 1024;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The scanner's state between blocks. Depth 1 is the inside of the
// top-level object, where members are followed one by one; deeper levels
// only count brackets and skip strings, except the inside of the array
// member (depth 2 with in_array), where elements begin and end.
class Outliner {
 public:
  Outliner(std::string_view array_key, const OutlineElementFn& on_element)
      : array_key_(array_key), on_element_(on_element) {}

  // Scans `data`, which starts at byte `offset` of the file.
  Status Feed(std::string_view data, int64_t offset);
  // After the last block: the document must be complete.
  Status End(int64_t size);
  JsonOutline Take() { return std::move(outline_); }

 private:
  enum class Expect { kKey, kColon, kValue, kCommaOrEnd };

  Status Byte(char c, int64_t pos);
  Status Error(int64_t pos, const std::string& what) const {
    return Status::InvalidArgument("at byte " + std::to_string(pos) + ": " + what);
  }
  Status EmitElement(size_t drop_last);
  void CloseScalar(size_t drop_last);

  std::string_view array_key_;
  const OutlineElementFn& on_element_;
  JsonOutline outline_;

  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  bool done_ = false;  // the top-level object has closed
  Expect expect_ = Expect::kKey;
  bool capturing_key_ = false;
  std::string key_;
  bool scalar_open_ = false;  // a top-level scalar member's value
  std::string scalar_;
  bool in_array_ = false;
  bool element_open_ = false;
  int64_t element_offset_ = 0;
  std::string element_;
};

Status Outliner::Feed(std::string_view data, int64_t offset) {
  for (size_t i = 0; i < data.size(); ++i) {
    RETURN_IF_ERROR(Byte(data[i], offset + static_cast<int64_t>(i)));
  }
  return Status::Ok();
}

Status Outliner::EmitElement(size_t drop_last) {
  element_.resize(element_.size() - drop_last);
  element_open_ = false;
  ++outline_.elements;
  Status s = on_element_(element_offset_, Trim(element_));
  element_.clear();
  element_.shrink_to_fit();  // the largest element is not kept for the rest of the file
  return s;
}

void Outliner::CloseScalar(size_t drop_last) {
  scalar_.resize(scalar_.size() - drop_last);
  outline_.scalars[key_] = std::string(Trim(scalar_));
  scalar_open_ = false;
  scalar_.clear();
}

Status Outliner::Byte(char c, int64_t pos) {
  if (element_open_) element_.push_back(c);
  if (scalar_open_) scalar_.push_back(c);
  if (in_string_) {
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"') {
      in_string_ = false;
      if (capturing_key_) {
        capturing_key_ = false;
        expect_ = Expect::kColon;
      }
    } else if (capturing_key_) {
      key_.push_back(c);
    }
    return Status::Ok();
  }
  if (done_) return IsSpace(c) ? Status::Ok() : Error(pos, "something follows the document");
  if (depth_ == 0) {
    if (IsSpace(c)) return Status::Ok();
    if (c != '{') return Error(pos, "the document is not a JSON object");
    depth_ = 1;
    expect_ = Expect::kKey;
    return Status::Ok();
  }
  if (depth_ == 1) {
    if (IsSpace(c)) return Status::Ok();
    switch (expect_) {
      case Expect::kKey:
        if (c == '}' && outline_.scalars.empty() && !outline_.array_found) {
          depth_ = 0;
          done_ = true;
          return Status::Ok();
        }
        if (c != '"') return Error(pos, "a member name was expected");
        in_string_ = capturing_key_ = true;
        key_.clear();
        return Status::Ok();
      case Expect::kColon:
        if (c != ':') return Error(pos, "':' was expected after \"" + key_ + "\"");
        expect_ = Expect::kValue;
        return Status::Ok();
      case Expect::kValue:
        if (c == '{' || c == '[') {
          depth_ = 2;
          in_array_ = c == '[' && key_ == array_key_;
          outline_.array_found = outline_.array_found || in_array_;
          return Status::Ok();
        }
        if (c == ',' || c == '}' || c == ']') return Error(pos, "a value was expected");
        scalar_open_ = true;
        scalar_.assign(1, c);
        in_string_ = c == '"';
        expect_ = Expect::kCommaOrEnd;
        return Status::Ok();
      case Expect::kCommaOrEnd:
        if (c == ',' || c == '}') {
          if (scalar_open_) CloseScalar(1);
          expect_ = Expect::kKey;
          if (c == '}') {
            depth_ = 0;
            done_ = true;
          }
          return Status::Ok();
        }
        if (!scalar_open_) return Error(pos, "',' or '}' was expected");
        return Status::Ok();  // more of a number or literal
    }
  }
  if (in_array_ && depth_ == 2) {
    // Between elements of the array, or in a scalar element.
    if (element_open_ && (c == ',' || c == ']' || IsSpace(c))) RETURN_IF_ERROR(EmitElement(1));
    if (IsSpace(c) || c == ',') return Status::Ok();
    if (c == ']') {
      in_array_ = false;
      depth_ = 1;
      expect_ = Expect::kCommaOrEnd;
      return Status::Ok();
    }
    if (element_open_) return Status::Ok();  // more of a number or literal
    element_open_ = true;
    element_offset_ = pos;
    element_.assign(1, c);
    if (c == '{' || c == '[') depth_ = 3;
    if (c == '"') in_string_ = true;
    return Status::Ok();
  }
  switch (c) {
    case '"':
      in_string_ = true;
      break;
    case '{':
    case '[':
      // The same cap as ParseJson, so a document too deep to parse is refused
      // here, where it is found, before any of it is handed on.
      if (++depth_ > kMaxJsonDepth) {
        return Error(pos, "JSON is nested deeper than " + std::to_string(kMaxJsonDepth) +
                              " levels; the limit is " + std::to_string(kMaxJsonDepth));
      }
      break;
    case '}':
    case ']':
      --depth_;
      if (in_array_ && depth_ == 2 && element_open_) return EmitElement(0);
      if (depth_ == 1) expect_ = Expect::kCommaOrEnd;  // a nested member value ended
      break;
    default:
      break;
  }
  return Status::Ok();
}

Status Outliner::End(int64_t size) {
  if (!done_) return Error(size, "the file ends before the document does");
  return Status::Ok();
}

}  // namespace

Result<JsonOutline> OutlineJsonFile(const std::filesystem::path& path, std::string_view array_key,
                                    const OutlineElementFn& on_element) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) return Err(Status::Io("cannot read " + path.string() + ": " + std::strerror(errno)));
  Outliner outliner(array_key, on_element);
  std::string block(kBlock, '\0');
  int64_t offset = 0;
  while (true) {
    const size_t n = std::fread(block.data(), 1, block.size(), file.get());
    if (n == 0) {
      if (std::ferror(file.get())) {
        return Err(Status::Io("reading " + path.string() + " failed: " + std::strerror(errno)));
      }
      break;
    }
    RETURN_IF_ERROR(outliner.Feed(std::string_view(block.data(), n), offset));
    offset += static_cast<int64_t>(n);
  }
  RETURN_IF_ERROR(outliner.End(offset));
  return outliner.Take();
}

}  // namespace sessiondb::interop
