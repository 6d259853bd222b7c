#include "store/postgres/pg_index.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/json_parse.h"
#include "store/postgres/pg_fulltext_query.h"
#include "store/postgres/pg_search_docs.h"
#include "store/postgres/pg_store_internal.h"
#include "store/postgres/pg_vector_cache.h"

namespace sessiondb::postgres {
namespace {

// A session metadata field as text, from the metadata column m. The json
// type (not jsonb) and the guard keep a "\u0000" anywhere in a session's
// metadata from failing the whole query: such a session simply has none.
#define PG_METADATA_FIELD(m, key) \
  "CASE WHEN " m " NOT LIKE '%\\\\u0000%' THEN " m "::json ->> '" key "' END"

// The filter as SQL over search_docs d, events e, sessions s and code_writes
// c, with parameters $1 (namespace) and $2 .. $11 (AddFilterParams). Written
// once, so each statement is prepared once; an absent filter is a NULL. In an
// encrypted namespace the server cannot read a project or a path: there $9
// is NULL and $10, $11 list the sessions and code writes whose project the
// process found under the filter's (ProjectMatches).
#define PG_FILTER_JOINS                                                      \
  " LEFT JOIN events e ON d.code_id IS NULL AND e.namespace = d.namespace"   \
  " AND e.session_id = d.session_id AND e.seq = d.seq"                       \
  " LEFT JOIN sessions s ON d.code_id IS NULL AND s.namespace = d.namespace" \
  " AND s.id = d.session_id"                                                 \
  " LEFT JOIN code_writes c ON c.namespace = d.namespace AND c.id = d.code_id "
#define PG_FILTER_WHERE \
  " d.namespace = $1 AND (CASE WHEN d.code_id IS NULL THEN NOT s.deleted ELSE NOT EXISTS" \
  "  (SELECT 1 FROM sessions t WHERE t.namespace = d.namespace AND t.id = c.session_id"  \
  "   AND t.trashed_ms IS NOT NULL) END)"                                                \
  " AND ($2::text IS NULL OR d.session_id = $2)"                                        \
  " AND ($3::boolean OR d.code_id IS NOT NULL)"                                         \
  " AND ($4::boolean OR d.code_id IS NULL)"                                             \
  " AND ($5::text IS NULL OR e.role = $5)"                                              \
  " AND ($6::bigint IS NULL OR coalesce(e.ts_ms, c.created_ms) >= $6)"                  \
  " AND ($7::bigint IS NULL OR coalesce(e.ts_ms, c.created_ms) < $7)"                   \
  " AND ($8::boolean IS NULL OR d.code_id IS NOT NULL OR s.archived = $8)"              \
  " AND ($9::text IS NULL"                                                              \
  "  OR starts_with(coalesce(c.project, " PG_METADATA_FIELD("s.metadata", "project")    \
  "    , '') || '/', $9)"                                                               \
  "  OR starts_with(coalesce(c.file_path, " PG_METADATA_FIELD("s.metadata", "cwd")      \
  "    , '') || '/', $9))"                                                              \
  " AND ($10::text[] IS NULL OR CASE WHEN d.code_id IS NULL"                            \
  "  THEN d.session_id = ANY($10) ELSE d.code_id = ANY($11::bigint[]) END) "

// The conditions of a filter that names no role, time, archive state or
// project ($5 .. $11 NULL), which need neither a match's event nor its
// session's row: the deleted sessions of the namespace are found once (a
// hashed subplan), and a code write's session only for a code write. Most
// searches are such; joining each match's session instead made the planner
// hash every session of the store for a rare word's ten matches.
#define PG_FILTER_WHERE_PLAIN                                                               \
  " d.namespace = $1 AND CASE WHEN d.code_id IS NULL"                                       \
  "  THEN d.session_id NOT IN (SELECT x.id FROM sessions x"                                 \
  "   WHERE x.namespace = $1 AND x.deleted)"                                                \
  "  ELSE NOT EXISTS (SELECT 1 FROM code_writes c JOIN sessions t"                          \
  "   ON t.namespace = c.namespace AND t.id = c.session_id WHERE c.namespace = d.namespace" \
  "   AND c.id = d.code_id AND t.trashed_ms IS NOT NULL) END"                               \
  " AND ($2::text IS NULL OR d.session_id = $2)"                                            \
  " AND ($3::boolean OR d.code_id IS NOT NULL)"                                             \
  " AND ($4::boolean OR d.code_id IS NULL)"                                                 \
  " AND $5::text IS NULL AND $6::bigint IS NULL AND $7::bigint IS NULL"                     \
  " AND $8::boolean IS NULL AND $9::text IS NULL AND $10::text[] IS NULL"                   \
  " AND $11::bigint[] IS NULL "

// The sessions and code writes of an encrypted namespace whose project
// passes a project filter, found by opening their metadata and paths here.
struct ProjectMatches {
  std::vector<std::string> session_ids;
  std::vector<int64_t> code_ids;
};

// True when `f` and `matches` need no more than PG_FILTER_WHERE_PLAIN.
bool FilterIsPlain(const SearchFilter& f, const std::optional<ProjectMatches>& matches) {
  return !f.role.has_value() && f.since_ms == 0 && f.until_ms == 0 &&
         f.archived == ArchiveFilter::kAll && f.project.empty() && !matches.has_value();
}

void AddFilterParams(const SearchFilter& f, const std::optional<ProjectMatches>& matches,
                     PgParams* p) {
  if (f.session_id.empty())
    p->AddNull();
  else
    p->Add(std::string_view(f.session_id));
  p->Add(f.events);
  p->Add(f.code_writes);
  if (f.role)
    p->Add(RoleName(*f.role));
  else
    p->AddNull();
  if (f.since_ms > 0)
    p->Add(f.since_ms);
  else
    p->AddNull();
  if (f.until_ms > 0)
    p->Add(f.until_ms);
  else
    p->AddNull();
  switch (f.archived) {
    case ArchiveFilter::kAll:
      p->AddNull();
      break;
    case ArchiveFilter::kActive:
      p->Add(false);
      break;
    case ArchiveFilter::kArchived:
      p->Add(true);
      break;
  }
  if (f.project.empty() || matches)
    p->AddNull();
  else
    p->Add(std::string_view(f.project));
  if (matches) {
    p->Add(PgArray(matches->session_ids)).Add(PgArray(matches->code_ids));
  } else {
    p->AddNull().AddNull();
  }
}

// The text a filter compares must be storable: a NUL would cut the parameter.
Status CheckFilter(const SearchFilter& f) {
  RETURN_IF_ERROR(CheckNoNul(f.session_id, "the session filter"));
  return CheckNoNul(f.project, "the project filter");
}

// A string member, or the JSON text of any other non-null one ("" when absent).
std::string MemberText(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The project a session's metadata names: "project", else "cwd", else "".
std::string ProjectOf(std::string_view metadata) {
  nlohmann::json doc = ParseJson(metadata).value_or(nlohmann::json());
  if (!doc.is_object()) return "";
  std::string project = MemberText(doc, "project");
  return project.empty() ? MemberText(doc, "cwd") : project;
}

// The agent's own session id an imported session carries, else "".
std::string AgentSessionOf(std::string_view metadata) {
  nlohmann::json doc = ParseJson(metadata).value_or(nlohmann::json());
  return doc.is_object() ? MemberText(doc, "source_session_id") : std::string();
}

// True when a folder filter (with its '/') holds `folder`, as the SQL's
// starts_with(folder || '/', filter) decides.
bool UnderFolder(std::string_view folder, std::string_view filter) {
  return (std::string(folder) + "/").starts_with(filter);
}

// What PG_FILTER_WHERE's $9 decides in SQL on plaintext, decided here on the
// opened values: nullopt when the namespace is not encrypted or the filter
// names no project. Reads every session's metadata and every code write's
// project and path: the price of a project filter on an encrypted namespace.
Result<std::optional<ProjectMatches>> MatchProject(PgConnection& c, const std::string& ns,
                                                   const SearchFilter& f) {
  const PgSealer& sealer = c.sealer();
  if (!sealer.encrypted() || f.project.empty()) return std::optional<ProjectMatches>();
  ProjectMatches out;
  PgParams p;
  p.Add(ns);
  ASSIGN_OR_RETURN(PgResult sessions,
                   c.Exec("SELECT id, metadata FROM sessions WHERE namespace = $1", p));
  for (int i = 0; i < sessions.rows(); ++i) {
    const std::string_view id = sessions.Text(i, 0);
    ASSIGN_OR_RETURN(std::string metadata,
                     OpenedText(sealer, PgColumn::kSessionMetadata, id, sessions, i, 1));
    nlohmann::json doc = ParseJson(metadata).value_or(nlohmann::json());
    if (!doc.is_object()) doc = nlohmann::json::object();
    if (UnderFolder(MemberText(doc, "project"), f.project) ||
        UnderFolder(MemberText(doc, "cwd"), f.project)) {
      out.session_ids.emplace_back(id);
    }
  }
  ASSIGN_OR_RETURN(out.code_ids,
                   CodeWritesWhere(c, ns, [&](std::string_view project, std::string_view path) {
                     return UnderFolder(project, f.project) || UnderFolder(path, f.project);
                   }));
  return std::optional<ProjectMatches>(std::move(out));
}

// $1 the namespace and $2 .. $11 the filter (AddFilterParams) of a
// statement over PG_FILTER_JOINS and PG_FILTER_WHERE; `*matches` gets the
// project's sessions and code writes when they are found here (MatchProject).
Result<PgParams> NamespaceAndFilter(PgConnection& c, const std::string& ns, const SearchFilter& f,
                                    std::optional<ProjectMatches>* matches) {
  ASSIGN_OR_RETURN(*matches, MatchProject(c, ns, f));
  PgParams p;
  p.Add(ns);
  AddFilterParams(f, *matches, &p);
  return p;
}

constexpr int64_t kVectorPage = 2048;

}  // namespace

Result<std::vector<int64_t>> CodeWritesWhere(
    PgConnection& c, const std::string& ns,
    const std::function<bool(std::string_view project, std::string_view file_path)>& keep) {
  PgParams p;
  p.Add(ns);
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, content_sha256, project, file_path"
                                      " FROM code_writes WHERE namespace = $1 ORDER BY id",
                                      p));
  std::vector<int64_t> out;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string_view record = r.Text(i, 1);
    ASSIGN_OR_RETURN(std::string project,
                     OpenedText(c.sealer(), PgColumn::kCodeProject, record, r, i, 2));
    ASSIGN_OR_RETURN(std::string path,
                     OpenedText(c.sealer(), PgColumn::kCodeFilePath, record, r, i, 3));
    if (keep(project, path)) out.push_back(r.Int(i, 0));
  }
  return out;
}

