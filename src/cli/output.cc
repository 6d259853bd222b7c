#include "cli/output.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <utility>

#include "core/text_rules.h"

namespace sessiondb::cli {

namespace {

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for stray bytes).
size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

// The code point of the valid UTF-8 sequence at the start of `text` and its
// length, or length 0 when the bytes there are not valid UTF-8.
std::pair<uint32_t, size_t> DecodeOne(std::string_view text) {
  const auto lead = static_cast<unsigned char>(text[0]);
  if (lead < 0x80) return {lead, 1};
  size_t len = 0;
  uint32_t cp = 0;
  if ((lead & 0xE0) == 0xC0) {
    len = 2;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    len = 3;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    len = 4;
    cp = lead & 0x07;
  } else {
    return {0, 0};
  }
  if (text.size() < len) return {0, 0};
  for (size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(text[k]);
    if ((c & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr uint32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {cp, len};
}

// The columns a terminal gives code point `cp`: 2 for East Asian wide and
// full-width characters and the emoji blocks, 0 for combining marks,
// zero-width characters and variation selectors, else 1. A table of the
// common ranges, not all of Unicode's East_Asian_Width property.
size_t ColumnsOf(uint32_t cp) {
  if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) ||
      (cp >= 0xFE00 && cp <= 0xFE0F)) {
    return 0;
  }
  static constexpr std::pair<uint32_t, uint32_t> kWide[] = {
      {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF}, {0x3400, 0x4DBF},
      {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
      {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
      {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
  };
  for (const auto& [first, last] : kWide) {
    if (cp >= first && cp <= last) return 2;
  }
  return 1;
}

// The columns `text` takes on a terminal (see ColumnsOf), a byte that is
// not part of valid UTF-8 counting as one.
size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size();) {
    const std::pair<uint32_t, size_t> one = DecodeOne(text.substr(i));
    width += one.second == 0 ? 1 : ColumnsOf(one.first);
    i += one.second == 0 ? 1 : one.second;
  }
  return width;
}

bool IsHiddenFormatCharacter(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// Bytes at the end of `text` that may begin a UTF-8 sequence still to come.
size_t IncompleteTail(std::string_view text) {
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    if (c < 0xC0) return 0;
    const size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    return want > back ? back : 0;
  }
  return 0;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
      ++i;
      continue;
    }
    const auto [cp, len] = DecodeOne(text.substr(i));
    if (len == 0) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
      ++i;
    } else if (IsHiddenFormatCharacter(cp)) {
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
      i += len;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

// A stream buffer that escapes what passes through it on its way to `out`.
// It holds text until a newline (or a flush), and never cuts a UTF-8
// sequence or a CR LF pair in two, so escaping sees whole characters.
class TerminalGuard::EscapingBuffer : public std::streambuf {
 public:
  EscapingBuffer(std::streambuf* out, std::function<bool()> raw)
      : out_(out), raw_(std::move(raw)) {}
  // Writes everything held, even an incomplete sequence (escaped).
  bool Finish() { return Drain(/*all=*/true) && out_->pubsync() == 0; }

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    pending_ += traits_type::to_char_type(ch);
    if (ch == '\n' && !Drain(false)) return traits_type::eof();
    return ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    if (std::string_view(s, static_cast<size_t>(n)).find('\n') != std::string_view::npos ||
        pending_.size() >= 4096) {
      if (!Drain(false)) return 0;
    }
    return n;
  }
  int sync() override { return Drain(false) && out_->pubsync() == 0 ? 0 : -1; }

 private:
  bool Drain(bool all) {
    size_t keep = 0;
    const bool raw = raw_();
    if (!all && !raw) {
      keep = IncompleteTail(pending_);
      if (keep == 0 && !pending_.empty() && pending_.back() == '\r') keep = 1;
    }
    const std::string_view ready = std::string_view(pending_).substr(0, pending_.size() - keep);
    const std::string text = raw ? std::string(ready) : EscapeForTerminal(ready);
    const auto size = static_cast<std::streamsize>(text.size());
    const bool written = out_->sputn(text.data(), size) == size;
    pending_.erase(0, pending_.size() - keep);
    return written;
  }

  std::streambuf* out_;
  std::function<bool()> raw_;
  std::string pending_;
};

TerminalGuard::TerminalGuard(std::ostream& stream, std::function<bool()> raw)
    : stream_(stream),
      original_(stream.rdbuf()),
      buffer_(std::make_unique<EscapingBuffer>(original_, std::move(raw))) {
  stream_.rdbuf(buffer_.get());
}

TerminalGuard::~TerminalGuard() {
  stream_.flush();
  buffer_->Finish();
  stream_.rdbuf(original_);
}

int ExitCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      return kExitInvalidArgument;
    case StatusCode::kNotFound:
      return kExitNotFound;
    case StatusCode::kAlreadyExists:
      return kExitAlreadyExists;
    case StatusCode::kBusy:
      return kExitBusy;
    case StatusCode::kFailedPrecondition:
      return kExitFailedPrecondition;
    case StatusCode::kCorruption:
    case StatusCode::kIo:
    case StatusCode::kInternal:
      return kExitStorageError;
  }
  return kExitStorageError;
}

