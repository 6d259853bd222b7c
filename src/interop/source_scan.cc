#include "interop/source_scan.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

void SkipSpace(const char*& p, const char* end) {
  while (p < end && IsSpace(*p)) ++p;
}

// `p` is just past an opening quote; leaves it just past the closing one.
bool SkipString(const char*& p, const char* end) {
  while (p < end) {
    const void* q = std::memchr(p, '"', static_cast<size_t>(end - p));
    if (!q) return false;
    const char* quote = static_cast<const char*>(q);
    size_t backslashes = 0;
    for (const char* b = quote; b > p && b[-1] == '\\'; --b) ++backslashes;
    p = quote + 1;
    if (backslashes % 2 == 0) return true;
  }
  return false;
}

// Skips one value starting at `p` (no leading space).
bool SkipValue(const char*& p, const char* end) {
  if (p >= end) return false;
  if (*p == '"') {
    ++p;
    return SkipString(p, end);
  }
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < end) {
      const char c = *p++;
      if (c == '"') {
        if (!SkipString(p, end)) return false;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return true;
      }
    }
    return false;
  }
  const char* start = p;
  while (p < end && *p != ',' && *p != '}' && *p != ']' && !IsSpace(*p)) ++p;
  return p > start;
}

// Walks the items of the object or array `text` (opened by `open`, closed
// by `close`, items apart by commas); `item` reads one from `p`, just past
// any space, and says whether it was well formed.
bool ForEachItem(std::string_view text, char open, char close,
                 const std::function<bool(const char*& p, const char* end)>& item) {
  const char* p = text.data();
  const char* end = p + text.size();
  SkipSpace(p, end);
  if (p >= end || *p != open) return false;
  ++p;
  SkipSpace(p, end);
  if (p < end && *p == close) {
    ++p;
  } else {
    while (true) {
      SkipSpace(p, end);
      if (!item(p, end)) return false;
      SkipSpace(p, end);
      if (p >= end) return false;
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p != close) return false;
      ++p;
      break;
    }
  }
  SkipSpace(p, end);
  return p == end;
}

}  // namespace

std::string PeekFile(const fs::path& path, size_t n) {
  if (!MayRead(path)) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string buf(n, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(n));
  buf.resize(static_cast<size_t>(in.gcount()));
  return buf;
}

std::vector<fs::path> FilesUnder(const fs::path& root,
                                 const std::function<bool(const fs::path&)>& keep,
                                 std::vector<fs::path>* unlisted) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) {
    if (keep(root) && MayRead(root)) out.push_back(root);
    return out;
  }
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && keep(it->path()) && MayRead(it->path())) {
      out.push_back(it->path());
    } else if (std::error_code kind;
               unlisted != nullptr && !it->is_symlink(kind) && it->is_directory(kind) &&
               faccessat(AT_FDCWD, it->path().c_str(), R_OK | X_OK, AT_EACCESS) != 0 &&
               (errno == EACCES || errno == EPERM)) {
      unlisted->push_back(it->path());  // the iterator passes over it
    }
  }
  std::sort(out.begin(), out.end());
  if (unlisted != nullptr) std::sort(unlisted->begin(), unlisted->end());
  return out;
}

std::optional<std::string> UnreadableReason(const fs::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0) {
    close(fd);
    return std::nullopt;
  }
  if (errno == EACCES || errno == EPERM) return "permission denied";
  std::string words = std::strerror(errno);
  if (!words.empty())
    words[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(words[0])));
  return words;
}

std::vector<int64_t> FileSizes(const std::vector<fs::path>& files) {
  std::vector<int64_t> sizes;
  sizes.reserve(files.size());
  for (const fs::path& f : files) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    sizes.push_back(ec ? 0 : static_cast<int64_t>(size));
  }
  return sizes;
}

bool ForEachMember(std::string_view text,
                   const std::function<void(std::string_view key, std::string_view value)>& fn) {
  return ForEachItem(text, '{', '}', [&fn](const char*& p, const char* end) {
    if (p >= end || *p != '"') return false;
    const char* key_start = ++p;
    if (!SkipString(p, end)) return false;
    const std::string_view key(key_start, static_cast<size_t>(p - 1 - key_start));
    SkipSpace(p, end);
    if (p >= end || *p != ':') return false;
    ++p;
    SkipSpace(p, end);
    const char* value_start = p;
    if (!SkipValue(p, end)) return false;
    fn(key, std::string_view(value_start, static_cast<size_t>(p - value_start)));
    return true;
  });
}

