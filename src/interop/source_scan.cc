#include "interop/source_scan.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/json_parse.h"
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
                                 const std::function<bool(const fs::path&)>& keep) {
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
    }
  }
  std::sort(out.begin(), out.end());
  return out;
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
