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
//
// In an encrypted namespace (pg_sealer.h) the server must see no word: the
// words are found here instead (WordsOf, the way to_tsvector's parser and
// 'simple' dictionary find them in IndexableText), each is replaced by its
// keyed token, and the tsvector is sent as a literal with the positions, so
// ts_rank_cd and phrases (<->) work as before. What that leaks is in
// docs/encryption.md ("PostgreSQL"): which documents share a term, and how
// often a term occurs, never the term.
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

// A word of an IndexableText: its bytes [begin, end) and the term it is
// indexed as: lower-cased, as to_tsvector does (ASCII, and the Latin, Greek
// and Cyrillic letters of two UTF-8 bytes; other bytes as they are), so
// "Über" and "über" are one term.
struct IndexedWord {
  size_t begin = 0;
  size_t end = 0;
  std::string term;
};
// The words of `indexable` (IndexableText output), in order.
std::vector<IndexedWord> WordsOf(std::string_view indexable);

// An encrypted namespace indexes at most this many distinct terms of a
// document: a keyed token takes 25 bytes whatever the word, and a tsvector's
// lexemes may take 1 MiB in all.
inline constexpr size_t kMaxKeyedTerms = 32768;

// What a document's tsvector is computed from, by PG_TSVECTOR_*: its
// IndexableText when plaintext (to_tsvector runs in the server); when
// encrypted, the tsvector itself as text: each term's keyed token with its
// positions ('t9f0c…':1,4 't07aa…':2).
std::string TsVectorInput(const PgSealer& sealer, std::string_view text);
// The SQL that turns a TsVectorInput `x` into a tsvector. Each is a string
// literal, so a statement built from it is prepared once per connection.
// A plaintext namespace's words are stemmed (English, Snowball, no stop
// words: the sessiondb_english configuration of schema version 7); keyed
// tokens are taken as they are.
#define PG_TSVECTOR_PLAIN(x) "to_tsvector('sessiondb_english', " x ")"
#define PG_TSVECTOR_KEYED(x) "(" x ")::tsvector"
// The tsquery of a RenderTsQuery `x`, in the configuration of the namespace's
// tsvectors: stemmed as they are, or keyed tokens as they are.
#define PG_TSQUERY_PLAIN(x) "to_tsquery('sessiondb_english', " x ")"
#define PG_TSQUERY_KEYED(x) "to_tsquery('simple', " x ")"

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
// stay string literals (each is prepared once per connection). The ids are
// the records the content columns are sealed under.
#define PG_DOCUMENT_COLUMNS \
  " d.code_id, e.id, e.text, e.body, c.content_sha256, c.file_path, c.new_code "
#define PG_DOCUMENT_JOINS                                                  \
  " LEFT JOIN events e ON d.code_id IS NULL AND e.namespace = d.namespace" \
  " AND e.session_id = d.session_id AND e.seq = d.seq"                     \
  " LEFT JOIN code_writes c ON c.namespace = d.namespace AND c.id = d.code_id "

// The text of the document of a row whose columns from `col` on are
// PG_DOCUMENT_COLUMNS, opened with `sealer`; nullopt when its event or code
// write is gone. kCorruption when a sealed column does not open.
Result<std::optional<std::string>> DocumentTextFromRow(const PgSealer& sealer, const PgResult& r,
                                                       int row, int col);

// Column `col` of a row, opened with `sealer` as `column` of `record`; ""
// when NULL. kCorruption when it does not open.
Result<std::string> OpenedText(const PgSealer& sealer, PgColumn column, std::string_view record,
                               const PgResult& r, int row, int col);

}  // namespace sessiondb::postgres
