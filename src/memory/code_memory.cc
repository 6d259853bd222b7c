// CodeMemory on an embedded store: code_writes (kept once, by the hash of
// path, old and new code), code_edits (one row per file and function a write
// touched, for churn) and hook_seen, all in the store's database.
#include "sessiondb/memory.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "blob/sha256.h"
#include "core/message_codec.h"
#include "memory/churn_rules.h"
#include "memory/function_detect.h"
#include "memory/language.h"
#include "memory/write_extract.h"
#include "search/index_db.h"
#include "search/keyword_search.h"
#include "search/query_syntax.h"

namespace sessiondb {
namespace memory {
namespace {

using sqlite::Statement;

constexpr int64_t kDayMs = 24LL * 3600 * 1000;
// Recall looks at this many newest matching writes at most.
constexpr int64_t kRecallCandidates = 2000;
// Words of the code that make the recall query; longer words say more.
constexpr size_t kRecallWords = 24;
// meta key: the last search document LearnFromHistory has read.
constexpr std::string_view kLearnedKey = "memory:learned_doc_id";

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The words that characterise a piece of code: distinct identifiers of three
// or more characters that are not numbers, the longest first, and the file's
// name (without extension) so the same file ranks well.
std::vector<std::string> RecallWords(std::string_view file_path, std::string_view code) {
  std::set<std::string> seen;
  std::vector<std::string> words;
  for (std::string& w : search::SplitWords(code)) {
    if (w.size() < 3 || std::isdigit(static_cast<unsigned char>(w[0]))) continue;
    if (seen.insert(w).second) words.push_back(std::move(w));
  }
  std::stable_sort(words.begin(), words.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  if (words.size() > kRecallWords) words.resize(kRecallWords);
  std::string_view name = file_path.substr(file_path.find_last_of('/') + 1);
  name = name.substr(0, name.find('.'));
  for (std::string& w : search::SplitWords(name)) {
    if (seen.insert(w).second) words.push_back(std::move(w));
  }
  return words;
}

class SqliteCodeMemory final : public CodeMemory {
 public:
  SqliteCodeMemory(MemoryOptions options, std::unique_ptr<sqlite::Database> db)
      : options_(std::move(options)), db_(std::move(db)) {
    if (!options_.clock) options_.clock = WallClockMs;
  }

  Result<RecordedWrite> RecordWrite(const CodeWrite& write) override {
    if (write.file_path.empty()) {
      return Err(Status::InvalidArgument("a code write needs the file's path"));
    }
    if (write.new_code.empty()) {
      return Err(Status::InvalidArgument("a code write needs the code it wrote"));
    }
    RecordedWrite out;
    const std::string language =
        write.language.empty() ? LanguageForPath(write.file_path) : write.language;
    if (write.whole_file) {
      // A whole file written without its old version: compare with the last
      // whole version kept, so only the functions that changed count.
      std::string previous = write.old_code;
      if (previous.empty()) {
        ASSIGN_OR_RETURN(Statement last,
                         db_->Prepare("SELECT new_code FROM code_writes WHERE file_path = ?1"
                                      " AND whole_file = 1 ORDER BY created_ms DESC, id DESC"
                                      " LIMIT 1"));
        last.Bind(1, std::string_view(write.file_path));
        ASSIGN_OR_RETURN(bool row, last.Step());
        if (row) previous = std::string(last.ColumnText(0));
      }
      out.functions = ChangedFunctions(previous, write.new_code, language, WriteKind::kWholeFile);
    } else {
      out.functions = ChangedFunctions(write.old_code, write.new_code, language,
                                       WriteKind::kSnippet, write.file_context);
    }
    std::string key = write.file_path;
    key += '\0';
    key += write.old_code;
    key += '\0';
    key += write.new_code;
    const std::string hash = blob::Sha256Hex(key);
    const int64_t now = write.time_ms > 0 ? write.time_ms : options_.clock();

    ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(db_.get()));
    ASSIGN_OR_RETURN(Statement insert,
                     db_->Prepare("INSERT OR IGNORE INTO code_writes (file_path, old_code,"
                                  " new_code, language, session_id, project, tool, created_ms,"
                                  " content_sha256, whole_file)"
                                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
    insert.Bind(1, std::string_view(write.file_path))
        .Bind(2, std::string_view(write.old_code))
        .Bind(3, std::string_view(write.new_code))
        .Bind(4, std::string_view(language))
        .Bind(5, std::string_view(write.session_id))
        .Bind(6, std::string_view(write.project))
        .Bind(7, std::string_view(write.tool))
        .Bind(8, now)
        .Bind(9, std::string_view(hash))
        .Bind(10, int64_t{write.whole_file ? 1 : 0});
    RETURN_IF_ERROR(insert.Run());
    if (db_->Changes() == 0) {
      ASSIGN_OR_RETURN(Statement find,
                       db_->Prepare("SELECT id FROM code_writes WHERE content_sha256 = ?1"));
      find.Bind(1, std::string_view(hash));
      ASSIGN_OR_RETURN(bool row, find.Step());
      if (row) out.code_id = find.ColumnInt(0);
      return out;  // kept already: not a new edit either
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> id, db_->QueryInt("SELECT last_insert_rowid()"));
    out.code_id = id.value_or(0);
    out.recorded = true;
    ASSIGN_OR_RETURN(Statement edit,
                     db_->Prepare("INSERT INTO code_edits (file_path, function, created_ms,"
                                  " code_id) VALUES (?1, ?2, ?3, ?4)"));
    edit.Bind(1, std::string_view(write.file_path)).Bind(2, "").Bind(3, now).Bind(4, out.code_id);
    RETURN_IF_ERROR(edit.Run());
    for (const std::string& function : out.functions) {
      edit.Bind(1, std::string_view(write.file_path))
          .Bind(2, std::string_view(function))
          .Bind(3, now)
          .Bind(4, out.code_id);
      RETURN_IF_ERROR(edit.Run());
    }
    RETURN_IF_ERROR(txn.Commit());
    return out;
  }

  Result<std::vector<RecalledCode>> Recall(std::string_view file_path, std::string_view code,
                                           int limit) override {
    std::vector<RecalledCode> out;
    if (limit <= 0) return out;
    const std::string match = search::AnyOfWords(RecallWords(file_path, code));
    if (match.empty()) return out;
    SearchFilter filter;
    filter.events = false;
    ASSIGN_OR_RETURN(search::KeywordRanking ranking,
                     search::RankKeyword(db_.get(), match, filter, kRecallCandidates));
    std::set<std::string> files;
    ASSIGN_OR_RETURN(Statement s,
                     db_->Prepare("SELECT c.id, c.file_path, c.new_code, c.session_id,"
                                  " c.project, c.created_ms FROM search_docs d"
                                  " JOIN code_writes c ON c.id = d.code_id WHERE d.doc_id = ?1"));
    for (const search::RankedDoc& doc : ranking.docs) {
      if (static_cast<int>(out.size()) == limit) break;
      s.Bind(1, doc.doc_id);
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) continue;
      std::string path(s.ColumnText(1));
      if (!files.insert(path).second) continue;  // one per file: its best write
      out.push_back(RecalledCode{.file_path = std::move(path),
                                 .preview = PreviewCode(s.ColumnText(2)),
                                 .session_id = std::string(s.ColumnText(3)),
                                 .project = std::string(s.ColumnText(4)),
                                 .time_ms = s.ColumnInt(5),
                                 .code_id = s.ColumnInt(0),
                                 .score = doc.score});
    }
    return out;
  }

  Result<std::vector<ChurnEntry>> Hotspots(const ChurnQuery& query) override {
    const int64_t now = options_.clock();
    ASSIGN_OR_RETURN(
        Statement s,
        db_->Prepare("SELECT file_path, function, count(*),"
                     " sum(created_ms >= ?2) FROM code_edits"
                     " WHERE created_ms >= ?1 AND (?3 = 1) = (function <> '')"
                     " AND substr(file_path, 1, length(?4)) = ?4"
                     " GROUP BY file_path, function"
                     " ORDER BY count(*) DESC, sum(created_ms >= ?2) DESC, file_path, function"
                     " LIMIT ?5"));
    s.Bind(1, now - 30 * kDayMs)
        .Bind(2, now - kDayMs)
        .Bind(3, int64_t{query.functions ? 1 : 0})
        .Bind(4, std::string_view(query.path_prefix))
        .Bind(5, int64_t{std::max(query.limit, 1)});
    std::vector<ChurnEntry> out;
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ChurnEntry e{.file_path = std::string(s.ColumnText(0)),
                   .function = std::string(s.ColumnText(1)),
                   .edits_24h = s.ColumnInt(3),
                   .edits_30d = s.ColumnInt(2)};
      e.tier = std::string(TierName(ClassifyChurn(e.edits_30d, e.edits_24h)));
      out.push_back(std::move(e));
    }
    return out;
  }

  Result<ChurnEntry> FileChurn(std::string_view file_path) override {
    return CountEdits(file_path, "");
  }

  Result<std::vector<ChurnWarning>> Warnings(const CodeWrite& upcoming) override {
    std::vector<ChurnWarning> out;
    const std::string language =
        upcoming.language.empty() ? LanguageForPath(upcoming.file_path) : upcoming.language;
    const std::vector<std::string> functions =
        upcoming.whole_file
            ? ChangedFunctions(upcoming.old_code, upcoming.new_code, language,
                               WriteKind::kWholeFile)
            : ChangedFunctions(upcoming.old_code, upcoming.new_code, language,
                               WriteKind::kSnippet, upcoming.file_context);
    for (const std::string& function : functions) {
      ASSIGN_OR_RETURN(ChurnEntry e, CountEdits(upcoming.file_path, function));
      if (e.edits_24h + 1 >= kFunctionWarnEdits24h) {
        out.push_back({upcoming.file_path, function,
                       "function " + function + " in " + upcoming.file_path + " was edited " +
                           std::to_string(e.edits_24h) +
                           " times in the last 24 hours; this would be edit " +
                           std::to_string(e.edits_24h + 1) +
                           ". Step back: is the approach or the test wrong?"});
      }
    }
    ASSIGN_OR_RETURN(ChurnEntry file, CountEdits(upcoming.file_path, ""));
    if (file.tier == "red") {
      out.push_back({upcoming.file_path, "",
                     upcoming.file_path + " is a Red churn file: " +
                         std::to_string(file.edits_30d) + " edits in 30 days, " +
                         std::to_string(file.edits_24h) + " in the last 24 hours"});
    }
    return out;
  }

  Result<bool> FirstSighting(std::string_view key) override {
    ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(db_.get()));
    ASSIGN_OR_RETURN(Statement s, db_->Prepare("INSERT OR IGNORE INTO hook_seen (key, created_ms)"
                                               " VALUES (?1, ?2)"));
    s.Bind(1, key).Bind(2, options_.clock());
    RETURN_IF_ERROR(s.Run());
    const bool first = db_->Changes() == 1;
    if (first) {
      ASSIGN_OR_RETURN(Statement trim,
                       db_->Prepare("DELETE FROM hook_seen WHERE key IN (SELECT key FROM"
                                    " hook_seen ORDER BY created_ms DESC, key LIMIT -1 OFFSET ?1)"));
      trim.Bind(1, std::max<int64_t>(options_.seen_capacity, 1));
      RETURN_IF_ERROR(trim.Run());
    }
    RETURN_IF_ERROR(txn.Commit());
    return first;
  }

