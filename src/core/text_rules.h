// The small text rules every backend shares: UTF-8 checks, session titles and
// previews, and which session ids are acceptable.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb {

inline constexpr size_t kMaxTitleChars = 50;
// The longest title a caller, a rename or an import may set, in code points.
// Longer ones are cut (with "…") rather than refused, so an import of a
// foreign session with an essay for a title still succeeds.
inline constexpr size_t kMaxTitleLength = 200;
inline constexpr size_t kMaxPreviewChars = 100;
inline constexpr size_t kMaxSessionIdLength = 128;
inline constexpr std::string_view kDefaultTitle = "New Session";
inline constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026 "…"

// True if `text` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool IsValidUtf8(std::string_view text);

// U+FFFD, the replacement character, in UTF-8.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Writes `text` to `out` with each ill-formed UTF-8 sequence replaced by
// U+FFFD, one per maximal subpart (Unicode's recommended practice, which
// WHATWG's decoder follows): "a\xF0\x9F\x98b" -> "a\uFFFDb", "\xC0\xAF" ->
// two U+FFFD. Text that is valid UTF-8 comes out unchanged. Returns false,
// with `out` unspecified, as soon as the result would exceed max_bytes: a
// byte may become three, so callers reading under a cap pass it here.
bool ReplaceInvalidUtf8(std::string_view text, size_t max_bytes, std::string* out);
// The same without a cap.
std::string ToValidUtf8(std::string_view text);

// Number of code points in valid UTF-8.
size_t CountCodePoints(std::string_view text);

// Runs of whitespace become one space; leading and trailing whitespace go.
std::string CollapseWhitespace(std::string_view text);

// `text` without control characters: C0 (U+0000-U+001F), DEL (U+007F) and C1
// (U+0080-U+009F) are dropped, except that tab, newline, carriage return,
// vertical tab and form feed become a space (they separate words). `text`
// need not be valid UTF-8; bytes that do not start a C1 sequence are kept.
std::string StripControls(std::string_view text);

// A title as every store keeps it, whatever path set it (create, rename,
// fork, restore and import, the HTTP API): control characters stripped,
// whitespace collapsed, and at most kMaxTitleLength code points, cut at a
// code point boundary with the last one "…" when cut. May be empty. `title`
// must be valid UTF-8 (callers check first).
std::string SanitizeTitle(std::string_view title);

// The automatic title for a session whose first message has this text:
// control characters stripped, whitespace collapsed, at most kMaxTitleChars
// code points counting the "…" added when cut, cut at the last word boundary
// that fits (or, for a single overlong word, at the limit). kDefaultTitle
// when the text is empty.
std::string MakeTitle(std::string_view first_message_text);

// The preview of a session whose first user message has this text: control
// characters stripped, whitespace collapsed, the first kMaxPreviewChars
// code points, plus "…" when cut.
std::string MakePreview(std::string_view first_user_text);

// ---- The title and preview of a session's index entry ----------------------

// What the messages of a session decide of its index entry.
struct TitleAndPreview {
  bool title_fixed = false;  // set by a message with text or a rename; then it stays
  std::string title;
  std::string preview;
};

// One more message with this role and joined text: the first message with
// text (any role) fixes the title, the first user message with text sets the
// preview; neither changes afterwards.
void ApplyMessageText(Role role, std::string_view text, TitleAndPreview* entry);

// After a prune: a title or preview made from a pruned message's text would
// keep the erased words, so the title becomes one made from the summary and
// the preview is cleared. `pruned_texts` are the pruned messages' roles and texts.
void ScrubPrunedTexts(std::span<const std::pair<Role, std::string>> pruned_texts,
                      std::string_view summary, std::string* title, std::string* preview);

// A fork's title and preview, forked at `at_seq` from a parent titled
// `parent_title`: the title asked for (clean, may be empty), else the
// parent's when anything is inherited; the preview from `derived`, what the
// first inherited messages make.
TitleAndPreview ForkTitleAndPreview(std::string_view parent_title, int64_t at_seq,
                                    std::string_view asked, const TitleAndPreview& derived);

// A byte count for people: "830 bytes", "150.1 KiB", "5.0 MiB", "1.2 GiB".
std::string FormatBytes(int64_t bytes);

// kInvalidArgument unless `id` is 1..kMaxSessionIdLength characters of
// [A-Za-z0-9._-] not starting with '.': ids end up in file names and URLs, so
// path characters are refused.
Status ValidateSessionId(std::string_view id);

}  // namespace sessiondb