Result<std::unique_ptr<store::IndexBackend>> PgStore::OpenIndexBackend() {
  // A namespace is encrypted or not for the store's whole life; only its
  // key may change (crypto-shredding), so each call takes the sealer anew.
  ASSIGN_OR_RETURN(bool encrypted,
                   Run([](PgConnection& c) -> Result<bool> { return c.sealer().encrypted(); }));
  return std::unique_ptr<store::IndexBackend>(std::make_unique<PgIndex>(this, encrypted));
}

// ---- Full text ----------------------------------------------------------------

std::string PgIndex::Expression(const store::TextQuery& query) const {
  // The words, not their keyed tokens: this is shown to the person who searched.
  return encrypted_ ? RenderTsQuery(WithoutPrefixes(query), PgSealer())
                    : RenderTsQuery(query, PgSealer());
}

// The newest $13 matches of the tsquery $12 passing the filter, each with
// ts_rank_cd normalised by the document's length (1: divided by 1 + log of
// its word count), as BM25 is: on the labelled quality set its nDCG@10
// equals the embedded store's (docs/postgres.md, "Keyword search").
#define PG_RANK_SQL(JOINS, WHERE, TSQUERY) \
  "SELECT m.doc_id, ts_rank_cd(m.tsv, " TSQUERY("$12") ", 1) FROM (" \
  "SELECT d.doc_id, d.tsv FROM search_docs d" JOINS          \
  "WHERE d.tsv @@ " TSQUERY("$12") " AND" WHERE              \
  "ORDER BY d.doc_id DESC LIMIT $13) m ORDER BY m.doc_id DESC"
// [keyed]: an encrypted namespace's query, whose lexemes are keyed tokens.
constexpr const char* kRankSql[2] = {
    PG_RANK_SQL(PG_FILTER_JOINS, PG_FILTER_WHERE, PG_TSQUERY_PLAIN),
    PG_RANK_SQL(PG_FILTER_JOINS, PG_FILTER_WHERE, PG_TSQUERY_KEYED)};
constexpr const char* kRankSqlPlain[2] = {
    PG_RANK_SQL(" ", PG_FILTER_WHERE_PLAIN, PG_TSQUERY_PLAIN),
    PG_RANK_SQL(" ", PG_FILTER_WHERE_PLAIN, PG_TSQUERY_KEYED)};
#undef PG_RANK_SQL

Result<store::KeywordRanking> PgIndex::RankKeyword(const store::TextQuery& query,
                                                   const SearchFilter& filter,
                                                   int64_t max_candidates) {
  store::KeywordRanking ranking;
  if (RenderTsQuery(query, PgSealer()).empty() || max_candidates <= 0) return ranking;
  if (!filter.events && !filter.code_writes) return ranking;
  RETURN_IF_ERROR(CheckFilter(filter));
  // The newest matches only (the LIMIT bounds the work for a common term),
  // then ranked: ts_rank_cd runs on those rows alone.
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) -> Result<PgResult> {
                     std::optional<ProjectMatches> matches;
                     ASSIGN_OR_RETURN(PgParams p, NamespaceAndFilter(c, ns(), filter, &matches));
                     p.Add(RenderTsQuery(query, c.sealer())).Add(max_candidates + 1);
                     const int keyed = c.sealer().encrypted() ? 1 : 0;
                     return c.ExecPlanned(
                         FilterIsPlain(filter, matches) ? kRankSqlPlain[keyed] : kRankSql[keyed],
                         p);
                   }));
  for (int i = 0; i < r.rows(); ++i) {
    ranking.docs.push_back({r.Int(i, 0), std::strtod(std::string(r.Text(i, 1)).c_str(), nullptr)});
  }
  if (encrypted_) RETURN_IF_ERROR(DropExcludedPrefixes(query, &ranking));
  store::FinishRanking(max_candidates, &ranking);
  return ranking;
}