  Result<HistoryScan> LearnFromHistory(const ProgressFn& progress) override {
    HistoryScan scan;
    // Only events indexed since the last scan: document ids only grow.
    ASSIGN_OR_RETURN(Statement mark, db_->Prepare("SELECT value FROM meta WHERE key = ?1"));
    mark.Bind(1, kLearnedKey);
    ASSIGN_OR_RETURN(bool has_mark, mark.Step());
    const int64_t after = has_mark ? std::stoll(std::string(mark.ColumnText(0))) : 0;
    mark.Reset();
    ASSIGN_OR_RETURN(std::optional<int64_t> newest,
                     db_->QueryInt("SELECT max(doc_id) FROM search_docs"));
    // Read everything first: RecordWrite writes on this connection.
    struct Call {
      std::string session_id, project, name, arguments;
      int64_t time_ms;
    };
    std::vector<Call> calls;
    {
      ASSIGN_OR_RETURN(
          Statement s,
          db_->Prepare("SELECT e.session_id, e.ts_ms, p.value->>'name', p.value->>'arguments',"
                       " coalesce(s.metadata->>'project', s.metadata->>'cwd', '')"
                       " FROM search_docs d"
                       " JOIN events e ON e.session_id = d.session_id AND e.seq = d.seq"
                       " JOIN sessions s ON s.id = e.session_id,"
                       " json_each(e.body, '$.parts') p"
                       " WHERE d.doc_id > ?1 AND d.doc_id <= ?2 AND d.code_id IS NULL"
                       " AND e.type = 'message' AND e.body LIKE '%\"tool_call\"%'"
                       " AND p.value->>'type' = 'tool_call'"
                       " ORDER BY d.doc_id"));
      s.Bind(1, after).Bind(2, newest.value_or(0));
      while (true) {
        ASSIGN_OR_RETURN(bool row, s.Step());
        if (!row) break;
        calls.push_back({std::string(s.ColumnText(0)), std::string(s.ColumnText(4)),
                         std::string(s.ColumnText(2)), std::string(s.ColumnText(3)),
                         s.ColumnInt(1)});
      }
    }
    const auto total = static_cast<int64_t>(calls.size());
    if (progress) progress(0, total);
    for (size_t i = 0; i < calls.size(); ++i) {
      const Call& call = calls[i];
      for (ExtractedWrite& w : ExtractWrites(call.name, call.arguments)) {
        if (w.new_code.empty()) continue;
        ++scan.writes_found;
        CodeWrite write{.file_path = std::move(w.file_path),
                        .old_code = std::move(w.old_code),
                        .new_code = std::move(w.new_code),
                        .whole_file = w.whole_file,
                        .session_id = call.session_id,
                        .project = call.project,
                        .tool = w.tool.empty() ? call.name : w.tool,
                        .time_ms = call.time_ms};
        ASSIGN_OR_RETURN(RecordedWrite r, RecordWrite(write));
        if (r.recorded) ++scan.writes_recorded;
      }
      scan.tool_calls_scanned = static_cast<int64_t>(i + 1);
      if (progress && i % 256 == 0) progress(scan.tool_calls_scanned, total);
    }
    if (progress) progress(total, total);
    ASSIGN_OR_RETURN(Statement save, db_->Prepare("INSERT OR REPLACE INTO meta (key, value)"
                                                  " VALUES (?1, ?2)"));
    save.Bind(1, kLearnedKey).Bind(2, std::to_string(std::max(after, newest.value_or(0))));
    RETURN_IF_ERROR(save.Run());
    return scan;
  }

