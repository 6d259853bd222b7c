#include "store/postgres/pg_search_docs.h"

#include <algorithm>

#include "core/search_text.h"

namespace sessiondb::postgres {
namespace {

bool IsAsciiAlnum(unsigned char ch) {
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

// A word as the index sees it: letters and digits, and every byte of a
// non-ASCII character (PostgreSQL's parser decides which of those are letters).
bool IsWordByte(unsigned char ch) { return ch >= 0x80 || IsAsciiAlnum(ch); }

constexpr int kIndexPage = 256;

}  // namespace

std::string_view IndexedPart(std::string_view text) {
  if (text.size() <= kMaxIndexedBytes) return text;
  size_t cut = kMaxIndexedBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

std::string IndexableText(std::string_view text) {
  std::string out(IndexedPart(text));
  size_t i = 0;
  while (i < out.size()) {
    if (!IsWordByte(static_cast<unsigned char>(out[i]))) {
      out[i++] = ' ';
      continue;
    }
    size_t end = i;
    while (end < out.size() && IsWordByte(static_cast<unsigned char>(out[end]))) ++end;
    if (end - i > kMaxIndexedWordBytes) {
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(i),
                out.begin() + static_cast<std::ptrdiff_t>(end), ' ');
    }
    i = end;
  }
  return out;
}

std::string CodeWriteText(std::string_view file_path, std::string_view new_code) {
  std::string out(file_path);
  out += '\n';
  out += new_code;
  return out;
}

Status AddEventDocuments(PgConnection& c, const std::string& ns, std::string_view session_id,
                         const std::vector<int64_t>& seqs,
                         const std::vector<std::string>& search_texts) {
  if (seqs.empty()) return Status::Ok();
  std::vector<std::string> indexable;
  indexable.reserve(search_texts.size());
  for (const std::string& t : search_texts) indexable.push_back(IndexableText(t));
  PgParams p;
  p.Add(ns).Add(session_id).Add(PgArray(seqs)).Add(PgArray(indexable));
  // ORDER BY: doc ids follow the seqs, so "newer" means the same in both.
  return c.Run(
      "INSERT INTO search_docs (namespace, session_id, seq, tsv) "
      "SELECT $1, $2, u.seq, to_tsvector('simple', u.t) FROM "
      "unnest($3::bigint[], $4::text[]) AS u(seq, t) ORDER BY u.seq",
      p);
}

std::optional<std::string> DocumentTextFromRow(const PgResult& r, int row, int col) {
  if (!r.IsNull(row, col)) {
    if (r.IsNull(row, col + 3)) return std::nullopt;
    return CodeWriteText(r.Text(row, col + 3), r.Text(row, col + 4));
  }
  if (r.IsNull(row, col + 1)) return std::nullopt;
  return SearchText(r.Text(row, col + 1),
                    r.IsNull(row, col + 2) ? std::string_view() : r.Text(row, col + 2));
}

Result<std::optional<int64_t>> IndexDocuments(PgConnection& c, const std::string& ns,
                                              int64_t after_doc_id, int limit, bool only_pending) {
  PgParams q;
  q.Add(ns).Add(after_doc_id).Add(static_cast<int64_t>(limit));
  // Two statements rather than one with a flag, so the pending one can use
  // the partial index of documents not indexed yet.
  Result<PgResult> rows =
      only_pending
          ? c.Exec("SELECT d.doc_id," PG_DOCUMENT_COLUMNS "FROM search_docs d" PG_DOCUMENT_JOINS
                   "WHERE d.namespace = $1 AND d.doc_id > $2 AND d.tsv IS NULL "
                   "ORDER BY d.doc_id LIMIT $3",
                   q)
          : c.Exec("SELECT d.doc_id," PG_DOCUMENT_COLUMNS "FROM search_docs d" PG_DOCUMENT_JOINS
                   "WHERE d.namespace = $1 AND d.doc_id > $2 ORDER BY d.doc_id LIMIT $3",
                   q);
  if (!rows) return Err(rows.error());
  const PgResult& r = *rows;
  if (r.rows() == 0) return std::optional<int64_t>();
  std::vector<int64_t> ids, orphans;
  std::vector<std::string> texts;
  for (int i = 0; i < r.rows(); ++i) {
    std::optional<std::string> text = DocumentTextFromRow(r, i, 1);
    if (!text) {
      orphans.push_back(r.Int(i, 0));  // its event or write is gone
      continue;
    }
    ids.push_back(r.Int(i, 0));
    texts.push_back(IndexableText(*text));
  }
  if (!ids.empty()) {
    PgParams u;
    u.Add(ns).Add(PgArray(ids)).Add(PgArray(texts));
    RETURN_IF_ERROR(
        c.Run("UPDATE search_docs d SET tsv = to_tsvector('simple', u.t) FROM "
              "unnest($2::bigint[], $3::text[]) AS u(id, t) "
              "WHERE d.namespace = $1 AND d.doc_id = u.id",
              u));
  }
  if (!orphans.empty()) {
    PgParams o;
    o.Add(ns).Add(PgArray(orphans));
    RETURN_IF_ERROR(
        c.Run("DELETE FROM search_docs WHERE namespace = $1 AND doc_id = ANY($2::bigint[])", o));
  }
  return std::optional<int64_t>(r.Int(r.rows() - 1, 0));
}

Status IndexPendingDocuments(PgConnection& c, const std::string& ns) {
  int64_t after = 0;
  while (true) {
    ASSIGN_OR_RETURN(std::optional<int64_t> last,
                     IndexDocuments(c, ns, after, kIndexPage, /*only_pending=*/true));
    if (!last) return Status::Ok();
    after = *last;
  }
}

}  // namespace sessiondb::postgres