Status PgIndex::DropExcludedPrefixes(const store::TextQuery& query,
                                     store::KeywordRanking* ranking) {
  const bool any = std::any_of(query.none_of.begin(), query.none_of.end(),
                               [](const store::TextPhrase& p) { return p.prefix; });
  if (!any || ranking->docs.empty()) return Status::Ok();
  std::vector<int64_t> ids;
  for (const store::RankedDoc& d : ranking->docs) ids.push_back(d.doc_id);
  PgParams p;
  p.Add(ns()).Add(PgArray(ids));
  const PgSealer* sealer = nullptr;
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     sealer = &c.sealer();
                     return c.Exec("SELECT d.doc_id," PG_DOCUMENT_COLUMNS
                                   "FROM search_docs d" PG_DOCUMENT_JOINS
                                   "WHERE d.namespace = $1 AND d.doc_id = ANY($2::bigint[])",
                                   p);
                   }));
  std::set<int64_t> excluded;
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(std::optional<std::string> text, DocumentTextFromRow(*sealer, r, i, 1));
    if (text && HoldsPrefixPhrase(*text, query.none_of)) excluded.insert(r.Int(i, 0));
  }
  std::erase_if(ranking->docs,
                [&](const store::RankedDoc& d) { return excluded.contains(d.doc_id); });
  return Status::Ok();
}

Result<store::FilteredDocs> PgIndex::DocsPassingFilter(const SearchFilter& filter) {
  store::FilteredDocs out;
  if (store::FilterIsEmpty(filter)) {
    out.unfiltered = true;
    return out;
  }
  RETURN_IF_ERROR(CheckFilter(filter));
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) -> Result<PgResult> {
                     std::optional<ProjectMatches> matches;
                     ASSIGN_OR_RETURN(PgParams p, NamespaceAndFilter(c, ns(), filter, &matches));
                     return c.Exec("SELECT d.doc_id FROM search_docs d" PG_FILTER_JOINS
                                   "WHERE" PG_FILTER_WHERE "ORDER BY d.doc_id",
                                   p);
                   }));
  out.doc_ids.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) out.doc_ids.push_back(r.Int(i, 0));
  return out;
}

Result<std::vector<int64_t>> PgIndex::CandidatesPassingFilter(const SearchFilter& filter,
                                                              std::span<const int64_t> candidates) {
  std::vector<int64_t> out;
  if (candidates.empty()) return out;
  RETURN_IF_ERROR(CheckFilter(filter));
  const std::vector<int64_t> ids(candidates.begin(), candidates.end());
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) -> Result<PgResult> {
                     std::optional<ProjectMatches> matches;
                     ASSIGN_OR_RETURN(PgParams p, NamespaceAndFilter(c, ns(), filter, &matches));
                     p.Add(PgArray(ids));
                     // The candidates first: each found by the primary key,
                     // then the filter checked on it alone.
                     return c.Exec("SELECT DISTINCT d.doc_id FROM search_docs d" PG_FILTER_JOINS
                                   "WHERE d.doc_id = ANY($12::bigint[]) AND" PG_FILTER_WHERE
                                   "ORDER BY d.doc_id",
                                   p);
                   }));
  out.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.Int(i, 0));
  return out;
}

// The columns HitFromRow reads, over search_docs d and the joins of
// PG_HIT_JOINS.
#define PG_HIT_COLUMNS                                                       \
  " d.session_id, d.seq, d.code_id, e.id, e.type, e.role, e.ts_ms, s.title," \
  " s.deleted, c.file_path, c.created_ms, s.trashed_ms IS NOT NULL, c.content_sha256 "
#define PG_HIT_JOINS                                                           \
  " LEFT JOIN events e ON d.code_id IS NULL AND e.namespace = d.namespace"     \
  "  AND e.session_id = d.session_id AND e.seq = d.seq"                        \
  " LEFT JOIN sessions s ON s.namespace = d.namespace AND s.id = d.session_id" \
  " LEFT JOIN code_writes c ON c.namespace = d.namespace AND c.id = d.code_id "
constexpr int kHitColumns = 13;

namespace {

// LoadHitDetails' answer from a row whose columns from `col` on are
// PG_HIT_COLUMNS.
Result<bool> HitFromRow(const PgSealer& sealer, const PgResult& r, int row, int col,
                        SearchHit* hit) {
  auto at = [col](int i) { return col + i; };
  hit->session_id = std::string(r.Text(row, at(0)));
  hit->seq = r.Int(row, at(1));
  ASSIGN_OR_RETURN(hit->session_title,
                   OpenedText(sealer, PgColumn::kSessionTitle, hit->session_id, r, row, at(7)));
  if (!r.IsNull(row, at(2))) {
    hit->kind = HitKind::kCodeWrite;
    hit->code_id = r.Int(row, at(2));
    if (!r.IsNull(row, at(9))) {
      ASSIGN_OR_RETURN(hit->file_path, OpenedText(sealer, PgColumn::kCodeFilePath,
                                                  r.Text(row, at(12)), r, row, at(9)));
    }
    hit->time_ms = r.Int(row, at(10));
    // A code write recorded for a trashed session is hidden until it is restored.
    return !r.IsNull(row, at(9)) && !r.Bool(row, at(11));
  }
  if (r.IsNull(row, at(3)) || r.IsNull(row, at(8)) || r.Bool(row, at(8))) return false;
  hit->event_id = std::string(r.Text(row, at(3)));
  const std::string_view type = r.Text(row, at(4));
  hit->kind = type == "compaction"      ? HitKind::kCompaction
              : type == "resource_view" ? HitKind::kResourceView
                                        : HitKind::kMessage;
  if (!r.IsNull(row, at(5))) {
    Result<Role> role = ParseRole(r.Text(row, at(5)));
    if (role) hit->role = *role;
  }
  hit->time_ms = r.Int(row, at(6));
  return true;
}

// A page's documents (LoadPage), and whether one matches (MatchSnippet);
// [keyed] as kRankSql.
#define PG_PAGE_SQL(TSQUERY)                                                              \
  "SELECT d.doc_id, ($3 <> '' AND d.tsv @@ " TSQUERY(                                     \
      "$3") ")," PG_HIT_COLUMNS "," PG_DOCUMENT_COLUMNS "FROM search_docs d" PG_HIT_JOINS \
            "WHERE d.namespace = $1 AND d.doc_id = ANY($2::bigint[])"
constexpr const char* kPageSql[2] = {PG_PAGE_SQL(PG_TSQUERY_PLAIN), PG_PAGE_SQL(PG_TSQUERY_KEYED)};
#undef PG_PAGE_SQL
#define PG_MATCHES_SQL(TSQUERY) \
  "SELECT 1 FROM search_docs WHERE namespace = $1 AND doc_id = $2 AND tsv @@ " TSQUERY("$3")
constexpr const char* kMatchesSql[2] = {PG_MATCHES_SQL(PG_TSQUERY_PLAIN),
                                        PG_MATCHES_SQL(PG_TSQUERY_KEYED)};
#undef PG_MATCHES_SQL

// The snippet of a document that matched `query`, made here from its text
// (KeyedHeadline): the server is asked only whether it matches, in the
// query that loaded it, so a page of snippets costs no query of its own.
store::Snippet SnippetOfText(std::string_view text, const store::TextQuery& query, bool encrypted) {
  const std::string_view original = IndexedPart(text);
  const std::string indexable = IndexableText(text);
  const std::string headline =
      KeyedHeadline(indexable, encrypted ? WithoutPrefixes(query) : query, !encrypted);
  return SnippetFromHeadline(headline, indexable, original);
}

}  // namespace

