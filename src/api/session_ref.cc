#include "api/session_ref.h"

#include <optional>
#include <utility>
#include <vector>

#include "core/text_rules.h"

namespace sessiondb {
namespace {

// Each candidate's title is shown up to this many characters.
constexpr size_t kCandidateTitleChars = 50;

// Up to kMaxCandidatesListed + 1 sessions whose id begins with `prefix`: one
// more than is listed tells "more" from "all".
Result<std::vector<Session>> SessionsWithPrefix(Store& store, std::string_view prefix) {
  std::vector<Session> found;
  ListOptions list{.limit = 1000, .archived = ArchiveFilter::kAll};
  while (found.size() <= kMaxCandidatesListed) {
    ASSIGN_OR_RETURN(SessionPage page, store.ListSessions(list));
    for (Session& s : page.sessions) {
      if (s.id.starts_with(prefix)) found.push_back(std::move(s));
    }
    if (page.next_cursor.empty()) break;
    list.cursor = std::move(page.next_cursor);
  }
  return found;
}

// At most `max_chars` code points of a stored title (one line, valid UTF-8:
// SanitizeTitle made it so), the last one "…" when cut.
std::string ShortTitle(std::string_view title, size_t max_chars) {
  if (CountCodePoints(title) <= max_chars) return std::string(title);
  size_t end = 0;
  for (size_t chars = 0; end < title.size() && chars + 1 < max_chars; ++chars) {
    ++end;
    while (end < title.size() && (static_cast<unsigned char>(title[end]) & 0xC0) == 0x80) ++end;
  }
  return std::string(title.substr(0, end)) + std::string(kEllipsis);
}

std::string AmbiguityMessage(std::string_view prefix, const std::vector<Session>& candidates) {
  std::string out = "session id prefix '" + std::string(prefix) + "' is ambiguous; it matches:";
  for (size_t i = 0; i < candidates.size() && i < kMaxCandidatesListed; ++i) {
    out += "\n  " + candidates[i].id + "  " + ShortTitle(candidates[i].title, kCandidateTitleChars);
  }
  if (candidates.size() > kMaxCandidatesListed) out += "\n  ... and more";
  out += "\ntype more of the id";
  return out;
}

}  // namespace

Result<std::string> ResolveSessionRef(Store& store, std::string_view typed) {
  if (typed == "-" || typed == "@") {
    ASSIGN_OR_RETURN(std::optional<std::string> active, store.GetActiveSession());
    if (!active) {
      return Err(Status::NotFound("'" + std::string(typed) +
                                  "' means the active session, and none is set (sessiondb "
                                  "active SESSION sets one)"));
    }
    return *active;
  }
  const std::string id(typed);
  auto exact = store.GetSession(id);
  if (exact) return id;
  if (exact.error().code() != StatusCode::kNotFound || typed.size() < kMinPrefixChars) {
    return Err(exact.error());
  }
  ASSIGN_OR_RETURN(std::vector<Session> candidates, SessionsWithPrefix(store, typed));
  if (candidates.empty()) return Err(exact.error());
  if (candidates.size() > 1)
    return Err(Status::InvalidArgument(AmbiguityMessage(typed, candidates)));
  return candidates.front().id;
}

}  // namespace sessiondb
