#include "store/postgres/pg_namespace_reseal.h"

#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "blob/sha256.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/search_text.h"
#include "core/text_rules.h"
#include "store/index_backend.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_search_docs.h"
#include "store/postgres/pg_store_internal.h"

namespace sessiondb::postgres {
namespace {

// Blobs are read whole (a sealed one opens only whole): a batch stops
// taking more once it has read this much.
constexpr size_t kMaxBlobBatchBytes = size_t{64} << 20;
// Events and code writes may be large (a tool's output, a whole file): a
// batch of them takes the rows of its page that start within this many
// stored bytes (at least one), so memory stays bounded whatever the rows hold.
constexpr int64_t kMaxBatchBytes = int64_t{16} << 20;

struct PhaseName {
  ResealPhase phase;
  std::string_view name;
};
constexpr PhaseName kPhaseNames[] = {
    {ResealPhase::kSessions, "sessions"},
    {ResealPhase::kEvents, "events"},
    {ResealPhase::kDrafts, "drafts"},
    {ResealPhase::kSettings, "settings"},
    {ResealPhase::kCodeWrites, "code_writes"},
    {ResealPhase::kFileVersions, "file_versions"},
    {ResealPhase::kBlobs, "blobs"},
    {ResealPhase::kDone, "done"},
};

// What one batch did, and the key of its last row.
struct Batch {
  int64_t rows = 0;
  int64_t blobs = 0;
  std::vector<std::string> last;
  bool more = false;  // the table may hold rows after `last`
};

// Element `i` of a position's key ("" when it starts its table).
std::string KeyPart(const std::vector<std::string>& after, size_t i) {
  return i < after.size() ? after[i] : std::string();
}

int64_t IntKeyPart(const std::vector<std::string>& after, size_t i) {
  int64_t v = std::numeric_limits<int64_t>::min();
  if (i < after.size()) std::from_chars(after[i].data(), after[i].data() + after[i].size(), v);
  return v;
}

// ---- Search documents and their vectors -----------------------------------

// The SQL that sets the tsvector of documents from TsVectorInput's output.
const char* SetTsvSql(const PgSealer& to, bool code) {
#define PG_SET_EVENT_TSV(tsv)                                                       \
  "UPDATE search_docs d SET tsv = " tsv                                             \
  " FROM unnest($2::text[], $3::bigint[], "                                         \
  "$4::text[]) AS u(sid, seq, t) WHERE d.namespace = $1 AND d.code_id IS NULL AND " \
  "d.session_id = u.sid AND d.seq = u.seq"
#define PG_SET_CODE_TSV(tsv)                   \
  "UPDATE search_docs d SET tsv = " tsv        \
  " FROM unnest($2::bigint[], $3::text[]) AS " \
  "u(id, t) WHERE d.namespace = $1 AND d.code_id = u.id"
  if (code) {
    return to.encrypted() ? PG_SET_CODE_TSV(PG_TSVECTOR_KEYED("u.t"))
                          : PG_SET_CODE_TSV(PG_TSVECTOR_PLAIN("u.t"));
  }
  return to.encrypted() ? PG_SET_EVENT_TSV(PG_TSVECTOR_KEYED("u.t"))
                        : PG_SET_EVENT_TSV(PG_TSVECTOR_PLAIN("u.t"));
#undef PG_SET_EVENT_TSV
#undef PG_SET_CODE_TSV
}

// A document's vector of one model, opened.
struct OpenedVector {
  std::string model;
  int64_t doc_id = 0;
  std::string encoded;  // empty: nothing was embedded (empty text)
};

// The doc_ids in the first column of `docs`.
std::vector<int64_t> DocIdsOf(const PgResult& docs) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(docs.rows()));
  for (int i = 0; i < docs.rows(); ++i) out.push_back(docs.Int(i, 0));
  return out;
}

