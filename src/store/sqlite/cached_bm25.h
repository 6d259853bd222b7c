// The FTS5 ranking function sessiondb_bm25(search_fts, key): FTS5's own
// bm25() (k1 1.2, b 0.75, every column weighted 1.0), with two costs taken
// away by keeping, per connection, what bm25() reads again on every query:
//  - the documents holding each phrase, which bm25() counts by walking the
//    phrase's whole posting list (for a word in every message of a million,
//    most of the query), kept under `key` (the MATCH expression) and the
//    phrase's number while the index holds the same rows and tokens;
//  - each matched document's length, which bm25() reads from FTS5's docsize
//    table (a B-tree lookup per match, most of a mid-frequency word's
//    query), kept by document id while the index only grows; read a block
//    of ids at a time when a query's matches are dense (a common word).
// Scores are bm25()'s to the last bit, so the order is the same. Works only
// on the table search_fts (it reads search_fts_docsize to see how the index
// changed).
#pragma once

#include <sqlite3.h>

namespace sessiondb::sqlite {

// Registers sessiondb_bm25 on `db`; returns a SQLite result code. The counts
// it keeps live as long as the connection.
int RegisterCachedBm25Function(sqlite3* db);

}  // namespace sessiondb::sqlite
