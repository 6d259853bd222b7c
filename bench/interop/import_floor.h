// The single-writer floor of an import: how long SQLite alone takes to write
// what an import wrote, with none of our parsing, encoding or checking. An
// embedded store has one writer at a time, and search requires the full-text
// index to be written in the same transaction as the events (docs/search.md),
// so this SQLite work is serial, on one core: no importer can beat it, however
// fast it reads. sessiondb_import_bench --floor prints it beside the import.
#pragma once

#include <cstdint>
#include <filesystem>

#include "sessiondb/status.h"

namespace sessiondb::bench {

// Seconds of writes; input MB over them is the floor in MB/s.
struct ImportFloor {
  int64_t events = 0;
  int64_t search_text_bytes = 0;  // what the full-text index took in
  double rows = 0;                // the events rows and their indexes alone
  double rows_and_search = 0;     // the same, plus the full-text index
  // The same as rows_and_search with one change each: the events table as a
  // rowid table (its large bodies then fill overflow pages whole), and event
  // ids hashed so that they land all over the id index, as imported ids did
  // before ImportedEventId ordered them.
  double rowid_events = 0;
  double random_ids = 0;
};

// Reads back every event of the store database `store_db` and writes the same
// rows into fresh databases under `scratch_dir`, with the store's own schema
// and pragmas, in transactions the size of an import's runs: once without the
// full-text index, once with it (as SqliteStore::IndexEventsLocked writes it),
// and with it for each change above, one database after another.
// Times only the writes, commits and final checkpoints.
Result<ImportFloor> MeasureImportFloor(const std::filesystem::path& store_db,
                                       const std::filesystem::path& scratch_dir);

}  // namespace sessiondb::bench