Result<std::vector<OpenedVector>> OpenVectors(PgConnection& c, const std::string& ns,
                                              const std::vector<int64_t>& doc_ids,
                                              const PgSealer& from) {
  std::vector<OpenedVector> out;
  if (doc_ids.empty()) return out;
  PgParams p;
  p.Add(ns).Add(PgArray(doc_ids));
  // Binary results for the bytes; the id as text, which Int() reads.
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT model, doc_id::text AS id_text, vector FROM "
                                      "embeddings WHERE namespace = $1 AND "
                                      "doc_id = ANY($2::bigint[])",
                                      p, /*binary_result=*/true));
  for (int i = 0; i < r.rows(); ++i) {
    OpenedVector v{.model = std::string(r.Text(i, 0)), .doc_id = r.Int(i, 1)};
    if (!r.Text(i, 2).empty()) {
      ASSIGN_OR_RETURN(
          v.encoded, from.OpenBytes(PgColumn::kEmbedding, std::to_string(v.doc_id), r.Text(i, 2)));
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Writes `vectors` sealed with `to` (as PgIndex::PutVectors does), in place
// of what their rows held or the events_changed trigger dropped.
Status SealVectors(PgConnection& c, const std::string& ns, const std::vector<OpenedVector>& vectors,
                   const PgSealer& to) {
  if (vectors.empty()) return Status::Ok();
  std::vector<std::string> models, hex;
  std::vector<int64_t> ids;
  for (const OpenedVector& v : vectors) {
    models.push_back(v.model);
    ids.push_back(v.doc_id);
    hex.push_back(PgByteaHex(
        v.encoded.empty() ? std::string()
                          : to.Bytes(PgColumn::kEmbedding, std::to_string(v.doc_id), v.encoded)));
  }
  PgParams p;
  p.Add(ns).Add(PgArray(models)).Add(PgArray(ids)).Add(PgArray(hex));
  return c.Run(
      "INSERT INTO embeddings (namespace, model, doc_id, vector) SELECT $1, u.model, u.id, u.v "
      "FROM unnest($2::text[], $3::bigint[], $4::bytea[]) AS u(model, id, v) "
      "ON CONFLICT (namespace, model, doc_id) DO UPDATE SET vector = excluded.vector",
      p);
}

// ---- Sessions, events, drafts, settings -------------------------------------

Result<Batch> ResealSessions(PgConnection& c, const std::string& ns, const ResealKeys& k,
                             const std::vector<std::string>& after, int limit) {
  PgParams q;
  q.Add(ns).Add(KeyPart(after, 0)).Add(static_cast<int64_t>(limit));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, title, preview, metadata FROM sessions WHERE "
                                      "namespace = $1 AND id > $2 ORDER BY id LIMIT $3",
                                      q));
  Batch batch{.rows = r.rows(), .more = r.rows() == limit};
  if (r.rows() == 0) return batch;
  std::vector<std::string> ids, titles, previews, metadata;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string id(r.Text(i, 0));
    ASSIGN_OR_RETURN(std::string title, k.from.OpenText(PgColumn::kSessionTitle, id, r.Text(i, 1)));
    ASSIGN_OR_RETURN(std::string preview,
                     k.from.OpenText(PgColumn::kSessionPreview, id, r.Text(i, 2)));
    ASSIGN_OR_RETURN(std::string meta,
                     k.from.OpenText(PgColumn::kSessionMetadata, id, r.Text(i, 3)));
    titles.push_back(k.to.Text(PgColumn::kSessionTitle, id, title));
    previews.push_back(k.to.Text(PgColumn::kSessionPreview, id, preview));
    metadata.push_back(k.to.Text(PgColumn::kSessionMetadata, id, meta));
    ids.push_back(id);
  }
  PgParams u;
  u.Add(ns).Add(PgArray(ids)).Add(PgArray(titles)).Add(PgArray(previews)).Add(PgArray(metadata));
  RETURN_IF_ERROR(
      c.Run("UPDATE sessions s SET title = u.title, preview = u.preview, metadata = u.metadata "
            "FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, title, "
            "preview, metadata) WHERE s.namespace = $1 AND s.id = u.id",
            u));
  batch.last = {ids.back()};
  return batch;
}

