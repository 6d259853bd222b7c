// The per-machine cache of a PostgreSQL namespace's vector index: the HNSW
// graph search saves (search/vector_index.h) is kept on the machine that built
// it, under a folder of the namespace's own, and the record of what it covers
// ("hnsw:<model>" of IndexBackend::GetMeta) sits beside it, not in the shared
// index_meta table: another machine's graph is not here.
//
// Where (first set wins): $SESSIONDB_CACHE_DIR, $XDG_CACHE_HOME/sessiondb,
// $HOME/.cache/sessiondb; then pg-<16 hex digits of SHA-256 of the server's
// system identifier, the database and the namespace>/, mode 0700. Two
// databases, two servers or two namespaces never share a folder.
//
// Staleness: the database keeps one epoch per model, index_meta "hnsw:<model>"
// = "cache-epoch <random>", made by the first build and deleted with every
// vector (ClearVectors; an erasure should too). A coverage record names the
// epoch it was written under; one whose epoch is gone or different is stale,
// and reading it removes the whole folder's files (so vectors erased in the
// database leave this machine's disk at the next search here).
//
// Cover file: "<epoch>\n<value>" (value: search's "covered count dims"),
// written to a temporary name, synced and renamed into place.
// Thread-safety: none (the IndexBackend's).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sessiondb/file_system.h"
#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

// True for the meta keys kept per machine ("hnsw:<model>").
bool IsVectorCacheKey(std::string_view key);

// The root of every namespace's cache folder from the environment; empty
// when none of the variables is set.
std::string VectorCacheRoot();

// The namespace's cache folder (created, with the root, mode 0700); empty
// when there is no root or it cannot be created. Asks the server who it is.
Result<std::string> VectorCacheDirectory(PgConnection& c, const std::string& ns);

// The coverage record of `key` in `dir` if its epoch is the database's;
// nullopt otherwise (and a stale record's folder is emptied).
Result<std::optional<std::string>> ReadVectorCover(PgConnection& c, const std::string& ns,
                                                   const std::string& dir, std::string_view key,
                                                   FileSystem& fs);

// Keeps `value` as the coverage record of `key` in `dir`, under the
// database's epoch for it (made now when there is none). kIo when the file
// cannot be written.
Status WriteVectorCover(PgConnection& c, const std::string& ns, const std::string& dir,
                        std::string_view key, std::string_view value, FileSystem& fs);

}  // namespace sessiondb::postgres
