// The words of a search request as the CLI's flags and the HTTP API's query
// parameters spell them ("hybrid", "exclude", "code", "2026-11-20"), turned
// into a SearchRequest. `name` is how the caller's user wrote the option
// ("--mode", "mode"), so errors point at it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "sessiondb/search.h"

namespace sessiondb {

// keyword, vector, hybrid.
Result<SearchMode> ParseSearchMode(const std::string& text, const char* name);
// A search's words for an ArchiveFilter: include (kAll), exclude (kActive),
// only (kArchived); "" is include.
Result<ArchiveFilter> ParseArchivedFilter(const std::string& text, const char* name);
// all, messages, code ("" is all): which kinds of documents `filter` keeps.
Status ApplySearchKind(const std::string& text, const char* name, SearchFilter& filter);
// Milliseconds since the epoch, or an ISO-8601 date or time (UTC unless it
// carries an offset, read as the importers read timestamps); "" is 0 (no bound).
Result<int64_t> ParseSearchTime(const std::string& text, const char* name);

}  // namespace sessiondb