Result<Batch> ResealEvents(PgConnection& c, const std::string& ns, const ResealKeys& k,
                           const std::vector<std::string>& after, int limit) {
  PgParams q;
  q.Add(ns).Add(KeyPart(after, 0)).Add(IntKeyPart(after, 1)).Add(static_cast<int64_t>(limit));
  q.Add(kMaxBatchBytes);
  ASSIGN_OR_RETURN(
      PgResult r,
      c.Exec("SELECT session_id, seq, id, text, body FROM (SELECT *, sum(size) OVER (ORDER BY "
             "session_id, seq) - size AS before FROM (SELECT session_id, seq, id, text, body, "
             "octet_length(text) + coalesce(octet_length(body), 0) AS size FROM events WHERE "
             "namespace = $1 AND (session_id, seq) > ($2, $3) ORDER BY session_id, seq LIMIT $4) "
             "AS page) AS sized WHERE before < $5 ORDER BY session_id, seq",
             q));
  // A page cut by its size is followed by another: the table ends at an empty one.
  Batch batch{.rows = r.rows(), .more = r.rows() > 0};
  if (r.rows() == 0) return batch;
  std::vector<std::string> sids, ids, texts, tsv_inputs;
  std::vector<std::optional<std::string>> bodies;
  std::vector<int64_t> seqs;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string id(r.Text(i, 2));
    ASSIGN_OR_RETURN(std::string text, k.from.OpenText(PgColumn::kEventText, id, r.Text(i, 3)));
    std::optional<std::string> body;
    if (!r.IsNull(i, 4)) {
      ASSIGN_OR_RETURN(body, k.from.OpenText(PgColumn::kEventBody, id, r.Text(i, 4)));
    }
    // What DocumentTextFromRow reads the document as.
    tsv_inputs.push_back(
        TsVectorInput(k.to, SearchText(text, body ? std::string_view(*body) : std::string_view())));
    texts.push_back(k.to.Text(PgColumn::kEventText, id, text));
    bodies.push_back(body ? std::optional<std::string>(k.to.Text(PgColumn::kEventBody, id, *body))
                          : std::nullopt);
    sids.emplace_back(r.Text(i, 0));
    seqs.push_back(r.Int(i, 1));
    ids.push_back(id);
  }
  // The vectors first: the update below drops them (sessiondb_events_changed).
  PgParams d;
  d.Add(ns).Add(PgArray(sids)).Add(PgArray(seqs));
  ASSIGN_OR_RETURN(PgResult docs,
                   c.Exec("SELECT d.doc_id FROM search_docs d JOIN unnest($2::text[], "
                          "$3::bigint[]) AS u(sid, seq) ON d.session_id = u.sid AND d.seq = u.seq "
                          "WHERE d.namespace = $1 AND d.code_id IS NULL",
                          d));
  ASSIGN_OR_RETURN(std::vector<OpenedVector> vectors, OpenVectors(c, ns, DocIdsOf(docs), k.from));

  PgParams u;
  u.Add(ns).Add(PgArray(ids)).Add(PgArray(texts)).Add(PgArray(bodies));
  RETURN_IF_ERROR(
      c.Run("UPDATE events e SET text = u.text, body = u.body FROM unnest($2::text[], $3::text[], "
            "$4::text[]) AS u(id, text, body) WHERE e.namespace = $1 AND e.id = u.id",
            u));
  PgParams t;
  t.Add(ns).Add(PgArray(sids)).Add(PgArray(seqs)).Add(PgArray(tsv_inputs));
  RETURN_IF_ERROR(c.Run(SetTsvSql(k.to, /*code=*/false), t));
  RETURN_IF_ERROR(SealVectors(c, ns, vectors, k.to));
  batch.last = {sids.back(), std::to_string(seqs.back())};
  return batch;
}

Result<Batch> ResealDrafts(PgConnection& c, const std::string& ns, const ResealKeys& k,
                           const std::vector<std::string>& after, int limit) {
  PgParams q;
  q.Add(ns).Add(KeyPart(after, 0)).Add(static_cast<int64_t>(limit));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, text, reasoning FROM drafts WHERE "
                                      "namespace = $1 AND id > $2 ORDER BY id LIMIT $3",
                                      q));
  Batch batch{.rows = r.rows(), .more = r.rows() == limit};
  if (r.rows() == 0) return batch;
  std::vector<std::string> ids, texts, reasonings;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string id(r.Text(i, 0));
    ASSIGN_OR_RETURN(std::string text, k.from.OpenText(PgColumn::kDraftText, id, r.Text(i, 1)));
    ASSIGN_OR_RETURN(std::string reasoning,
                     k.from.OpenText(PgColumn::kDraftReasoning, id, r.Text(i, 2)));
    texts.push_back(k.to.Text(PgColumn::kDraftText, id, text));
    reasonings.push_back(k.to.Text(PgColumn::kDraftReasoning, id, reasoning));
    ids.push_back(id);
  }
  PgParams u;
  u.Add(ns).Add(PgArray(ids)).Add(PgArray(texts)).Add(PgArray(reasonings));
  RETURN_IF_ERROR(c.Run(
      "UPDATE drafts d SET text = u.text, reasoning = u.reasoning FROM unnest($2::text[], "
      "$3::text[], $4::text[]) AS u(id, text, reasoning) WHERE d.namespace = $1 AND d.id = u.id",
      u));
  batch.last = {ids.back()};
  return batch;
}