void PrintJson(const Json& value) {
  std::cout << value.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

void PrintError(std::string_view code, std::string_view message, bool as_json) {
  // Messages quote what the user or a file gave (an id, a URL): escaped like
  // everything printed, so it cannot command the terminal. JSON escapes itself.
  std::cerr << "sessiondb: error: " << EscapeForTerminal(message) << "\n";
  if (as_json) PrintJson({{"error", {{"code", code}, {"message", message}}}});
}

std::string FormatTime(int64_t unix_ms, bool seconds) {
  const auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), seconds ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string Shorten(std::string_view text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t len =
        std::min(SequenceLength(static_cast<unsigned char>(text[i])), text.size() - i);
    if (chars + 1 == max_chars && i + len < text.size()) {
      out += kEllipsis;
      return out;
    }
    const char c = text[i];
    if (len == 1 && (c == '\n' || c == '\r' || c == '\t')) {
      out += ' ';
    } else {
      out.append(text.substr(i, len));
    }
    ++chars;
    i += len;
  }
  return out;
}

std::string FitWidth(std::string_view text, size_t columns) {
  if (DisplayWidth(text) <= columns) return std::string(text);
  if (columns == 0) return "";
  std::string out;
  size_t used = 0;
  for (size_t i = 0; i < text.size();) {
    const std::pair<uint32_t, size_t> one = DecodeOne(text.substr(i));
    const size_t len = one.second == 0 ? 1 : one.second;
    const size_t width = one.second == 0 ? 1 : ColumnsOf(one.first);
    if (used + width > columns - 1) break;  // one column is the ellipsis's
    out.append(text.substr(i, len));
    used += width;
    i += len;
  }
  out += kEllipsis;
  return out;
}

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), right_(headers_.size(), false) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::AlignRight(size_t column) {
  if (column < right_.size()) right_[column] = true;
}

void Table::FitToWidth(size_t column, size_t width, size_t min_width) {
  if (column >= headers_.size()) return;
  fit_ = Fit{column, width, min_width};
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  if (fit_) {
    // The other columns and the gaps between them, whole; the fitted one gets
    // what is left of the width, but never less than its minimum.
    size_t others = 2 * (widths.size() - 1);
    for (size_t c = 0; c < widths.size(); ++c) others += c == fit_->column ? 0 : widths[c];
    const size_t left = fit_->width > others ? fit_->width - others : 0;
    widths[fit_->column] = std::min(widths[fit_->column], std::max(left, fit_->min_width));
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string cell = FitWidth(row[c], widths[c]);
      const size_t pad = widths[c] - DisplayWidth(cell);
      const bool last = c + 1 == row.size();
      if (c > 0) line += "  ";
      if (right_[c]) line.append(pad, ' ');
      line += cell;
      if (!right_[c] && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

}  // namespace sessiondb::cli
