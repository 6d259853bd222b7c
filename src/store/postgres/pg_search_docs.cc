#include "store/postgres/pg_search_docs.h"

#include <algorithm>
#include <unordered_map>

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

// The lower case of a code point of the two-byte UTF-8 range (U+0080 to
// U+07FF) for the alphabets with case there: Latin-1, Latin Extended-A,
// Greek and Cyrillic; the code point itself otherwise. The result stays in
// the range, so a word keeps its length and its offsets.
uint32_t LowerOfTwoByte(uint32_t cp) {
  if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) ||
      (cp >= 0x410 && cp <= 0x42F)) {
    return cp + 0x20;
  }
  if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  if (cp == 0x178) return 0xFF;
  // Latin Extended-A pairs: upper case even, lower odd, except in the two
  // runs where it is the other way round.
  const bool odd_upper = (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E);
  const bool even_upper =
      (cp >= 0x100 && cp <= 0x137 && cp != 0x130) || (cp >= 0x14A && cp <= 0x177);
  if ((even_upper && cp % 2 == 0) || (odd_upper && cp % 2 == 1)) return cp + 1;
  return cp;
}

// tsvector keeps positions up to 16383 and 256 of them per lexeme; more are
// dropped by the server, so they are not sent.
constexpr int kMaxPosition = 16383;
constexpr size_t kMaxPositionsPerTerm = 256;

std::string KeyedTsVector(const PgSealer& sealer, std::string_view indexable) {
  std::vector<std::string> order;  // terms by first occurrence
  std::unordered_map<std::string, std::vector<int>> positions;
  int position = 0;
  for (IndexedWord& w : WordsOf(indexable)) {
    position = std::min(position + 1, kMaxPosition);
    auto [it, added] = positions.try_emplace(std::move(w.term));
    if (added) {
      if (order.size() == kMaxKeyedTerms) {
        positions.erase(it);
        continue;
      }
      order.push_back(it->first);
    }
    std::vector<int>& at = it->second;
    if (at.size() < kMaxPositionsPerTerm && (at.empty() || at.back() != position)) {
      at.push_back(position);
    }
  }
  // Tokens are letters and digits: no quoting inside the quotes.
  std::string out;
  for (const std::string& term : order) {
    if (!out.empty()) out += ' ';
    out += '\'';
    out += sealer.Term(term);
    out += "':";
    const std::vector<int>& at = positions[term];
    for (size_t i = 0; i < at.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(at[i]);
    }
  }
  return out;
}

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

std::vector<IndexedWord> WordsOf(std::string_view indexable) {
  std::vector<IndexedWord> out;
  size_t i = 0;
  while (i < indexable.size()) {
    if (!IsWordByte(static_cast<unsigned char>(indexable[i]))) {
      ++i;
      continue;
    }
    IndexedWord w{.begin = i};
    while (i < indexable.size() && IsWordByte(static_cast<unsigned char>(indexable[i]))) {
      const auto ch = static_cast<unsigned char>(indexable[i]);
      const auto next = i + 1 < indexable.size() ? static_cast<unsigned char>(indexable[i + 1]) : 0;
      if ((ch & 0xE0) == 0xC0 && (next & 0xC0) == 0x80) {
        const uint32_t lower = LowerOfTwoByte((uint32_t{ch} & 0x1F) << 6 | (next & 0x3F));
        w.term += static_cast<char>(0xC0 | lower >> 6);
        w.term += static_cast<char>(0x80 | (lower & 0x3F));
        i += 2;
        continue;
      }
      w.term += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
      ++i;
    }
    w.end = i;
    out.push_back(std::move(w));
  }
  return out;
}

std::string TsVectorInput(const PgSealer& sealer, std::string_view text) {
  std::string indexable = IndexableText(text);
  return sealer.encrypted() ? KeyedTsVector(sealer, indexable) : indexable;
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
  std::vector<std::string> inputs;
  inputs.reserve(search_texts.size());
  for (const std::string& t : search_texts) inputs.push_back(TsVectorInput(c.sealer(), t));
  PgParams p;
  p.Add(ns).Add(session_id).Add(PgArray(seqs)).Add(PgArray(inputs));
  // ORDER BY: doc ids follow the seqs, so "newer" means the same in both.
#define PG_ADD_EVENT_DOCUMENTS(tsv)                                           \
  "INSERT INTO search_docs (namespace, session_id, seq, tsv) SELECT $1, $2, " \
  "u.seq, " tsv " FROM unnest($3::bigint[], $4::text[]) AS u(seq, t) ORDER BY u.seq"
  return c.Run(c.sealer().encrypted() ? PG_ADD_EVENT_DOCUMENTS(PG_TSVECTOR_KEYED("u.t"))
                                      : PG_ADD_EVENT_DOCUMENTS(PG_TSVECTOR_PLAIN("u.t")),
               p);
#undef PG_ADD_EVENT_DOCUMENTS
}

Result<std::string> OpenedText(const PgSealer& sealer, PgColumn column, std::string_view record,
                               const PgResult& r, int row, int col) {
  if (r.IsNull(row, col)) return std::string();
  return sealer.OpenText(column, record, r.Text(row, col));
}

Result<std::optional<std::string>> DocumentTextFromRow(const PgSealer& sealer, const PgResult& r,
                                                       int row, int col) {
  using Text = std::optional<std::string>;
  if (!r.IsNull(row, col)) {
    if (r.IsNull(row, col + 5)) return Text();
    // A code write's content is sealed under its (keyed) content digest.
    const std::string_view record = r.Text(row, col + 4);
    ASSIGN_OR_RETURN(std::string path,
                     OpenedText(sealer, PgColumn::kCodeFilePath, record, r, row, col + 5));
    ASSIGN_OR_RETURN(std::string code,
                     OpenedText(sealer, PgColumn::kCodeNew, record, r, row, col + 6));
    return Text(CodeWriteText(path, code));
  }
  if (r.IsNull(row, col + 1)) return Text();
  const std::string_view event_id = r.Text(row, col + 1);
  ASSIGN_OR_RETURN(std::string text,
                   OpenedText(sealer, PgColumn::kEventText, event_id, r, row, col + 2));
  if (r.IsNull(row, col + 3)) return Text(SearchText(text, std::string_view()));
  ASSIGN_OR_RETURN(std::string body,
                   OpenedText(sealer, PgColumn::kEventBody, event_id, r, row, col + 3));
  return Text(SearchText(text, body));
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
    ASSIGN_OR_RETURN(std::optional<std::string> text, DocumentTextFromRow(c.sealer(), r, i, 1));
    if (!text) {
      orphans.push_back(r.Int(i, 0));  // its event or write is gone
      continue;
    }
    ids.push_back(r.Int(i, 0));
    texts.push_back(TsVectorInput(c.sealer(), *text));
  }
  if (!ids.empty()) {
    PgParams u;
    u.Add(ns).Add(PgArray(ids)).Add(PgArray(texts));
#define PG_INDEX_DOCUMENTS(tsv)             \
  "UPDATE search_docs d SET tsv = " tsv     \
  " FROM unnest($2::bigint[], $3::text[]) " \
  "AS u(id, t) WHERE d.namespace = $1 AND d.doc_id = u.id"
    RETURN_IF_ERROR(c.Run(c.sealer().encrypted() ? PG_INDEX_DOCUMENTS(PG_TSVECTOR_KEYED("u.t"))
                                                 : PG_INDEX_DOCUMENTS(PG_TSVECTOR_PLAIN("u.t")),
                          u));
#undef PG_INDEX_DOCUMENTS
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