Result<bool> PgIndex::LoadHitDetails(int64_t doc_id, SearchHit* hit) {
  PgParams p;
  p.Add(ns()).Add(doc_id);
  const PgSealer* sealer = nullptr;
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     sealer = &c.sealer();
                     return c.Exec("SELECT" PG_HIT_COLUMNS "FROM search_docs d" PG_HIT_JOINS
                                   "WHERE d.namespace = $1 AND d.doc_id = $2",
                                   p);
                   }));
  if (r.rows() == 0) return false;
  return HitFromRow(*sealer, r, 0, 0, hit);
}

Result<std::vector<store::IndexBackend::PageDocument>> PgIndex::LoadPage(
    const store::TextQuery& query, std::span<const PageRequest> docs) {
  std::vector<PageDocument> out(docs.size());
  if (docs.empty()) return out;
  std::vector<int64_t> ids;
  for (const PageRequest& d : docs) ids.push_back(d.doc_id);
  const bool any_query = !RenderTsQuery(query, PgSealer()).empty();
  const PgSealer* sealer = nullptr;
  // One query for the page: each document's details, its text, and whether
  // it matches the query (a snippet is made only for a document that does,
  // as MatchSnippet does).
  ASSIGN_OR_RETURN(
      PgResult r, Run([&](PgConnection& c) {
        sealer = &c.sealer();
        PgParams p;
        p.Add(ns()).Add(PgArray(ids)).Add(any_query ? RenderTsQuery(query, c.sealer()) : "");
        return c.Exec(kPageSql[c.sealer().encrypted() ? 1 : 0], p);
      }));
  std::unordered_map<int64_t, size_t> place;  // doc_id -> its place in `docs`
  for (size_t i = 0; i < docs.size(); ++i) place.emplace(docs[i].doc_id, i);
  for (int i = 0; i < r.rows(); ++i) {
    const auto found = place.find(r.Int(i, 0));
    if (found == place.end()) return Err(Status::Internal("a page row that was not asked for"));
    const size_t at = found->second;
    PageDocument& d = out[at];
    ASSIGN_OR_RETURN(d.present, HitFromRow(*sealer, r, i, 2, &d.hit));
    if (!d.present) continue;
    ASSIGN_OR_RETURN(std::optional<std::string> text,
                     DocumentTextFromRow(*sealer, r, i, 2 + kHitColumns));
    if (!docs[at].keyword) {
      d.text = std::move(text);
    } else if (text && any_query && r.Bool(i, 1)) {
      d.snippet = SnippetOfText(*text, query, encrypted_);
    }
  }
  return out;
}

Result<store::Snippet> PgIndex::MatchSnippet(const store::TextQuery& query, int64_t doc_id) {
  if (RenderTsQuery(query, PgSealer()).empty()) return store::Snippet{};
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadDocumentText(doc_id));
  if (!text) return store::Snippet{};
  // Only a document that matches gets a snippet, as with FTS5; the server
  // is asked whether it does, and the snippet is made here (as LoadPage
  // makes a page's), so no text function runs on an encrypted namespace's.
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     PgParams p;
                     p.Add(ns()).Add(doc_id).Add(RenderTsQuery(query, c.sealer()));
                     return c.Exec(kMatchesSql[c.sealer().encrypted() ? 1 : 0], p);
                   }));
  if (r.rows() == 0) return store::Snippet{};
  return SnippetOfText(*text, query, encrypted_);
}

Result<std::optional<std::string>> PgIndex::ReadDocumentText(int64_t doc_id) {
  PgParams p;
  p.Add(ns()).Add(doc_id);
  const PgSealer* sealer = nullptr;
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     sealer = &c.sealer();
                     return c.Exec("SELECT" PG_DOCUMENT_COLUMNS
                                   "FROM search_docs d" PG_DOCUMENT_JOINS
                                   "WHERE d.namespace = $1 AND d.doc_id = $2",
                                   p);
                   }));
  if (r.rows() == 0) return std::optional<std::string>();
  return DocumentTextFromRow(*sealer, r, 0, 0);
}

Result<bool> PgIndex::HoldsWord(const std::string& word) {
  if (encrypted_) return IndexBackend::HoldsWord(word);
  PgParams p;
  p.Add(ns()).Add(IndexableText(word));
  // A word that makes no lexeme counts as held: there is nothing to correct.
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     return c.Exec(
                         "SELECT bool_and(coalesce((SELECT sum(v.docs) FROM search_vocab v"
                         " WHERE v.namespace = $1 AND v.word = t.w), 0) > 0)"
                         " IS NOT FALSE FROM unnest(tsvector_to_array(" PG_TSVECTOR_PLAIN("$2")
                         ")) AS t(w)"
                         // The vocabulary keeps lexemes of 3 to 66 characters.
                         " WHERE length(t.w) BETWEEN 3 AND 66",
                         p);
                   }));
  return r.rows() == 1 && r.Bool(0, 0);
}

Result<std::vector<store::VocabularyWord>> PgIndex::VocabularyWords(std::string_view prefix,
                                                                    int min_length, int max_length,
                                                                    int limit) {
  std::vector<store::VocabularyWord> out;
  if (encrypted_) return out;
  // A LIKE prefix: on a "C" column the planner makes it the index range
  // (and finds a valid upper bound for any UTF-8 prefix).
  std::string pattern;
  for (char ch : prefix) {
    if (ch == '%' || ch == '_' || ch == '\\') pattern += '\\';
    pattern += ch;
  }
  pattern += '%';
  PgParams p;
  p.Add(ns()).Add(pattern).Add(int64_t{min_length}).Add(int64_t{max_length}).Add(int64_t{limit});
  // The primary key (namespace, word COLLATE "C") finds the range.
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     return c.Exec(
                         "SELECT word, sum(docs) FROM search_vocab WHERE namespace = $1"
                         " AND word LIKE $2 AND length(word) BETWEEN $3 AND $4"
                         " GROUP BY word HAVING sum(docs) > 0 ORDER BY word LIMIT $5",
                         p);
                   }));
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back({.word = std::string(r.Text(i, 0)), .documents = r.Int(i, 1)});
  }
  return out;
}