Result<Batch> ResealSettings(PgConnection& c, const std::string& ns, const ResealKeys& k,
                             const std::vector<std::string>& after, int limit) {
  PgParams q;
  q.Add(ns).Add(KeyPart(after, 0)).Add(static_cast<int64_t>(limit));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT key, value FROM index_meta WHERE namespace = $1 "
                                      "AND starts_with(key, 'setting:') AND key > $2 "
                                      "ORDER BY key LIMIT $3",
                                      q));
  Batch batch{.rows = r.rows(), .more = r.rows() == limit};
  if (r.rows() == 0) return batch;
  std::vector<std::string> keys, values;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string key(r.Text(i, 0));
    ASSIGN_OR_RETURN(std::string value, k.from.OpenText(PgColumn::kSetting, key, r.Text(i, 1)));
    values.push_back(k.to.Text(PgColumn::kSetting, key, value));
    keys.push_back(key);
  }
  PgParams u;
  u.Add(ns).Add(PgArray(keys)).Add(PgArray(values));
  RETURN_IF_ERROR(
      c.Run("UPDATE index_meta m SET value = u.value FROM unnest($2::text[], $3::text[]) AS "
            "u(key, value) WHERE m.namespace = $1 AND m.key = u.key",
            u));
  batch.last = {keys.back()};
  return batch;
}

// ---- Code memory ----------------------------------------------------------------

// A code write opened with the old key.
struct OpenedWrite {
  int64_t id = 0;
  std::string hash;  // its plain content hash
  std::string path, old_code, new_code, project;
};

// The plain content hashes of `writes`, made unique in the namespace where
// two writes recompute to one (their code equal once redacted): the later
// gets a hash of its own, so UNIQUE (namespace, content_sha256) holds.
Status MakeHashesUnique(PgConnection& c, const std::string& ns, const PgSealer& to,
                        std::vector<OpenedWrite>* writes) {
  std::vector<std::string> digests;
  for (const OpenedWrite& w : *writes) digests.push_back(to.KeyedDigest(w.hash));
  PgParams p;
  p.Add(ns).Add(PgArray(digests));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT content_sha256 FROM code_writes WHERE "
                                      "namespace = $1 AND content_sha256 = ANY($2::text[])",
                                      p));
  std::set<std::string> taken;
  for (int i = 0; i < r.rows(); ++i) taken.emplace(r.Text(i, 0));
  for (OpenedWrite& w : *writes) {
    if (!taken.insert(to.KeyedDigest(w.hash)).second) {
      w.hash = blob::Sha256Hex({w.hash, "code write ", std::to_string(w.id)});
      taken.insert(to.KeyedDigest(w.hash));
    }
  }
  return Status::Ok();
}

// The write's code_edits rows, their keys opened with `from` and sealed with `to`.
Status ResealCodeEdits(PgConnection& c, const std::string& ns, const ResealKeys& k,
                       const std::vector<int64_t>& code_ids) {
  PgParams q;
  q.Add(ns).Add(PgArray(code_ids));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT file_path, function, created_ms, code_id FROM "
                                      "code_edits WHERE namespace = $1 AND "
                                      "code_id = ANY($2::bigint[])",
                                      q));
  std::vector<std::string> paths, functions;
  std::vector<int64_t> times, ids;
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(std::string path, OpenEditKey(k.from, PgColumn::kCodeFilePath, r.Text(i, 0)));
    ASSIGN_OR_RETURN(std::string function,
                     OpenEditKey(k.from, PgColumn::kCodeFunction, r.Text(i, 1)));
    paths.push_back(EditKey(k.to, PgColumn::kCodeFilePath, path));
    functions.push_back(EditKey(k.to, PgColumn::kCodeFunction, function));
    times.push_back(r.Int(i, 2));
    ids.push_back(r.Int(i, 3));
  }
  // The table has no key: its rows of these writes are replaced.
  RETURN_IF_ERROR(
      c.Run("DELETE FROM code_edits WHERE namespace = $1 AND code_id = ANY($2::bigint[])", q));
  if (ids.empty()) return Status::Ok();
  PgParams u;
  u.Add(ns).Add(PgArray(paths)).Add(PgArray(functions)).Add(PgArray(times)).Add(PgArray(ids));
  return c.Run(
      "INSERT INTO code_edits (namespace, file_path, function, created_ms, code_id) SELECT $1, "
      "u.* FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS u",
      u);
}