 private:
  Result<ChurnEntry> CountEdits(std::string_view file_path, std::string_view function) {
    const int64_t now = options_.clock();
    ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT count(*), coalesce(sum(created_ms >= ?4), 0)"
                                               " FROM code_edits WHERE file_path = ?1"
                                               " AND function = ?2 AND created_ms >= ?3"));
    s.Bind(1, file_path).Bind(2, function).Bind(3, now - 30 * kDayMs).Bind(4, now - kDayMs);
    ASSIGN_OR_RETURN(bool row, s.Step());
    ChurnEntry e{.file_path = std::string(file_path), .function = std::string(function)};
    if (row) {
      e.edits_30d = s.ColumnInt(0);
      e.edits_24h = s.ColumnInt(1);
    }
    e.tier = std::string(TierName(ClassifyChurn(e.edits_30d, e.edits_24h)));
    return e;
  }

  MemoryOptions options_;
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace
}  // namespace memory

Result<std::unique_ptr<CodeMemory>> CodeMemory::Open(const std::string& store_path,
                                                     const MemoryOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db,
                   search::OpenIndexDatabase(store_path, options.search.busy_timeout_ms));
  return std::unique_ptr<CodeMemory>(new memory::SqliteCodeMemory(options, std::move(db)));
}

}  // namespace sessiondb