Status PgIndex::RebuildKeywordIndex() {
  PgParams p;
  p.Add(ns());
  RETURN_IF_ERROR(Run([&](PgConnection& c) -> Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    // Documents for events and writes the index lost, none for those gone.
    RETURN_IF_ERROR(c.Run(
        "DELETE FROM search_docs d WHERE d.namespace = $1 AND ((d.code_id IS NULL AND NOT EXISTS"
        " (SELECT 1 FROM events e WHERE e.namespace = d.namespace AND e.session_id = d.session_id"
        " AND e.seq = d.seq)) OR (d.code_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM code_writes"
        " c WHERE c.namespace = d.namespace AND c.id = d.code_id)))",
        p));
    RETURN_IF_ERROR(c.Run(
        "INSERT INTO search_docs (namespace, session_id, seq) SELECT e.namespace, e.session_id,"
        " e.seq FROM events e WHERE e.namespace = $1 AND NOT EXISTS (SELECT 1 FROM search_docs d"
        " WHERE d.namespace = e.namespace AND d.code_id IS NULL AND d.session_id = e.session_id"
        " AND d.seq = e.seq) ORDER BY e.ts_ms, e.session_id, e.seq",
        p));
    RETURN_IF_ERROR(
        c.Run("INSERT INTO search_docs (namespace, session_id, seq, code_id) SELECT c.namespace,"
              " c.session_id, 0, c.id FROM code_writes c WHERE c.namespace = $1 AND NOT EXISTS"
              " (SELECT 1 FROM search_docs d WHERE d.namespace = c.namespace AND d.code_id = c.id)"
              " ORDER BY c.id",
              p));
    return txn.Commit();
  }));
  // Then every document's words again, a page per transaction: searches keep
  // finding the old words of a page until its new ones commit.
  int64_t after = 0;
  while (true) {
    ASSIGN_OR_RETURN(
        std::optional<int64_t> last, Run([&](PgConnection& c) -> Result<std::optional<int64_t>> {
          ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
          ASSIGN_OR_RETURN(std::optional<int64_t> page, IndexDocuments(c, ns(), after, 512, false));
          RETURN_IF_ERROR(txn.Commit());
          return page;
        }));
    if (!last) return Status::Ok();
    after = *last;
  }
}

// ---- Vectors ------------------------------------------------------------------

// The documents after the newest with a vector of the model ($2), in $1.
#define PG_PENDING_DOCS                                                  \
  " d.namespace = $1 AND d.doc_id > coalesce((SELECT max(m.doc_id) FROM" \
  " embeddings m WHERE m.namespace = $1 AND m.model = $2), 0) "

Result<int64_t> PgIndex::CountPendingEmbeddings(const std::string& model) {
  // Two statements, not PG_PENDING_DOCS's one: with the newest embedded id
  // unknown when the count is planned, the planner guessed a third of the
  // namespace's documents and started two parallel workers to count them,
  // about 40 ms on every vector query even when none were pending. Given the
  // id, it sees how few documents follow it.
  return Run([&](PgConnection& c) -> Result<int64_t> {
    PgParams newest;
    newest.Add(ns()).Add(model);
    ASSIGN_OR_RETURN(PgResult last, c.Exec("SELECT coalesce(max(doc_id), 0) FROM embeddings"
                                           " WHERE namespace = $1 AND model = $2",
                                           newest));
    PgParams after;
    after.Add(ns()).Add(last.rows() == 1 ? last.Int(0, 0) : int64_t{0});
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT count(*) FROM search_docs"
                                        " WHERE namespace = $1 AND doc_id > $2",
                                        after));
    return r.rows() == 1 ? r.Int(0, 0) : int64_t{0};
  });
}

Result<std::vector<store::DocumentText>> PgIndex::PendingDocuments(const std::string& model,
                                                                   int limit) {
  std::vector<store::DocumentText> out;
  if (limit <= 0) return out;
  PgParams p;
  p.Add(ns()).Add(model).Add(static_cast<int64_t>(limit));
  const PgSealer* sealer = nullptr;
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     sealer = &c.sealer();
                     return c.Exec("SELECT d.doc_id," PG_DOCUMENT_COLUMNS
                                   "FROM search_docs d" PG_DOCUMENT_JOINS "WHERE" PG_PENDING_DOCS
                                   "ORDER BY d.doc_id LIMIT $3",
                                   p);
                   }));
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(std::optional<std::string> text, DocumentTextFromRow(*sealer, r, i, 1));
    out.push_back({r.Int(i, 0), text.value_or("")});
  }
  return out;
}

Status PgIndex::PutVectors(const std::string& model,
                           std::span<const store::EncodedVector> vectors) {
  if (vectors.empty()) return Status::Ok();
  // One statement is one transaction. A document deleted since it was read
  // gets no vector.
  return Run([&](PgConnection& c) {
    std::vector<int64_t> ids;
    std::vector<std::string> hex;
    for (const store::EncodedVector& v : vectors) {
      ids.push_back(v.doc_id);
      // Sealed under the document's id. An empty vector (nothing to embed)
      // stays empty: the scans skip it, and it tells only that the text was empty.
      hex.push_back(PgByteaHex(
          v.encoded.empty()
              ? std::string()
              : c.sealer().Bytes(PgColumn::kEmbedding, std::to_string(v.doc_id), v.encoded)));
    }
    PgParams p;
    p.Add(ns()).Add(model).Add(PgArray(ids)).Add(PgArray(hex));
    return c.Run(
        "INSERT INTO embeddings (namespace, model, doc_id, vector) SELECT $1, $2, u.id, u.v"
        " FROM unnest($3::bigint[], $4::bytea[]) AS u(id, v) WHERE EXISTS (SELECT 1 FROM"
        " search_docs d WHERE d.namespace = $1 AND d.doc_id = u.id)"
        " ON CONFLICT (namespace, model, doc_id) DO UPDATE SET vector = excluded.vector",
        p);
  });
}

Result<int64_t> PgIndex::ScanVectors(
    const std::string& model, int64_t after_doc_id,
    const std::function<void(int64_t doc_id, std::string_view encoded)>& visit) {
  // Pages, not one result: a million vectors never sit in memory at once.
  int64_t last = after_doc_id;
  while (true) {
    PgParams p;
    p.Add(ns()).Add(model).Add(last).Add(kVectorPage);
    const PgSealer* sealer = nullptr;
    ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                       sealer = &c.sealer();
                       // Binary results for the bytes; the id as text,
                       // under a name that ORDER BY does not take for it.
                       return c.Exec(
                           "SELECT doc_id::text AS id_text, vector FROM embeddings"
                           " WHERE namespace = $1 AND model = $2 AND doc_id > $3"
                           " AND length(vector) > 0 ORDER BY doc_id LIMIT $4",
                           p, /*binary_result=*/true);
                     }));
    for (int i = 0; i < r.rows(); ++i) {
      last = r.Int(i, 0);
      if (!sealer->encrypted()) {
        visit(last, r.Text(i, 1));
        continue;
      }
      ASSIGN_OR_RETURN(std::string vector,
                       sealer->OpenBytes(PgColumn::kEmbedding, std::to_string(last), r.Text(i, 1)));
      visit(last, vector);
    }
    if (r.rows() < kVectorPage) return last;
  }
}

