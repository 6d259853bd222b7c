// What the page's list can be narrowed to: the sources the sessions came
// from (metadata "source": claude-code, codex, ...) and the projects they
// were about (metadata "project", else "cwd"), each with how many sessions
// have it, most first. Read by listing the sessions (archived too), at most
// `max_sessions` of them; past that the answer says it is partial.
//
// Example:
//   ASSIGN_OR_RETURN(Json facets, SessionFacets(store, 20'000));
//   // {"sources":[{"key":"source","value":"codex","sessions":12}],
//   //  "projects":[{"key":"cwd","value":"/home/me/app","sessions":9}],
//   //  "sessions_read":21,"partial":false}
//
// Thread-safety: as the Store's.
#pragma once

#include <cstdint>

#include "api/json_forms.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

// The most values of each kind the answer lists.
inline constexpr size_t kMaxFacetValues = 50;

Result<Json> SessionFacets(Store& store, int64_t max_sessions);

}  // namespace sessiondb::server
