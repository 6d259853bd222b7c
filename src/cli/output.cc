#include "cli/output.h"

#include <algorithm>
#include <ctime>
#include <iostream>

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

// Code points in `text`, counting each stray byte as one.
size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size(); i += SequenceLength(static_cast<unsigned char>(text[i]))) {
    ++width;
  }
  return width;
}

}  // namespace

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
  std::cerr << "sessiondb: error: " << message << "\n";
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

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), right_(headers_.size(), false) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::AlignRight(size_t column) {
  if (column < right_.size()) right_[column] = true;
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const size_t pad = widths[c] - DisplayWidth(row[c]);
      const bool last = c + 1 == row.size();
      if (c > 0) line += "  ";
      if (right_[c]) line.append(pad, ' ');
      line += row[c];
      if (!right_[c] && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

}  // namespace sessiondb::cli