Result<int64_t> PgIndex::VectorCount(const std::string& model) {
  PgParams p;
  p.Add(ns()).Add(model);
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     return c.Exec(
                         "SELECT count(*) FROM embeddings WHERE namespace = $1"
                         " AND model = $2 AND length(vector) > 0",
                         p);
                   }));
  return r.rows() == 1 ? r.Int(0, 0) : 0;
}

Status PgIndex::ClearVectors() {
  PgParams p;
  p.Add(ns());
  return Run([&](PgConnection& c) -> Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    RETURN_IF_ERROR(c.Run("DELETE FROM embeddings WHERE namespace = $1", p));
    RETURN_IF_ERROR(
        c.Run("DELETE FROM index_meta WHERE namespace = $1 AND starts_with(key, 'hnsw:')", p));
    return txn.Commit();
  });
}

Result<std::optional<std::string>> PgIndex::GetMeta(std::string_view key) {
  RETURN_IF_ERROR(CheckNoNul(key, "an index setting's name"));
  if (const std::string dir = FilesDirectory(); !dir.empty() && IsVectorCacheKey(key)) {
    return Run([&](PgConnection& c) { return ReadVectorCover(c, ns(), dir, key, file_system()); });
  }
  PgParams p;
  p.Add(ns()).Add(key);
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     return c.Exec(
                         "SELECT value FROM index_meta WHERE namespace = $1"
                         " AND key = $2",
                         p);
                   }));
  if (r.rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(std::string(r.Text(0, 0)));
}

Status PgIndex::SetMeta(std::string_view key, std::string_view value) {
  RETURN_IF_ERROR(CheckNoNul(key, "an index setting's name"));
  RETURN_IF_ERROR(CheckNoNul(value, "an index setting"));
  if (const std::string dir = FilesDirectory(); !dir.empty() && IsVectorCacheKey(key)) {
    return Run(
        [&](PgConnection& c) { return WriteVectorCover(c, ns(), dir, key, value, file_system()); });
  }
  PgParams p;
  p.Add(ns()).Add(key).Add(value);
  return Run([&](PgConnection& c) {
    return c.Run(
        "INSERT INTO index_meta (namespace, key, value) VALUES ($1, $2, $3)"
        " ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
        p);
  });
}

std::string PgIndex::FilesDirectory() const {
  if (!files_directory_) {
    files_directory_ = std::string();
    if (!encrypted_) {
      Result<std::string> dir =
          store_->Run([&](PgConnection& c) { return VectorCacheDirectory(c, ns()); });
      // A server that cannot say who it is leaves the exact scan: never wrong.
      if (dir) files_directory_ = *dir;
    }
  }
  return *files_directory_;
}

// ---- Code memory --------------------------------------------------------------

Result<std::optional<std::string>> PgIndex::LastWholeFile(std::string_view file_path) {
  RETURN_IF_ERROR(CheckNoNul(file_path, "the file path"));
  const PgSealer* sealer = nullptr;
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     sealer = &c.sealer();
                     PgParams p;
                     p.Add(ns());
                     if (!sealer->encrypted()) {
                       p.Add(file_path);
                       return c.Exec(
                           "SELECT new_code, content_sha256 FROM code_writes WHERE namespace = $1"
                           " AND file_path = $2 AND whole_file"
                           " ORDER BY created_ms DESC, id DESC LIMIT 1",
                           p);
                     }
                     // The sealed path compares with nothing: its keyed
                     // token in the write's file row of code_edits does.
                     p.Add(EditToken(*sealer, PgColumn::kCodeFilePath, file_path) + " ");
                     return c.Exec(
                         "SELECT w.new_code, w.content_sha256 FROM code_writes w"
                         " JOIN code_edits e ON e.namespace = w.namespace AND e.code_id = w.id"
                         " AND e.function = '' WHERE w.namespace = $1"
                         " AND starts_with(e.file_path, $2) AND w.whole_file"
                         " ORDER BY w.created_ms DESC, w.id DESC LIMIT 1",
                         p);
                   }));
  if (r.rows() == 0) return std::optional<std::string>();
  ASSIGN_OR_RETURN(std::string code,
                   OpenedText(*sealer, PgColumn::kCodeNew, r.Text(0, 1), r, 0, 0));
  return std::optional<std::string>(std::move(code));
}

Result<RecordedWrite> PgIndex::InsertCodeWrite(const store::StoredCodeWrite& write,
                                               const std::vector<std::string>& functions) {
  // PostgreSQL text holds no NUL: such a write cannot be kept here.
  RETURN_IF_ERROR(CheckNoNul(write.file_path, "the written file's path"));
  RETURN_IF_ERROR(CheckNoNul(write.old_code, "the replaced code of " + write.file_path));
  RETURN_IF_ERROR(CheckNoNul(write.new_code, "the code written to " + write.file_path));
  for (const std::string* field :
       {&write.language, &write.session_id, &write.project, &write.tool, &write.content_sha256}) {
    RETURN_IF_ERROR(CheckNoNul(*field, "a field of the write to " + write.file_path));
  }
  for (const std::string& f : functions) {
    RETURN_IF_ERROR(CheckNoNul(f, "a function name in " + write.file_path));
  }
  return Run([&](PgConnection& c) -> Result<RecordedWrite> {
    RecordedWrite out;
    out.functions = functions;
    // In an encrypted namespace the write's identity is keyed (equal writes
    // stay equal, but a known file's hash finds nothing), and its content is
    // sealed under that identity.
    const PgSealer& sealer = c.sealer();
    const std::string digest = sealer.KeyedDigest(write.content_sha256);
    auto seal = [&](PgColumn column, std::string_view plain) {
      return sealer.Text(column, digest, plain);
    };
    std::vector<std::string> edited = {""};  // the file as a whole
    for (const std::string& f : functions) {
      edited.push_back(EditKey(sealer, PgColumn::kCodeFunction, f));
    }
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams w;
    w.Add(ns()).Add(seal(PgColumn::kCodeFilePath, write.file_path));
    w.Add(seal(PgColumn::kCodeOld, write.old_code)).Add(seal(PgColumn::kCodeNew, write.new_code));
    w.Add(write.language).Add(write.session_id).Add(seal(PgColumn::kCodeProject, write.project));
    w.Add(write.tool).Add(write.time_ms).Add(digest).Add(write.whole_file);
    // A racing writer of the same write waits here, then finds it kept.
    ASSIGN_OR_RETURN(PgResult inserted,
                     c.Exec("INSERT INTO code_writes (namespace, file_path, old_code, new_code,"
                            " language, session_id, project, tool, created_ms, content_sha256,"
                            " whole_file) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
                            " ON CONFLICT (namespace, content_sha256) DO NOTHING RETURNING id",
                            w));
    if (inserted.rows() == 0) {
      PgParams f;
      f.Add(ns()).Add(digest);
      ASSIGN_OR_RETURN(PgResult found, c.Exec("SELECT id FROM code_writes WHERE namespace = $1"
                                              " AND content_sha256 = $2",
                                              f));
      if (found.rows() == 1) out.code_id = found.Int(0, 0);
      RETURN_IF_ERROR(txn.Commit());
      return out;  // kept already: not a new edit either
    }
    out.code_id = inserted.Int(0, 0);
    out.recorded = true;
    PgParams e;
    e.Add(ns()).Add(EditKey(sealer, PgColumn::kCodeFilePath, write.file_path));
    e.Add(PgArray(edited)).Add(write.time_ms).Add(out.code_id);
    RETURN_IF_ERROR(
        c.Run("INSERT INTO code_edits (namespace, file_path, function, created_ms,"
              " code_id) SELECT $1, $2, f, $4, $5 FROM unnest($3::text[]) AS f",
              e));
    PgParams d;
    d.Add(ns()).Add(write.session_id).Add(out.code_id);
    d.Add(TsVectorInput(sealer, CodeWriteText(write.file_path, write.new_code)));
#define PG_INSERT_CODE_DOCUMENT(tsv)                                                               \
  "INSERT INTO search_docs (namespace, session_id, seq, code_id, tsv) VALUES ($1, $2, 0, $3, " tsv \
  ")"
    RETURN_IF_ERROR(c.Run(sealer.encrypted() ? PG_INSERT_CODE_DOCUMENT(PG_TSVECTOR_KEYED("$4"))
                                             : PG_INSERT_CODE_DOCUMENT(PG_TSVECTOR_PLAIN("$4")),
                          d));
#undef PG_INSERT_CODE_DOCUMENT
    RETURN_IF_ERROR(txn.Commit());
    return out;
  });
}

