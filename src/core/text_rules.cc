#include "core/text_rules.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace sessiondb {
namespace {

bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Byte offsets where each code point of valid UTF-8 starts, plus the end.
std::vector<size_t> CodePointOffsets(std::string_view text) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) offsets.push_back(i);
  }
  offsets.push_back(text.size());
  return offsets;
}

std::string TrimRight(std::string_view text) {
  while (!text.empty() && IsSpace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

std::string StripControls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (IsSpace(c)) {
      out += ' ';
    } else if (c < 0x20 || c == 0x7F) {
      continue;
    } else if (c == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      ++i;  // U+0080..U+009F, two bytes in UTF-8
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string SanitizeTitle(std::string_view title) {
  std::string text = CollapseWhitespace(StripControls(title));
  std::vector<size_t> cps = CodePointOffsets(text);
  if (cps.size() - 1 <= kMaxTitleLength) return text;
  return TrimRight(std::string_view(text).substr(0, cps[kMaxTitleLength - 1])) +
         std::string(kEllipsis);
}

bool IsValidUtf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // Most text is ASCII: skip it eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t chunk;
      std::memcpy(&chunk, s + i, 8);
      if (chunk & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

namespace {

// The length of the well-formed sequence starting at s[i] (Unicode table
// 3-7), or of its maximal subpart, with *valid saying which.
size_t SequenceAt(const unsigned char* s, size_t n, size_t i, bool* valid) {
  const unsigned char c = s[i];
  *valid = true;
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    *valid = false;  // a continuation byte, C0, C1 or F5..FF: never a start
    return 1;
  }
  size_t k = 1;
  for (; k < len && i + k < n; ++k) {
    const unsigned char b = s[i + k];
    const bool ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
  }
  *valid = k == len;
  return k;
}

}  // namespace

bool ReplaceInvalidUtf8(std::string_view text, size_t max_bytes, std::string* out) {
  out->clear();
  if (IsValidUtf8(text)) {
    if (text.size() > max_bytes) return false;
    out->assign(text);
    return true;
  }
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  out->reserve(std::min(n + n / 8, max_bytes));
  size_t i = 0;
  while (i < n) {
    bool valid = false;
    const size_t len = SequenceAt(s, n, i, &valid);
    const std::string_view piece = valid ? text.substr(i, len) : kReplacementChar;
    if (out->size() + piece.size() > max_bytes) return false;
    out->append(piece);
    i += len;
  }
  return true;
}

std::string ToValidUtf8(std::string_view text) {
  std::string out;
  ReplaceInvalidUtf8(text, std::string::npos, &out);
  return out;
}

size_t CountCodePoints(std::string_view text) { return CodePointOffsets(text).size() - 1; }

std::string CollapseWhitespace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char ch : text) {
    if (IsSpace(static_cast<unsigned char>(ch))) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += ch;
  }
  return out;
}

std::string MakeTitle(std::string_view first_message_text) {
  std::string text = CollapseWhitespace(StripControls(first_message_text));
  if (text.empty()) return std::string(kDefaultTitle);
  std::vector<size_t> cps = CodePointOffsets(text);
  const size_t count = cps.size() - 1;
  if (count <= kMaxTitleChars) return text;

  // Keep room for the ellipsis, so the title never exceeds the limit.
  const size_t keep = kMaxTitleChars - 1;
  size_t cut = cps[keep];
  if (text[cut] != ' ') {
    size_t space = text.rfind(' ', cut);
    if (space != std::string::npos && space > 0) cut = space;
  }
  return TrimRight(std::string_view(text).substr(0, cut)) + std::string(kEllipsis);
}

std::string MakePreview(std::string_view first_user_text) {
  std::string text = CollapseWhitespace(StripControls(first_user_text));
  std::vector<size_t> cps = CodePointOffsets(text);
  if (cps.size() - 1 <= kMaxPreviewChars) return text;
  return TrimRight(std::string_view(text).substr(0, cps[kMaxPreviewChars])) +
         std::string(kEllipsis);
}

std::string FormatBytes(int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= 1024LL * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f GiB", b / (1024.0 * 1024.0 * 1024.0));
  } else if (bytes >= 1024LL * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", b / (1024.0 * 1024.0));
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld bytes", static_cast<long long>(bytes));
  }
  return buf;
}

Status ValidateSessionId(std::string_view id) {
  if (id.empty() || id.size() > kMaxSessionIdLength) {
    return Status::InvalidArgument("session id must be 1 to " +
                                   std::to_string(kMaxSessionIdLength) + " characters, got " +
                                   std::to_string(id.size()));
  }
  if (id.front() == '.') {
    return Status::InvalidArgument("session id '" + std::string(id) + "' must not start with '.'");
  }
  for (size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) {
      return Status::InvalidArgument("session id has a character that is not allowed at offset " +
                                     std::to_string(i) +
                                     "; use letters, digits, '.', '_' and '-' only");
    }
  }
  return Status::Ok();
}

void ApplyMessageText(Role role, std::string_view text, TitleAndPreview* entry) {
  if (!entry->title_fixed && !text.empty()) {
    entry->title = MakeTitle(text);
    entry->title_fixed = true;
  }
  if (entry->preview.empty() && role == Role::kUser && !text.empty()) {
    entry->preview = MakePreview(text);
  }
}

void ScrubPrunedTexts(std::span<const std::pair<Role, std::string>> pruned_texts,
                      std::string_view summary, std::string* title, std::string* preview) {
  for (const auto& [role, text] : pruned_texts) {
    if (text.empty()) continue;
    if (*title == MakeTitle(text)) *title = MakeTitle(summary);
    if (role == Role::kUser && *preview == MakePreview(text)) preview->clear();
  }
}

TitleAndPreview ForkTitleAndPreview(std::string_view parent_title, int64_t at_seq,
                                    std::string_view asked, const TitleAndPreview& derived) {
  TitleAndPreview out;
  out.preview = derived.preview;
  if (!asked.empty()) {
    out.title = asked;
    out.title_fixed = true;
  } else if (at_seq > 0) {
    // A parent's title is fixed once a message or a rename set it.
    out.title = parent_title;
    out.title_fixed = derived.title_fixed || parent_title != kDefaultTitle;
  } else {
    out.title = kDefaultTitle;
  }
  return out;
}

}  // namespace sessiondb
