#include "cli/session_ref.h"

#include <algorithm>

#include "cli/output.h"

namespace sessiondb::cli {
namespace {

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

std::string AmbiguityMessage(std::string_view prefix, const std::vector<Session>& candidates) {
  std::string out = "session id prefix '" + std::string(prefix) + "' is ambiguous; it matches:";
  for (size_t i = 0; i < candidates.size() && i < kMaxCandidatesListed; ++i) {
    out += "\n  " + candidates[i].id + "  " + Shorten(candidates[i].title, kCandidateTitleChars);
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

size_t AbbreviationLength(const std::vector<std::string>& ids) {
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  size_t length = kMinAbbreviationChars;
  // Neighbours in sorted order share the longest prefixes; one character past
  // the longest shared prefix tells every pair apart.
  for (size_t i = 1; i < sorted.size(); ++i) {
    const std::string& a = sorted[i - 1];
    const std::string& b = sorted[i];
    const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    length = std::max(length, static_cast<size_t>(ia - a.begin()) + 1);
  }
  return length;
}

}  // namespace sessiondb::cli