Result<std::optional<store::KeptCodeWrite>> PgIndex::CodeWriteOfDocument(int64_t doc_id) {
  PgParams p;
  p.Add(ns()).Add(doc_id);
  const PgSealer* sealer = nullptr;
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     sealer = &c.sealer();
                     return c.Exec(
                         "SELECT c.id, c.file_path, c.new_code, c.session_id,"
                         " c.project, c.created_ms, c.content_sha256 FROM search_docs d"
                         " JOIN code_writes c ON c.namespace = d.namespace"
                         " AND c.id = d.code_id WHERE d.namespace = $1"
                         " AND d.doc_id = $2",
                         p);
                   }));
  if (r.rows() == 0) return std::optional<store::KeptCodeWrite>();
  const std::string_view record = r.Text(0, 6);
  ASSIGN_OR_RETURN(std::string path, OpenedText(*sealer, PgColumn::kCodeFilePath, record, r, 0, 1));
  ASSIGN_OR_RETURN(std::string code, OpenedText(*sealer, PgColumn::kCodeNew, record, r, 0, 2));
  ASSIGN_OR_RETURN(std::string project,
                   OpenedText(*sealer, PgColumn::kCodeProject, record, r, 0, 4));
  return std::optional<store::KeptCodeWrite>(store::KeptCodeWrite{
      .code_id = r.Int(0, 0),
      .file_path = std::move(path),
      .new_code = std::move(code),
      .session_id = std::string(r.Text(0, 3)),
      .project = std::move(project),
      .time_ms = r.Int(0, 5),
  });
}

Result<store::EditCounts> PgIndex::CountEdits(std::string_view file_path, std::string_view function,
                                              int64_t since_30d_ms, int64_t since_24h_ms) {
  RETURN_IF_ERROR(CheckNoNul(file_path, "the file path"));
  RETURN_IF_ERROR(CheckNoNul(function, "the function name"));
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     const PgSealer& sealer = c.sealer();
                     PgParams p;
                     p.Add(ns());
                     if (!sealer.encrypted()) {
                       p.Add(file_path).Add(function).Add(since_30d_ms).Add(since_24h_ms);
                       return c.Exec(
                           "SELECT count(*), count(*) FILTER (WHERE created_ms >= $5)"
                           " FROM code_edits WHERE namespace = $1 AND file_path = $2"
                           " AND function = $3 AND created_ms >= $4",
                           p);
                     }
                     // EditKey: equal names have equal tokens.
                     p.Add(EditToken(sealer, PgColumn::kCodeFilePath, file_path) + " ");
                     p.Add(function.empty()
                               ? std::string()
                               : EditToken(sealer, PgColumn::kCodeFunction, function) + " ");
                     p.Add(since_30d_ms).Add(since_24h_ms);
                     return c.Exec(
                         "SELECT count(*), count(*) FILTER (WHERE created_ms >= $5)"
                         " FROM code_edits WHERE namespace = $1 AND starts_with(file_path, $2)"
                         " AND CASE WHEN $3 = '' THEN function = ''"
                         " ELSE starts_with(function, $3) END AND created_ms >= $4",
                         p);
                   }));
  store::EditCounts out;
  if (r.rows() == 1) {
    out.edits_30d = r.Int(0, 0);
    out.edits_24h = r.Int(0, 1);
  }
  return out;
}

Result<std::vector<ChurnEntry>> PgIndex::CountHotspots(std::string_view path_prefix, bool functions,
                                                       int limit, int64_t since_30d_ms,
                                                       int64_t since_24h_ms) {
  std::vector<ChurnEntry> out;
  if (limit <= 0) return out;
  RETURN_IF_ERROR(CheckNoNul(path_prefix, "the path prefix"));
  const PgSealer* sealer = nullptr;
  // COLLATE "C": paths and names in byte order, as the embedded store sorts them.
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     sealer = &c.sealer();
                     PgParams p;
                     p.Add(ns()).Add(since_30d_ms).Add(since_24h_ms).Add(functions);
                     if (sealer->encrypted()) {
                       // Grouped by token; the prefix, order and limit are
                       // applied below, on the opened names.
                       return c.Exec(
                           "SELECT min(file_path), min(function), count(*) AS n,"
                           " count(*) FILTER (WHERE created_ms >= $3) FROM code_edits"
                           " WHERE namespace = $1 AND created_ms >= $2 AND $4 = (function <> '')"
                           " GROUP BY split_part(file_path, ' ', 1), split_part(function, ' ', 1)",
                           p);
                     }
                     p.Add(path_prefix).Add(static_cast<int64_t>(limit));
                     return c.Exec(
                         "SELECT file_path, function, count(*) AS n,"
                         " count(*) FILTER (WHERE created_ms >= $3) AS recent FROM code_edits"
                         " WHERE namespace = $1 AND created_ms >= $2 AND $4 = (function <> '')"
                         " AND starts_with(file_path, $5) GROUP BY file_path, function"
                         " ORDER BY n DESC, recent DESC, file_path COLLATE \"C\","
                         " function COLLATE \"C\" LIMIT $6",
                         p);
                   }));
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(std::string path, OpenEditKey(*sealer, PgColumn::kCodeFilePath, r.Text(i, 0)));
    ASSIGN_OR_RETURN(std::string function,
                     OpenEditKey(*sealer, PgColumn::kCodeFunction, r.Text(i, 1)));
    if (!path.starts_with(path_prefix)) continue;
    out.push_back(ChurnEntry{.file_path = std::move(path),
                             .function = std::move(function),
                             .edits_24h = r.Int(i, 3),
                             .edits_30d = r.Int(i, 2)});
  }
  if (sealer->encrypted()) {
    std::sort(out.begin(), out.end(), [](const ChurnEntry& a, const ChurnEntry& b) {
      return std::tie(b.edits_30d, b.edits_24h, a.file_path, a.function) <
             std::tie(a.edits_30d, a.edits_24h, b.file_path, b.function);
    });
    if (out.size() > static_cast<size_t>(limit)) out.resize(static_cast<size_t>(limit));
  }
  return out;
}

