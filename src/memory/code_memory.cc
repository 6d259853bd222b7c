// CodeMemory over any backend's IndexBackend: the rules (languages, the
// functions a write touched, churn tiers, recall words, which tool calls are
// code writes) live here; the backend keeps the writes (once, by the hash of
// path, old and new code), their edits and the hook's seen keys.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <set>

#include "core/message_codec.h"
#include "memory/churn_rules.h"
#include "memory/function_detect.h"
#include "memory/history_versions.h"
#include "memory/language.h"
#include "memory/write_extract.h"
#include "memory/write_path.h"
#include "search/open_store.h"
#include "search/query_syntax.h"
#include "sessiondb/memory.h"
#include "store/index_backend.h"

namespace sessiondb {
namespace memory {
namespace {

constexpr int64_t kDayMs = 24LL * 3600 * 1000;
// Recall looks at this many newest matching writes at most.
constexpr int64_t kRecallCandidates = 2000;
// Recall indexes at most this many pending documents first: a hook call
// after a long import answers as of the index rather than index it all.
constexpr int64_t kRecallCatchUpLimit = 20'000;
// Words of the code that make the recall query; longer words say more.
constexpr size_t kRecallWords = 24;
// meta key: the last search document LearnFromHistory has read.
constexpr std::string_view kLearnedKey = "memory:learned_doc_id";
// Messages with tool calls LearnFromHistory reads at a time, so its memory
// stays bounded however much history there is.
constexpr int kLearnPage = 256;

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The words that characterise a piece of code: distinct identifiers of three
// or more characters that are not numbers or reserved words (language.h), the
// longest first, and the file's name (without extension) so the same file
// ranks well.
std::vector<std::string> RecallWords(std::string_view file_path, std::string_view code) {
  std::set<std::string> seen;
  std::vector<std::string> words;
  for (std::string& w : search::SplitWords(code)) {
    if (w.size() < 3 || std::isdigit(static_cast<unsigned char>(w[0]))) continue;
    if (IsReservedWord(w)) continue;
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

class BackendCodeMemory final : public CodeMemory {
 public:
  // `store` is the Store `backend` came from; `owned_store`, when set, is
  // that Store, owned (Open by path).
  BackendCodeMemory(MemoryOptions options, Store& store,
                    std::unique_ptr<store::IndexBackend> backend,
                    std::unique_ptr<Store> owned_store)
      : options_(std::move(options)),
        owned_store_(std::move(owned_store)),
        backend_(std::move(backend)),
        versions_(store) {
    if (!options_.clock) options_.clock = WallClockMs;
  }

  Result<RecordedWrite> RecordWrite(const CodeWrite& write) override {
    if (write.file_path.empty()) {
      return Err(Status::InvalidArgument("a code write needs the file's path"));
    }
    if (write.new_code.empty()) {
      return Err(Status::InvalidArgument("a code write needs the code it wrote"));
    }
    // One file, one path: absolute and normal (against the project when the
    // tool named it relative to its working folder). The identity below is
    // of this path, so a write is kept once however its path was spelt.
    const std::string file_path = ResolveWritePath(write.file_path, write.project);
    RecordedWrite out;
    const std::string language =
        write.language.empty() ? LanguageForPath(file_path) : write.language;
    if (write.whole_file) {
      // A whole file written without its old version: compare with the last
      // whole version kept, so only the functions that changed count.
      std::string previous = write.old_code;
      if (previous.empty()) {
        ASSIGN_OR_RETURN(std::optional<std::string> last, backend_->LastWholeFile(file_path));
        if (last) previous = std::move(*last);
      }
      out.functions = ChangedFunctions(previous, write.new_code, language, WriteKind::kWholeFile);
    } else {
      out.functions = ChangedFunctions(write.old_code, write.new_code, language,
                                       WriteKind::kSnippet, write.file_context);
    }
    const std::string hash = store::CodeWriteHash(file_path, write.old_code, write.new_code);
    const int64_t now = write.time_ms > 0 ? write.time_ms : options_.clock();

    store::StoredCodeWrite stored{.file_path = file_path,
                                  .old_code = write.old_code,
                                  .new_code = write.new_code,
                                  .whole_file = write.whole_file,
                                  .language = language,
                                  .session_id = write.session_id,
                                  .project = write.project,
                                  .tool = write.tool,
                                  .time_ms = now,
                                  .content_sha256 = hash};
    // Secrets never stored (docs/retention.md): code writes reach the index
    // without the store's front, so they are redacted here.
    if (const SecretRedactor* redactor = backend_->secret_redactor()) {
      redactor->Redact(&stored.old_code);
      redactor->Redact(&stored.new_code);
    }
    ASSIGN_OR_RETURN(RecordedWrite kept, backend_->InsertCodeWrite(stored, out.functions));
    out.recorded = kept.recorded;
    out.code_id = kept.code_id;
    return out;
  }

  Result<std::vector<RecalledCode>> Recall(std::string_view given_path, std::string_view code,
                                           int limit) override {
    const std::string file_path = ResolveWritePath(given_path, "");
    std::vector<RecalledCode> out;
    if (limit <= 0) return out;
    const store::TextQuery query = search::AnyOfWords(RecallWords(file_path, code));
    if (query.empty()) return out;
    SearchFilter filter;
    filter.events = false;
    // The writes of the last hook calls may not be indexed yet.
    RETURN_IF_ERROR(store::CatchUpBeforeQuery(*backend_, kRecallCatchUpLimit));
    ASSIGN_OR_RETURN(store::KeywordRanking ranking,
                     backend_->RankKeyword(query, filter, kRecallCandidates));
    std::set<std::string> files;
    for (const store::RankedDoc& doc : ranking.docs) {
      if (static_cast<int>(out.size()) == limit) break;
      ASSIGN_OR_RETURN(std::optional<store::KeptCodeWrite> kept,
                       backend_->CodeWriteOfDocument(doc.doc_id));
      if (!kept) continue;
      if (!files.insert(kept->file_path).second) continue;  // one per file: its best write
      out.push_back(RecalledCode{.file_path = std::move(kept->file_path),
                                 .preview = PreviewCode(kept->new_code),
                                 .session_id = std::move(kept->session_id),
                                 .project = std::move(kept->project),
                                 .time_ms = kept->time_ms,
                                 .code_id = kept->code_id,
                                 .score = doc.score});
    }
    return out;
  }

  Result<std::vector<ChurnEntry>> Hotspots(const ChurnQuery& query) override {
    const int64_t now = options_.clock();
    ASSIGN_OR_RETURN(
        std::vector<ChurnEntry> out,
        backend_->CountHotspots(query.path_prefix, query.functions, std::max(query.limit, 1),
                                now - 30 * kDayMs, now - kDayMs));
    for (ChurnEntry& e : out) {
      e.tier = ClassifyChurn(e.edits_30d, e.edits_24h);
    }
    return out;
  }

  Result<ChurnEntry> FileChurn(std::string_view file_path) override {
    return CountEdits(ResolveWritePath(file_path, ""), "");
  }

  Result<std::vector<ChurnWarning>> Warnings(const CodeWrite& upcoming) override {
    const std::string file_path = ResolveWritePath(upcoming.file_path, upcoming.project);
    std::vector<ChurnWarning> out;
    const std::string language =
        upcoming.language.empty() ? LanguageForPath(file_path) : upcoming.language;
    const std::vector<std::string> functions =
        upcoming.whole_file ? ChangedFunctions(upcoming.old_code, upcoming.new_code, language,
                                               WriteKind::kWholeFile)
                            : ChangedFunctions(upcoming.old_code, upcoming.new_code, language,
                                               WriteKind::kSnippet, upcoming.file_context);
    for (const std::string& function : functions) {
      ASSIGN_OR_RETURN(ChurnEntry e, CountEdits(file_path, function));
      if (e.edits_24h + 1 >= kFunctionWarnEdits24h) {
        out.push_back({file_path, function,
                       "function " + function + " in " + file_path + " was edited " +
                           std::to_string(e.edits_24h) +
                           " times in the last 24 hours; this would be edit " +
                           std::to_string(e.edits_24h + 1) +
                           ". Step back: is the approach or the test wrong?"});
      }
    }
    ASSIGN_OR_RETURN(ChurnEntry file, CountEdits(file_path, ""));
    if (file.tier == ChurnTier::kRed) {
      out.push_back({file_path, "",
                     file_path + " is a Red churn file: " + std::to_string(file.edits_30d) +
                         " edits in 30 days, " + std::to_string(file.edits_24h) +
                         " in the last 24 hours"});
    }
    return out;
  }

  Result<bool> FirstSighting(std::string_view key) override {
    return backend_->FirstSighting(key, options_.clock(), options_.seen_capacity);
  }

  Result<HistoryScan> LearnFromHistory(const ProgressFn& progress) override {
    HistoryScan scan;
    // Only events indexed since the last scan (document ids only grow), and
    // none past the newest one now: what arrives during the scan is the next
    // scan's, so the watermark never passes a document unread.
    ASSIGN_OR_RETURN(std::optional<std::string> mark, backend_->GetMeta(kLearnedKey));
    const int64_t start = mark ? std::max<int64_t>(0, std::strtoll(mark->c_str(), nullptr, 10)) : 0;
    ASSIGN_OR_RETURN(const int64_t newest, backend_->NewestDocument());
    // How many calls there are is unknown until the end: they are read a
    // page at a time.
    if (progress) progress(0, 0);
    int64_t after = start;
    while (after < newest) {
      ASSIGN_OR_RETURN(std::vector<store::StoredToolCall> calls,
                       backend_->ToolCallsAfter(after, kLearnPage));
      if (calls.empty()) break;  // no call after `after` at all
      for (const store::StoredToolCall& call : calls) {
        if (call.doc_id > newest) break;
        RETURN_IF_ERROR(Learn(call, &scan));
      }
      // A page holds whole messages, so every call up to its last is read.
      after = std::min(calls.back().doc_id, newest);
      // Kept as it goes: a scan cut short resumes here, not at the start.
      RETURN_IF_ERROR(backend_->SetMeta(kLearnedKey, std::to_string(after)));
      if (progress) progress(scan.tool_calls_scanned, 0);
    }
    RETURN_IF_ERROR(backend_->SetMeta(kLearnedKey, std::to_string(std::max(start, newest))));
    if (progress) progress(scan.tool_calls_scanned, scan.tool_calls_scanned);
    return scan;
  }

 private:
  // Records the code writes of one tool call, each by absolute path: a
  // relative one is meant against the folder the call ran in (a shell call's
  // own workdir, else its turn's as the importer noted it, else the
  // session's project or cwd).
  Status Learn(const store::StoredToolCall& call, HistoryScan* scan) {
    const std::string call_folder =
        call.cwd.empty() ? call.project : ResolveWritePath(call.cwd, call.project);
    std::vector<ExtractedWrite> writes = ExtractWrites(call.name, call.arguments);
    for (ExtractedWrite& w : writes) {
      const std::string folder =
          w.workdir.empty() ? call_folder : ResolveWritePath(w.workdir, call_folder);
      w.file_path = ResolveWritePath(w.file_path, folder);
    }
    if (versions_on_ && !writes.empty()) {
      Result<int64_t> learned = versions_.Learn(call, writes);
      if (learned) {
        scan->file_versions += *learned;
      } else if (learned.error().code() == StatusCode::kFailedPrecondition) {
        versions_on_ = false;  // a store that keeps no versions (a read-only one)
      } else {
        return learned.error();
      }
    }
    for (ExtractedWrite& w : writes) {
      if (w.new_code.empty()) continue;
      ++scan->writes_found;
      CodeWrite write{.file_path = std::move(w.file_path),
                      .old_code = std::move(w.old_code),
                      .new_code = std::move(w.new_code),
                      .whole_file = w.whole_file,
                      .session_id = call.session_id,
                      .project = call.project,
                      .tool = w.tool.empty() ? call.name : w.tool,
                      .time_ms = call.time_ms};
      ASSIGN_OR_RETURN(RecordedWrite r, RecordWrite(write));
      if (r.recorded) ++scan->writes_recorded;
    }
    ++scan->tool_calls_scanned;
    return Status::Ok();
  }

  Result<ChurnEntry> CountEdits(std::string_view file_path, std::string_view function) {
    const int64_t now = options_.clock();
    ASSIGN_OR_RETURN(store::EditCounts counts,
                     backend_->CountEdits(file_path, function, now - 30 * kDayMs, now - kDayMs));
    ChurnEntry e{.file_path = std::string(file_path),
                 .function = std::string(function),
                 .edits_24h = counts.edits_24h,
                 .edits_30d = counts.edits_30d};
    e.tier = ClassifyChurn(e.edits_30d, e.edits_24h);
    return e;
  }

  MemoryOptions options_;
  // Declared before backend_, so the backend is destroyed first: it must not
  // outlive its Store.
  std::unique_ptr<Store> owned_store_;
  std::unique_ptr<store::IndexBackend> backend_;
  // File versions learned from the same calls (history_versions.h).
  HistoryVersions versions_;
  bool versions_on_ = true;
};

}  // namespace
}  // namespace memory

Result<std::unique_ptr<CodeMemory>> CodeMemory::Open(Store& store, const MemoryOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<store::IndexBackend> backend,
                   options.share_store_connection ? store.OpenIndexBackendOnStoreConnection()
                                                  : store.OpenIndexBackend());
  return std::unique_ptr<CodeMemory>(
      new memory::BackendCodeMemory(options, store, std::move(backend), nullptr));
}

Result<std::unique_ptr<CodeMemory>> CodeMemory::Open(const std::string& store_path,
                                                     const MemoryOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                   search::OpenExistingStore(store_path, options.search.busy_timeout_ms));
  ASSIGN_OR_RETURN(std::unique_ptr<store::IndexBackend> backend, store->OpenIndexBackend());
  Store& kept = *store;
  return std::unique_ptr<CodeMemory>(
      new memory::BackendCodeMemory(options, kept, std::move(backend), std::move(store)));
}

}  // namespace sessiondb
