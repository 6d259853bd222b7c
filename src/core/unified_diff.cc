#include "core/unified_diff.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "core/tool_call_text.h"

namespace sessiondb {
namespace {

// The lines of `text` for the all-removed, all-added fallback; the same rule
// as DiffLines (a final newline makes no line of its own).
// find, not memchr: an empty view's data() may be null, which memchr must not get.
bool HasNul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

// "@@ -3,7 +3,8 @@": a range of no lines starts at the line before it.
std::string HunkHeader(size_t old_start, size_t old_count, size_t new_start, size_t new_count) {
  auto range = [](size_t start, size_t count) {
    return std::to_string(count == 0 ? start : start + 1) +
           (count == 1 ? std::string() : "," + std::to_string(count));
  };
  return "@@ -" + range(old_start, old_count) + " +" + range(new_start, new_count) + " @@";
}

}  // namespace

std::string UnifiedDiff(std::string_view old_text, std::string_view new_text,
                        const UnifiedDiffOptions& options) {
  if (old_text == new_text) return "";
  std::string out = "--- " + options.old_label + "\n+++ " + options.new_label + "\n";
  if (HasNul(old_text) || HasNul(new_text)) return out + "Binary files differ\n";
  std::optional<std::vector<DiffLine>> diff = DiffLines(old_text, new_text);
  if (!diff) {  // too large to compare: all of the old removed, all of the new added
    diff.emplace();
    for (std::string_view l : SplitLines(old_text))
      diff->push_back({DiffOp::kRemoved, std::string(l)});
    for (std::string_view l : SplitLines(new_text))
      diff->push_back({DiffOp::kAdded, std::string(l)});
  }
  const std::vector<DiffLine>& d = *diff;
  // old_at[i], new_at[i]: the lines of each side before entry i.
  std::vector<size_t> old_at(d.size() + 1, 0), new_at(d.size() + 1, 0);
  std::vector<size_t> changes;
  for (size_t i = 0; i < d.size(); ++i) {
    old_at[i + 1] = old_at[i] + (d[i].op != DiffOp::kAdded);
    new_at[i + 1] = new_at[i] + (d[i].op != DiffOp::kRemoved);
    if (d[i].op != DiffOp::kSame) changes.push_back(i);
  }
  if (changes.empty()) return out + "\\ only the final newline differs\n";

  std::vector<std::string> body;
  size_t c = 0;
  while (c < changes.size()) {
    const size_t begin = changes[c] > options.context ? changes[c] - options.context : 0;
    size_t last = changes[c];
    // A change within 2 * context of the last one joins its hunk.
    while (c + 1 < changes.size() && changes[c + 1] - last <= 2 * options.context + 1) {
      last = changes[++c];
    }
    ++c;
    const size_t end = std::min(d.size(), last + options.context + 1);
    body.push_back(HunkHeader(old_at[begin], old_at[end] - old_at[begin], new_at[begin],
                              new_at[end] - new_at[begin]));
    for (size_t i = begin; i < end; ++i) {
      body.push_back(static_cast<char>(d[i].op) + d[i].text);
    }
  }
  const size_t shown = std::min(body.size(), options.max_lines);
  for (size_t i = 0; i < shown; ++i) out += body[i] + "\n";
  if (shown < body.size()) {
    const size_t more = body.size() - shown;
    out += "... " + std::to_string(more) + (more == 1 ? " more line\n" : " more lines\n");
  }
  return out;
}

}  // namespace sessiondb