Result<Batch> ResealCodeWrites(PgConnection& c, const std::string& ns, const ResealKeys& k,
                               const std::vector<std::string>& after, int limit) {
  PgParams q;
  q.Add(ns).Add(IntKeyPart(after, 0)).Add(static_cast<int64_t>(limit));
  q.Add(kMaxBatchBytes);
  ASSIGN_OR_RETURN(
      PgResult r,
      c.Exec("SELECT id, content_sha256, file_path, old_code, new_code, project FROM (SELECT *, "
             "sum(size) OVER (ORDER BY id) - size AS before FROM (SELECT id, content_sha256, "
             "file_path, old_code, new_code, project, octet_length(file_path) + "
             "octet_length(old_code) + octet_length(new_code) + octet_length(project) AS size "
             "FROM code_writes WHERE namespace = $1 AND id > $2 ORDER BY id LIMIT $3) AS page) "
             "AS sized WHERE before < $4 ORDER BY id",
             q));
  // A page cut by its size is followed by another: the table ends at an empty one.
  Batch batch{.rows = r.rows(), .more = r.rows() > 0};
  if (r.rows() == 0) return batch;
  std::vector<OpenedWrite> writes;
  for (int i = 0; i < r.rows(); ++i) {
    // Sealed under the stored (keyed) content hash.
    const std::string_view record = r.Text(i, 1);
    OpenedWrite w{.id = r.Int(i, 0)};
    ASSIGN_OR_RETURN(w.path, k.from.OpenText(PgColumn::kCodeFilePath, record, r.Text(i, 2)));
    ASSIGN_OR_RETURN(w.old_code, k.from.OpenText(PgColumn::kCodeOld, record, r.Text(i, 3)));
    ASSIGN_OR_RETURN(w.new_code, k.from.OpenText(PgColumn::kCodeNew, record, r.Text(i, 4)));
    ASSIGN_OR_RETURN(w.project, k.from.OpenText(PgColumn::kCodeProject, record, r.Text(i, 5)));
    // A keyed hash is one-way: the plain one is recomputed from the write.
    w.hash = k.from.encrypted() ? store::CodeWriteHash(w.path, w.old_code, w.new_code)
                                : std::string(record);
    writes.push_back(std::move(w));
  }
  RETURN_IF_ERROR(MakeHashesUnique(c, ns, k.to, &writes));
  std::vector<int64_t> ids;
  std::vector<std::string> digests, paths, olds, news, projects, tsv_inputs;
  for (const OpenedWrite& w : writes) {
    const std::string digest = k.to.KeyedDigest(w.hash);
    paths.push_back(k.to.Text(PgColumn::kCodeFilePath, digest, w.path));
    olds.push_back(k.to.Text(PgColumn::kCodeOld, digest, w.old_code));
    news.push_back(k.to.Text(PgColumn::kCodeNew, digest, w.new_code));
    projects.push_back(k.to.Text(PgColumn::kCodeProject, digest, w.project));
    tsv_inputs.push_back(TsVectorInput(k.to, CodeWriteText(w.path, w.new_code)));
    digests.push_back(digest);
    ids.push_back(w.id);
  }
  PgParams u;
  u.Add(ns).Add(PgArray(ids)).Add(PgArray(digests)).Add(PgArray(paths)).Add(PgArray(olds));
  u.Add(PgArray(news)).Add(PgArray(projects));
  RETURN_IF_ERROR(c.Run(
      "UPDATE code_writes w SET content_sha256 = u.digest, file_path = u.path, old_code = u.old, "
      "new_code = u.new, project = u.project FROM unnest($2::bigint[], $3::text[], $4::text[], "
      "$5::text[], $6::text[], $7::text[]) AS u(id, digest, path, old, new, project) "
      "WHERE w.namespace = $1 AND w.id = u.id",
      u));
  RETURN_IF_ERROR(ResealCodeEdits(c, ns, k, ids));
  PgParams t;
  t.Add(ns).Add(PgArray(ids)).Add(PgArray(tsv_inputs));
  RETURN_IF_ERROR(c.Run(SetTsvSql(k.to, /*code=*/true), t));
  PgParams d;
  d.Add(ns).Add(PgArray(ids));
  ASSIGN_OR_RETURN(PgResult docs, c.Exec("SELECT doc_id FROM search_docs WHERE namespace = $1 "
                                         "AND code_id = ANY($2::bigint[])",
                                         d));
  ASSIGN_OR_RETURN(std::vector<OpenedVector> vectors, OpenVectors(c, ns, DocIdsOf(docs), k.from));
  RETURN_IF_ERROR(SealVectors(c, ns, vectors, k.to));
  batch.last = {std::to_string(ids.back())};
  return batch;
}