Result<bool> PgIndex::FirstSighting(std::string_view key, int64_t now_ms, int64_t capacity) {
  RETURN_IF_ERROR(CheckNoNul(key, "the hook key"));
  return Run([&](PgConnection& c) -> Result<bool> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams p;
    // The key names a file: keyed, so it compares equal and shows nothing.
    p.Add(ns()).Add(c.sealer().KeyedDigest(key)).Add(now_ms);
    // A racing caller with the same key waits for this insert to commit,
    // then inserts nothing: exactly one of them sees a row inserted.
    ASSIGN_OR_RETURN(PgResult inserted,
                     c.Exec("INSERT INTO hook_seen (namespace, key, created_ms)"
                            " VALUES ($1, $2, $3) ON CONFLICT (namespace, key) DO NOTHING",
                            p));
    const bool first = inserted.Affected() == 1;
    if (first) {
      PgParams t;
      t.Add(ns()).Add(std::max<int64_t>(capacity, 1));
      RETURN_IF_ERROR(
          c.Run("DELETE FROM hook_seen h WHERE h.namespace = $1 AND h.key IN"
                " (SELECT key FROM hook_seen WHERE namespace = $1"
                " ORDER BY created_ms DESC, key COLLATE \"C\" OFFSET $2)",
                t));
    }
    RETURN_IF_ERROR(txn.Commit());
    return first;
  });
}

Result<std::vector<store::StoredToolCall>> PgIndex::ToolCallsAfter(int64_t after_doc_id,
                                                                   int limit) {
  std::vector<store::StoredToolCall> out;
  if (limit <= 0) return out;
    // Messages with a tool call, `limit` at a time. The server picks them by
    // their body when it can read it; an encrypted namespace's bodies are
    // opened here, page after page, until `limit` such messages or the end.
#define PG_TOOL_CALL_MESSAGES(body_test)                                  \
  "SELECT d.doc_id, e.session_id, e.ts_ms, e.body, s.metadata, e.id"      \
  " FROM search_docs d JOIN events e ON e.namespace = d.namespace"        \
  " AND e.session_id = d.session_id AND e.seq = d.seq"                    \
  " JOIN sessions s ON s.namespace = e.namespace AND s.id = e.session_id" \
  " WHERE d.namespace = $1 AND d.doc_id > $2 AND d.code_id IS NULL"       \
  " AND e.type = 'message' AND " body_test " ORDER BY d.doc_id LIMIT $3"

  int messages = 0;
  int64_t after = after_doc_id;
  while (messages < limit) {
    PgParams p;
    p.Add(ns()).Add(after).Add(static_cast<int64_t>(limit));
    const PgSealer* sealer = nullptr;
    // The bodies are parsed here, not as jsonb, which refuses the "\u0000" a
    // tool's output may hold.
    ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                       sealer = &c.sealer();
                       return c.Exec(sealer->encrypted()
                                         ? PG_TOOL_CALL_MESSAGES("e.body IS NOT NULL")
                                         : PG_TOOL_CALL_MESSAGES("e.body LIKE '%\"tool_call\"%'"),
                                     p);
                     }));
    for (int i = 0; i < r.rows(); ++i) {
      after = r.Int(i, 0);
      const std::string session_id(r.Text(i, 1));
      ASSIGN_OR_RETURN(std::string body_text,
                       OpenedText(*sealer, PgColumn::kEventBody, r.Text(i, 5), r, i, 3));
      if (body_text.find("\"tool_call\"") == std::string::npos) continue;
      nlohmann::json body = ParseJson(body_text).value_or(nlohmann::json());
      if (!body.is_object()) continue;
      auto parts = body.find("parts");
      if (parts == body.end() || !parts->is_array()) continue;
      ASSIGN_OR_RETURN(std::string metadata_text,
                       OpenedText(*sealer, PgColumn::kSessionMetadata, session_id, r, i, 4));
      const std::string project = ProjectOf(metadata_text);
      const std::string agent_session = AgentSessionOf(metadata_text);
      auto metadata = body.find("metadata");
      const std::string cwd = metadata != body.end() && metadata->is_object()
                                  ? MemberText(*metadata, "cwd")
                                  : std::string();
      ++messages;
      for (const nlohmann::json& part : *parts) {
        if (!part.is_object() || MemberText(part, "type") != "tool_call") continue;
        out.push_back(store::StoredToolCall{.doc_id = r.Int(i, 0),
                                            .session_id = session_id,
                                            .project = project,
                                            .cwd = cwd,
                                            .name = MemberText(part, "name"),
                                            .arguments = MemberText(part, "arguments"),
                                            .time_ms = r.Int(i, 2),
                                            .call_id = MemberText(part, "id"),
                                            .agent_session = agent_session});
      }
    }
    // Plaintext: the server already kept only such messages, so one page is the answer.
    if (!sealer->encrypted() || r.rows() < limit) break;
  }
#undef PG_TOOL_CALL_MESSAGES
  return out;
}

Result<int64_t> PgIndex::NewestDocument() {
  PgParams p;
  p.Add(ns());
  ASSIGN_OR_RETURN(PgResult r, Run([&](PgConnection& c) {
                     return c.Exec(
                         "SELECT coalesce(max(doc_id), 0) FROM search_docs"
                         " WHERE namespace = $1",
                         p);
                   }));
  return r.rows() == 1 ? r.Int(0, 0) : 0;
}

// PostgreSQL indexes a document inside the transaction that writes it
// (pg_search_docs: the tsvector is a column of the row), so it has nothing to
// catch up: every committed document is indexed.
Result<store::TextIndexState> PgIndex::TextIndexProgress() {
  ASSIGN_OR_RETURN(int64_t newest, NewestDocument());
  return store::TextIndexState{.indexed_through = newest, .pending = 0};
}

Result<store::TextIndexState> PgIndex::IndexPendingText(int64_t /*max_documents*/) {
  return TextIndexProgress();
}

}  // namespace sessiondb::postgres
