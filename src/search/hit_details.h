// What a search hit shows besides its rank: the event or code write behind a
// document of the index.
#pragma once

#include <cstdint>

#include "sessiondb/search.h"
#include "sessiondb/status.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::search {

// Fills kind, session, seq, event id, role, time, title, file path and code
// id of `hit` from document `doc_id`. Returns false when the document is gone
// (deleted since it was ranked, or its session deleted).
Result<bool> LoadHitDetails(sqlite::Database* db, int64_t doc_id, SearchHit* hit);

}  // namespace sessiondb::search