// ---- File versions -----------------------------------------------------------

// Each version opened with the old key and stored as InsertFileVersion
// stores it under the new: `sealed` under its id (NULL when plaintext), the
// path and project as tokens (or themselves), the digest as the blob's name
// under the new key, which the blob phase then moves its reference to.
Result<Batch> ResealFileVersions(PgConnection& c, const std::string& ns, const ResealKeys& k,
                                 const std::vector<std::string>& after, int limit) {
  PgParams q;
  q.Add(ns).Add(IntKeyPart(after, 0)).Add(static_cast<int64_t>(limit));
  ASSIGN_OR_RETURN(PgResult r, c.Exec((std::string("SELECT ") + kFileVersionColumns +
                                       " FROM file_versions WHERE namespace = $1 AND id > $2 "
                                       "ORDER BY id LIMIT $3")
                                          .c_str(),
                                      q));
  Batch batch{.rows = r.rows(), .more = r.rows() == limit};
  if (r.rows() == 0) return batch;
  std::vector<int64_t> ids;
  std::vector<std::string> paths, projects, tools;
  std::vector<std::optional<std::string>> digests, sealed;
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(FileVersion v, FileVersionFromRow(k.from, r, i));
    // Sealed as JSON, which holds only UTF-8 (a cluster of encoding
    // SQL_ASCII may have kept other bytes in the clear).
    if (k.to.encrypted() &&
        !(IsValidUtf8(v.file_path) && IsValidUtf8(v.project) && IsValidUtf8(v.tool))) {
      return Err(Status::Corruption("file version " + std::to_string(v.id) +
                                    " has a path, project or tool that is not UTF-8; it cannot "
                                    "be sealed (erase it, then run the conversion again)"));
    }
    StoredVersionKeys stored =
        StoreVersionKeys(k.to, v.file_path, v.project, v.tool, v.exists, v.sha256);
    ids.push_back(v.id);
    paths.push_back(std::move(stored.file_path));
    projects.push_back(std::move(stored.project));
    tools.push_back(std::move(stored.tool));
    digests.push_back(std::move(stored.sha256));
    sealed.push_back(SealVersion(k.to, v.id, v));
  }
  PgParams u;
  u.Add(ns).Add(PgArray(ids)).Add(PgArray(paths)).Add(PgArray(projects)).Add(PgArray(tools));
  u.Add(PgArray(digests)).Add(PgArray(sealed));
  RETURN_IF_ERROR(c.Run(
      "UPDATE file_versions f SET file_path = u.path, project = u.project, tool = u.tool, "
      "sha256 = u.digest, sealed = u.sealed FROM unnest($2::bigint[], $3::text[], $4::text[], "
      "$5::text[], $6::text[], $7::text[]) AS u(id, path, project, tool, digest, sealed) "
      "WHERE f.namespace = $1 AND f.id = u.id",
      u));
  batch.last = {std::to_string(ids.back())};
  return batch;
}

// ---- Blobs ----------------------------------------------------------------------

// True when the reference row (its name and sealed digest in columns 0 and
// 1 of `r`) already names its blob under `to`: a resumed run meets the
// references it moved, since new names sort anywhere among the old.
bool NamedUnder(const PgSealer& to, const PgResult& r, int row) {
  if (!to.encrypted()) return r.IsNull(row, 1);
  return !r.IsNull(row, 1) &&
         to.OpenText(PgColumn::kBlobDigest, r.Text(row, 0), r.Text(row, 1)).has_value();
}