bool ForEachElement(std::string_view text, const std::function<void(std::string_view value)>& fn) {
  return ForEachItem(text, '[', ']', [&fn](const char*& p, const char* end) {
    const char* value_start = p;
    if (!SkipValue(p, end)) return false;
    fn(std::string_view(value_start, static_cast<size_t>(p - value_start)));
    return true;
  });
}

bool ScanTopLevel(std::string_view text, std::initializer_list<std::string_view> keys,
                  ScannedValue* out) {
  for (size_t i = 0; i < keys.size(); ++i) out[i] = ScannedValue{};
  return ForEachMember(text, [&](std::string_view key, std::string_view value) {
    size_t i = 0;
    for (std::string_view k : keys) {
      if (k == key && !out[i].found) {
        out[i].found = true;
        out[i].is_string = value.front() == '"';
        out[i].raw = out[i].is_string ? value.substr(1, value.size() - 2) : value;
      }
      ++i;
    }
  });
}

std::optional<std::string> ScannedString(const ScannedValue& v) {
  if (!v.found || !v.is_string) return std::nullopt;
  std::string quoted;
  quoted.reserve(v.raw.size() + 2);
  quoted.append(1, '"').append(v.raw).append(1, '"');
  Result<nlohmann::json> parsed = ParseJson(quoted);
  if (!parsed || !parsed->is_string()) return std::nullopt;
  return parsed->get<std::string>();
}

}  // namespace sessiondb::interop

