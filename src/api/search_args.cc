#include "api/search_args.h"

#include <optional>

#include "core/iso_time.h"

namespace sessiondb {

Result<SearchMode> ParseSearchMode(const std::string& text, const char* name) {
  if (text == "keyword") return SearchMode::kKeyword;
  if (text == "vector") return SearchMode::kVector;
  if (text == "hybrid" || text.empty()) return SearchMode::kHybrid;
  return Err(Status::InvalidArgument(std::string(name) + " is keyword, vector or hybrid, not '" +
                                     text + "'"));
}

Result<ArchiveFilter> ParseArchivedFilter(const std::string& text, const char* name) {
  if (text == "include" || text.empty()) return ArchiveFilter::kAll;
  if (text == "exclude") return ArchiveFilter::kActive;
  if (text == "only") return ArchiveFilter::kArchived;
  return Err(Status::InvalidArgument(std::string(name) + " is include, exclude or only, not '" +
                                     text + "'"));
}

Status ApplySearchKind(const std::string& text, const char* name, SearchFilter& filter) {
  if (text == "messages") {
    filter.code_writes = false;
  } else if (text == "code") {
    filter.events = false;
  } else if (text != "all" && !text.empty()) {
    return Status::InvalidArgument(std::string(name) + " is all, messages or code, not '" + text +
                                   "'");
  }
  return Status::Ok();
}

Result<int64_t> ParseSearchTime(const std::string& text, const char* name) {
  if (text.empty()) return int64_t{0};
  if (text.size() <= 15 && text.find_first_not_of("0123456789") == std::string::npos) {
    return std::stoll(text);
  }
  if (std::optional<int64_t> ms = ParseIsoTime(text)) return *ms;
  return Err(Status::InvalidArgument(std::string(name) + " takes a date (2026-11-20, " +
                                     "2026-11-20T14:30) or milliseconds since 1970, not '" + text +
                                     "'"));
}

}  // namespace sessiondb