// The bytes of blob `sha` stored as `name`, opened with `from` and checked
// against the digest; kCorruption naming the blob otherwise.
Result<std::string> OpenBlob(const PgSealer& from, const std::string& sha, const std::string& name,
                             std::string_view stored) {
  Result<std::string> bytes = from.OpenBytes(PgColumn::kBlob, name, stored);
  if (bytes && blob::Sha256Hex(*bytes) == sha) return bytes;
  return Err(
      Status::Corruption("blob " + sha + " (stored as " + name + ") " +
                         (from.encrypted() ? "does not open with the namespace's key"
                                           : "no longer hashes to its name") +
                         ": its bytes were changed; it is not converted (run `sessiondb verify`)"));
}

// Moves the namespace's references to blob `sha` from `name` to its name
// under `to`, making that row if it is missing, and deletes the old row once
// nothing refers to it. Returns the bytes read.
Result<size_t> MoveBlob(PgConnection& c, const std::string& ns, const ResealKeys& k,
                        const std::string& sha, const std::string& name) {
  PgParams old_row;
  old_row.Add(name);
  // FOR UPDATE: an append of another namespace about to refer to the old
  // row (it share-locks it first) commits before the check below.
  ASSIGN_OR_RETURN(PgResult row, c.Exec("SELECT size, created_ms FROM blobs WHERE sha256 = $1 "
                                        "FOR UPDATE",
                                        old_row));
  const std::string new_name = k.to.BlobName(sha);
  const std::optional<std::string> digest = SealedBlobDigest(k.to, new_name, sha);
  size_t read = 0;
  // A blob already missing stays missing (verify names it); its references move.
  if (row.rows() == 1) {
    ASSIGN_OR_RETURN(PgResult stored, c.Exec("SELECT bytes, location FROM blobs WHERE sha256 = $1",
                                             old_row, /*binary_result=*/true));
    if (!stored.IsNull(0, 1)) {
      return Err(Status::FailedPrecondition(
          "blob " + sha +
          " is kept in object storage; converting such a namespace is not "
          "supported yet"));
    }
    ASSIGN_OR_RETURN(std::string bytes, OpenBlob(k.from, sha, name, stored.Text(0, 0)));
    read = bytes.size();
    if (k.to.encrypted()) bytes = k.to.Bytes(PgColumn::kBlob, new_name, bytes);
    PgParams insert;
    insert.Add(new_name).Add(row.Int(0, 0)).Add(row.Int(0, 1)).AddBytes(bytes);
    insert.AddOptional(digest);
    // A plaintext row another namespace holds is shared, as appends share it.
    RETURN_IF_ERROR(
        c.Run("INSERT INTO blobs (sha256, size, created_ms, bytes, digest) VALUES "
              "($1, $2, $3, $4, $5) ON CONFLICT (sha256) DO NOTHING",
              insert));
  }
  PgParams refs;
  refs.Add(ns).Add(name).Add(new_name).AddOptional(digest);
  RETURN_IF_ERROR(c.Run(
      "UPDATE blob_refs SET sha256 = $3, digest = $4 WHERE namespace = $1 AND sha256 = $2", refs));
  ASSIGN_OR_RETURN(PgResult used,
                   c.Exec("SELECT 1 FROM blob_refs WHERE sha256 = $1 LIMIT 1", old_row));
  if (used.rows() == 0 && row.rows() == 1) {
    RETURN_IF_ERROR(c.Run("DELETE FROM blobs WHERE sha256 = $1", old_row));
  }
  return read;
}

Result<Batch> ResealBlobs(PgConnection& c, const std::string& ns, const ResealKeys& k,
                          const std::vector<std::string>& after, int limit) {
  PgParams q;
  q.Add(ns).Add(KeyPart(after, 0)).Add(static_cast<int64_t>(limit));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT DISTINCT ON (sha256) sha256, digest FROM blob_refs "
                                      "WHERE namespace = $1 AND sha256 > $2 ORDER BY sha256 "
                                      "LIMIT $3",
                                      q));
  Batch batch{.more = r.rows() == limit};
  size_t bytes = 0;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string name(r.Text(i, 0));
    batch.last = {name};
    if (NamedUnder(k.to, r, i)) continue;
    std::string sha;
    if (r.IsNull(i, 1)) {
      sha = name;
      if (!blob::IsSha256Hex(sha)) {
        return Err(Status::Corruption("blob reference '" + name + "' of namespace '" + ns +
                                      "' is neither a digest nor sealed; it is not converted"));
      }
    } else {
      ASSIGN_OR_RETURN(sha, BlobDigestOfRow(k.from, r, i, 0));
    }
    ASSIGN_OR_RETURN(size_t read, MoveBlob(c, ns, k, sha, name));
    ++batch.rows;
    ++batch.blobs;
    bytes += read;
    if (bytes >= kMaxBlobBatchBytes && i + 1 < r.rows()) {
      batch.more = true;  // the rest in the next batch
      break;
    }
  }
  return batch;
}