namespace sessiondb::interop {
namespace {

// How a long string stands in the lean text: a control character no real
// string begins with, and its index.
constexpr std::string_view kLongMark = "\x01sessiondb:long-string:";

// The index of the quote that closes the string whose text starts at `from`
// (just past its opening quote), or npos.
size_t ClosingQuote(std::string_view text, size_t from) {
  while (true) {
    const size_t q = text.find('"', from);
    if (q == std::string_view::npos) return q;
    size_t backslashes = 0;
    for (size_t b = q; b > from && text[b - 1] == '\\'; --b) ++backslashes;
    if (backslashes % 2 == 0) return q;
    from = q + 1;
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of the four hex digits at raw[at], or -1.
int32_t Hex4(std::string_view raw, size_t at) {
  if (at + 4 > raw.size()) return -1;
  int32_t v = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const int d = HexDigit(raw[i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes the text of a JSON string (between its quotes, valid UTF-8) into
// *out, keeping at most `max` bytes of whole characters (*cut says it
// stopped short), and checks all of it: false for a bad escape, a lone
// surrogate or a control character, as the parser would refuse. *whole gets
// the length, head and tail of all of it.
bool DecodeJsonString(std::string_view raw, size_t max, std::string* out, bool* cut,
                      CutString* whole) {
  out->clear();
  out->reserve(std::min(raw.size(), max));
  *cut = false;
  whole->bytes = 0;
  whole->head.clear();
  whole->tail.clear();
  std::string one;  // an escape's character
  auto put = [&](std::string_view bytes) {
    whole->bytes += bytes.size();
    if (whole->head.size() < CutString::kHeadBytes) {
      whole->head.append(bytes.substr(0, CutString::kHeadBytes - whole->head.size()));
    }
    if (bytes.size() >= CutString::kTailBytes) {
      whole->tail.assign(bytes.substr(bytes.size() - CutString::kTailBytes));
    } else {
      whole->tail.append(bytes);
      if (whole->tail.size() > CutString::kTailBytes) {
        whole->tail.erase(0, whole->tail.size() - CutString::kTailBytes);
      }
    }
    if (*cut) return;
    if (out->size() + bytes.size() <= max) {
      out->append(bytes);
      return;
    }
    size_t n = max - out->size();
    while (n > 0 && (static_cast<unsigned char>(bytes[n]) & 0xC0) == 0x80) --n;
    out->append(bytes.substr(0, n));
    *cut = true;
  };
  size_t i = 0;
  while (i < raw.size()) {
    size_t j = i;
    while (j < raw.size() && raw[j] != '\\' && static_cast<unsigned char>(raw[j]) >= 0x20) ++j;
    if (j > i) put(raw.substr(i, j - i));
    if (j == raw.size()) break;
    if (raw[j] != '\\' || j + 1 >= raw.size()) return false;  // a control character
    one.clear();
    i = j + 2;
    switch (raw[j + 1]) {
      case '"':
        one = "\"";
        break;
      case '\\':
        one = "\\";
        break;
      case '/':
        one = "/";
        break;
      case 'b':
        one = "\b";
        break;
      case 'f':
        one = "\f";
        break;
      case 'n':
        one = "\n";
        break;
      case 'r':
        one = "\r";
        break;
      case 't':
        one = "\t";
        break;
      case 'u': {
        const int32_t unit = Hex4(raw, j + 2);
        if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;
        uint32_t cp = static_cast<uint32_t>(unit);
        i = j + 6;
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          if (i + 6 > raw.size() || raw[i] != '\\' || raw[i + 1] != 'u') return false;
          const int32_t low = Hex4(raw, i + 2);
          if (low < 0xDC00 || low > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + static_cast<uint32_t>(low - 0xDC00);
          i += 6;
        }
        AppendCodePoint(cp, &one);
        break;
      }
      default:
        return false;
    }
    put(one);
  }
  return true;
}

// Walks `v` in document order, putting each long string back.
Status Inflate(nlohmann::json& v, const std::vector<std::string_view>& longs, size_t* budget,
               std::string_view cut_note, std::vector<CutString>* cut) {
  if (v.is_object() || v.is_array()) {
    for (nlohmann::json& child : v) RETURN_IF_ERROR(Inflate(child, longs, budget, cut_note, cut));
    return Status::Ok();
  }
  if (!v.is_string()) return Status::Ok();
  const std::string& s = v.get_ref<const std::string&>();
  if (!s.starts_with(kLongMark)) return Status::Ok();
  size_t index = 0;
  for (char c : std::string_view(s).substr(kLongMark.size())) {
    if (c < '0' || c > '9') return Status::Ok();
    index = index * 10 + static_cast<size_t>(c - '0');
  }
  if (index >= longs.size()) return Status::Ok();
  std::string text;
  bool was_cut = false;
  CutString whole;
  if (!DecodeJsonString(longs[index], *budget, &text, &was_cut, &whole)) {
    return Status::InvalidArgument("a string of " + std::to_string(longs[index].size()) +
                                   " bytes is not valid JSON text (a bad escape, a lone "
                                   "surrogate or a control character)");
  }
  // Once one is cut, those after it keep nothing: no slivers.
  *budget = was_cut ? 0 : *budget - text.size();
  if (was_cut) {
    text += cut_note;
    whole.node = &v;
    cut->push_back(std::move(whole));
  }
  v = std::move(text);
  return Status::Ok();
}

}  // namespace

Result<LeanDocument> ParseLean(std::string_view text, size_t min_long, size_t max_lean) {
  if (!IsValidUtf8(text)) return Err(Status::InvalidArgument("the text is not UTF-8"));
  LeanDocument doc;
  std::string lean;
  size_t copied = 0;
  for (size_t open = text.find('"'); open != std::string_view::npos;) {
    const size_t close = ClosingQuote(text, open + 1);
    if (close == std::string_view::npos) break;  // the parser says the string is not closed
    if (close - open - 1 > min_long) {
      lean.append(text.substr(copied, open - copied));
      lean += "\"\\u0001";
      lean.append(kLongMark.substr(1));
      lean += std::to_string(doc.long_strings.size());
      lean += '"';
      doc.long_strings.push_back(text.substr(open + 1, close - open - 1));
      copied = close + 1;
    }
    open = text.find('"', close + 1);
  }
  lean.append(text.substr(copied));
  if (lean.size() > max_lean) {
    // Many small values: a tree of them takes ten times their text.
    return Err(Status::InvalidArgument("outside its strings of over " + std::to_string(min_long) +
                                       " bytes the JSON is " + std::to_string(lean.size()) +
                                       " bytes; the limit is " + std::to_string(max_lean)));
  }
  ASSIGN_OR_RETURN(doc.tree, ParseJson(lean));
  return doc;
}

Status InflateLongStrings(LeanDocument* doc, size_t budget, std::string_view cut_note,
                          std::vector<CutString>* cut) {
  return Inflate(doc->tree, doc->long_strings, &budget, cut_note, cut);
}

}  // namespace sessiondb::interop
