// The documents of the PostgreSQL full-text index (search_docs, schema v3):
// the text of each as the index sees it, and the SQL that adds and indexes
// them inside a writer's transaction. Used by the store's writers (appends,
// restores, prune, opening an upgraded store) and by its IndexBackend.
//
// Why the text is prepared in C++ before to_tsvector sees it: PostgreSQL's
// default parser keeps "src/main.cc", "obj.method" and "snake_case" as one
// token (a file, a host, two words joined), where FTS5's unicode61 tokenizer
// splits at every character that is not a letter or digit. Turning those
// characters into spaces (byte for byte, so offsets still match the text)
// makes both backends see the same words. A tsvector holds at most 1 MiB and
// a word at most 2047 bytes: the text indexed is capped (kMaxIndexedBytes)
// and over-long words are left out, so a huge message never fails an append.
// Thread-safety: free functions on a connection the caller uses alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

// The start of a document that is indexed. to_tsvector's output can reach
// 2.4 times its input (distinct short words); 256 KiB stays well under the
// 1 MiB a tsvector may hold.
inline constexpr size_t kMaxIndexedBytes = size_t{256} * 1024;
// Longer words are not indexed (PostgreSQL's own limit is 2047 bytes).
inline constexpr size_t kMaxIndexedWordBytes = 1000;

// `text` cut to at most kMaxIndexedBytes at a character boundary.
std::string_view IndexedPart(std::string_view text);

// IndexedPart(text) with every ASCII byte that is not a letter or digit (NUL
// included) and every over-long word turned into spaces: the same length, so
// a byte offset in it is one in IndexedPart(text).
std::string IndexableText(std::string_view text);

// The searchable text of a code write: its path, then the code it wrote.
std::string CodeWriteText(std::string_view file_path, std::string_view new_code);

// Inside the caller's transaction: documents for the events `seqs` of the
// session, with their searchable texts (core/search_text), in seq order.
Status AddEventDocuments(PgConnection& c, const std::string& ns, std::string_view session_id,
                         const std::vector<int64_t>& seqs,
                         const std::vector<std::string>& search_texts);

// Inside the caller's transaction: computes the tsvector of at most `limit`
// documents of the namespace, those with doc_id > after_doc_id in doc_id
// order, or (only_pending) only those not indexed yet. Returns the largest
// doc_id indexed, nullopt when there was none.
Result<std::optional<int64_t>> IndexDocuments(PgConnection& c, const std::string& ns,
                                              int64_t after_doc_id, int limit, bool only_pending);

// Inside the caller's transaction: indexes every document of the namespace
// not indexed yet (after a prune, in one transaction).
Status IndexPendingDocuments(PgConnection& c, const std::string& ns);

// The columns DocumentTextFromRow reads, over search_docs d LEFT JOIN events
// e and code_writes c as PG_DOCUMENT_JOINS joins them. Macros, so queries
// stay string literals (each is prepared once per connection).
#define PG_DOCUMENT_COLUMNS " d.code_id, e.text, e.body, c.file_path, c.new_code "
#define PG_DOCUMENT_JOINS                                                  \
  " LEFT JOIN events e ON d.code_id IS NULL AND e.namespace = d.namespace" \
  " AND e.session_id = d.session_id AND e.seq = d.seq"                     \
  " LEFT JOIN code_writes c ON c.namespace = d.namespace AND c.id = d.code_id "

// The text of the document of a row whose columns from `col` on are
// PG_DOCUMENT_COLUMNS; nullopt when its event or code write is gone.
std::optional<std::string> DocumentTextFromRow(const PgResult& r, int row, int col);

}  // namespace sessiondb::postgres