Result<Batch> ResealPhaseBatch(PgConnection& c, const std::string& ns, const ResealKeys& k,
                               const ResealPosition& at, int limit) {
  switch (at.phase) {
    case ResealPhase::kSessions:
      return ResealSessions(c, ns, k, at.after, limit);
    case ResealPhase::kEvents:
      return ResealEvents(c, ns, k, at.after, limit);
    case ResealPhase::kDrafts:
      return ResealDrafts(c, ns, k, at.after, limit);
    case ResealPhase::kSettings:
      return ResealSettings(c, ns, k, at.after, limit);
    case ResealPhase::kCodeWrites:
      return ResealCodeWrites(c, ns, k, at.after, limit);
    case ResealPhase::kFileVersions:
      return ResealFileVersions(c, ns, k, at.after, limit);
    case ResealPhase::kBlobs:
      return ResealBlobs(c, ns, k, at.after, limit);
    case ResealPhase::kDone:
      break;
  }
  return Batch{};
}

}  // namespace

std::string EncodeResealPosition(const ResealPosition& at) {
  std::string_view phase;
  for (const PhaseName& p : kPhaseNames) {
    if (p.phase == at.phase) phase = p.name;
  }
  nlohmann::json j = {
      {"phase", phase}, {"after", at.after}, {"rows", at.rows}, {"blobs", at.blobs}};
  return j.dump();
}

Result<ResealPosition> DecodeResealPosition(std::string_view text) {
  const Status bad = Status::Corruption(
      "the progress row '" + std::string(kNamespaceConversionProgressKey) +
      "' of the conversion under way is not one: " + std::string(text.substr(0, 200)));
  Result<nlohmann::json> parsed = ParseJson(text);
  if (!parsed || !parsed->is_object()) return Err(bad);
  const nlohmann::json& j = *parsed;
  ResealPosition at;
  bool known = false;
  const std::string phase = MemberOr(j, "phase", "");
  for (const PhaseName& p : kPhaseNames) {
    if (phase == p.name) {
      at.phase = p.phase;
      known = true;
    }
  }
  const nlohmann::json& after = MemberOf(j, "after");
  at.rows = MemberOr<nlohmann::json, int64_t>(j, "rows", -1);
  at.blobs = MemberOr<nlohmann::json, int64_t>(j, "blobs", -1);
  if (!known || !after.is_array() || at.rows < 0 || at.blobs < 0) return Err(bad);
  for (const nlohmann::json& part : after) {
    if (!part.is_string()) return Err(bad);
    at.after.push_back(part.get<std::string>());
  }
  return at;
}

Status ResealNextBatch(PgConnection& c, const std::string& ns, const ResealKeys& keys, int limit,
                       ResealPosition* at) {
  ASSIGN_OR_RETURN(Batch batch, ResealPhaseBatch(c, ns, keys, *at, limit));
  at->rows += batch.rows;
  at->blobs += batch.blobs;
  if (batch.more) {
    at->after = std::move(batch.last);
  } else if (at->phase != ResealPhase::kDone) {
    at->phase = static_cast<ResealPhase>(static_cast<int>(at->phase) + 1);
    at->after.clear();
  }
  return Status::Ok();
}

Result<int64_t> CountRowsToReseal(PgConnection& c, const std::string& ns) {
  PgParams p;
  p.Add(ns);
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT (SELECT count(*) FROM sessions WHERE namespace = $1) + "
                          "(SELECT count(*) FROM events WHERE namespace = $1) + "
                          "(SELECT count(*) FROM drafts WHERE namespace = $1) + "
                          "(SELECT count(*) FROM index_meta WHERE namespace = $1 AND "
                          "starts_with(key, 'setting:')) + "
                          "(SELECT count(*) FROM code_writes WHERE namespace = $1) + "
                          "(SELECT count(*) FROM file_versions WHERE namespace = $1) + "
                          "(SELECT count(DISTINCT sha256) FROM blob_refs WHERE namespace = $1)",
                          p));
  return r.Int(0, 0);
}

}  // namespace sessiondb::postgres
