// How the `sessiondb` command speaks: exit codes, error lines, JSON documents
// on stdout, aligned tables and times for people. Nothing here knows about the
// store; the verbs decide what to print, this file decides how.
//
// Example:
//   Table t({"ID", "TITLE"});
//   t.AddRow({s.id, Shorten(s.title, 40)});
//   t.Print(std::cout);
//
// Thread-safety: the CLI is single-threaded; these write to the process's
// standard streams without locking.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/text_rules.h"

namespace sessiondb::cli {

// JSON values the CLI prints. Ordered, so keys come out in the order of the
// C++ struct fields rather than alphabetically.
using Json = nlohmann::ordered_json;

// Exit codes; documented in docs/cli.md and in `sessiondb --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,  // CLI11 could not parse the command line
  kExitInvalidArgument = 2,
  kExitNotFound = 3,
  kExitAlreadyExists = 4,
  kExitBusy = 5,
  kExitStorageError = 6,  // corruption, I/O, internal
  kExitFailedPrecondition = 7,
  kExitVerifyFailed = 8,
  kExitFilesSkipped = 9,  // an import of a folder left out files it could not read
};

// The exit code for a failed call's status (kExitOk for kOk).
int ExitCodeFor(StatusCode code);

// Prints `value` to stdout as one pretty-printed JSON document and a newline.
// Bytes that are not UTF-8 (a file name from a Latin-1 disk, say) are replaced
// with U+FFFD rather than aborting the command.
void PrintJson(const Json& value);

// Reports an error: "sessiondb: error: <message>" on stderr (the message
// through EscapeForTerminal, whatever stderr is), and with `json`
// also {"error":{"code","message"}} on stdout for the program parsing it.
// `code` is a StatusCodeName ("not_found") or "usage".
void PrintError(std::string_view code, std::string_view message, bool json);

// "2026-11-22 11:03" (or with `seconds`, "2026-11-22 11:03:07") in local time.
std::string FormatTime(int64_t unix_ms, bool seconds = false);

// `text` cut to at most `max_chars` code points, the last one "…" when cut,
// never splitting a UTF-8 sequence. Newlines and tabs become spaces.
std::string Shorten(std::string_view text, size_t max_chars);

// `text` cut to at most `columns` terminal columns (a wide character, CJK
// or emoji, takes two), the last one "…" when cut, never splitting a UTF-8
// sequence.
std::string FitWidth(std::string_view text, size_t columns);

// `text` made safe to print on a terminal, where bytes are commands as well as
// letters: a title or message holding ESC could clear the screen, retitle the
// window, hide lines or forge output. Newline and tab are kept, and CR
// directly before a newline; every other C0 control, DEL and any byte that is
// not part of valid UTF-8 becomes "\xNN" (ESC prints as \x1b, NUL as \x00);
// C1 controls (U+0080-U+009F) and the bidirectional overrides and isolates
// (U+202A-U+202E, U+2066-U+2069) become "\uNNNN". The result is printable
// ASCII plus the text's own printable characters. See docs/cli.md.
std::string EscapeForTerminal(std::string_view text);

// While alive, passes everything written to `stream` through
// EscapeForTerminal, except while `raw()` is true (--json documents, which
// JSON escapes itself, stay byte-exact; the CLI's own colours). The CLI installs one on stdout when
// stdout is a terminal; piped and redirected output is never touched.
// Restores the stream's buffer, and writes what it holds, when destroyed.
class TerminalGuard {
 public:
  TerminalGuard(std::ostream& stream, std::function<bool()> raw);
  ~TerminalGuard();
  TerminalGuard(const TerminalGuard&) = delete;
  TerminalGuard& operator=(const TerminalGuard&) = delete;

 private:
  class EscapingBuffer;
  std::ostream& stream_;
  std::streambuf* original_;
  std::unique_ptr<EscapingBuffer> buffer_;
};

// A table for people: a header row and columns padded to their widest cell
// (measured in terminal columns: a CJK character or an emoji takes two),
// separated by two spaces. The last column is not padded, so long titles do
// not leave trailing blanks.
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  // `cells` must have one entry per header.
  void AddRow(std::vector<std::string> cells);
  // Right-aligns the column (numbers).
  void AlignRight(size_t column);
  // Cuts the cells of `column` (a title) with "…" so that no line is wider
  // than `width` columns; the column keeps at least `min_width` columns, so
  // a line is wider only when the other columns alone leave less than that.
  void FitToWidth(size_t column, size_t width, size_t min_width);
  void Print(std::ostream& out) const;

 private:
  struct Fit {
    size_t column, width, min_width;
  };
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
  std::optional<Fit> fit_;
};

// Draws "<what>: 120/4000" (or, for bytes, "<what>: 12.0 MiB/1.0 GiB (1%)")
// on stderr when it is a terminal, at most ten times a second, and clears the
// line when done.
class Progress {
 public:
  Progress(bool enabled, std::string what, bool bytes = false)
      : enabled_(enabled), bytes_(bytes), what_(std::move(what)) {}
  ~Progress() {
    if (drawn_) std::cerr << "\r\033[K" << std::flush;  // leave the line clean
  }
  void operator()(int64_t done, int64_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && done != total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    std::cerr << "\r\033[K" << what_ << ": " << (bytes_ ? FormatBytes(done) : std::to_string(done));
    if (total > 0) {
      std::cerr << "/" << (bytes_ ? FormatBytes(total) : std::to_string(total));
      if (bytes_) std::cerr << " (" << done * 100 / total << "%)";
    }
    std::cerr << std::flush;
  }

 private:
  bool enabled_;
  bool bytes_;
  std::string what_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace sessiondb::cli
