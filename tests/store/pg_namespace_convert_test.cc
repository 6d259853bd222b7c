// Encrypting, decrypting and re-keying a PostgreSQL namespace in place
// (pg_namespace_convert.h): afterwards it opens with the new key only and
// reads, searches and recalls exactly what it did; no planted word is left
// in its rows; the old data key opens nothing; another namespace sharing a
// blob is untouched; a conversion killed at any point is refused at open,
// finished by running it again, and loses nothing; a damaged value stops it
// with kCorruption naming the value, and a wrong key or kind changes nothing.
// File versions (code checkpoints) go through every conversion with their
// ids, paths, digests and content, sealed (or plain again) as a store of
// the target key writes them.
#include "store/postgres/pg_namespace_convert.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "canary_scan.h"
#include "core/key_file.h"
#include "core/message_codec.h"
#include "sessiondb/encryption.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_sealer.h"
#include "store_fixture.h"

namespace sessiondb::testing {
namespace {

using postgres::ConvertNamespace;
using postgres::NamespaceConversion;
using postgres::PgColumn;
using postgres::PgSealer;

constexpr char kFile[] = "/src/canaryproject/heliotrope.py";

Message Text(const std::string& text, Role role = Role::kUser) {
  Message m;
  m.role = role;
  m.parts.push_back(Part::Text(text));
  return m;
}

// The rows of `sql` (one text column), split.
std::vector<std::string> Rows(const PgTestDatabase& pg, const std::string& sql) {
  const std::string joined =
      pg.Query("SELECT coalesce(string_agg(x, E'\\x1e'), '') FROM (" + sql + ") AS r(x)");
  std::vector<std::string> out;
  std::stringstream in(joined);
  std::string row;
  while (std::getline(in, row, '\x1e')) out.push_back(row);
  return out;
}

std::vector<std::string> Fields(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream in(row);
  std::string field;
  while (std::getline(in, field, '\x1f')) out.push_back(field);
  if (!row.empty() && row.back() == '\x1f') out.emplace_back();
  return out;
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

class PgNamespaceConvert : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kPostgres; }

  void SetUp() override {
    StoreTest::SetUp();
    key_a_ = dir_.Sub("a.key");
    key_b_ = dir_.Sub("b.key");
    ASSERT_TRUE(cipher::WriteNewKeyFile(key_a_));
    ASSERT_TRUE(cipher::WriteNewKeyFile(key_b_));
  }

  StoreOptions With(const std::string& key_file, const std::string& ns = "default") {
    StoreOptions options = Options();
    options.key_file = key_file;
    options.namespace_name = ns;
    return options;
  }

  Result<std::unique_ptr<Store>> TryOpen(const std::string& key_file,
                                         const std::string& ns = "default") {
    return Store::Open(Location(), With(key_file, ns));
  }

  std::unique_ptr<Store> Open(const std::string& key_file, const std::string& ns = "default") {
    auto opened = TryOpen(key_file, ns);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }

  Result<ConvertReport> Convert(NamespaceConversion kind, const std::string& key_file,
                                const std::string& new_key_file,
                                const std::string& ns = "default") {
    ConvertOptions convert;
    convert.new_key_file = new_key_file;
    return ConvertNamespace(Location(), With(key_file, ns), kind, convert);
  }

  // Success, or the conversion's error.
  ::testing::AssertionResult Converts(NamespaceConversion kind, const std::string& key_file,
                                      const std::string& new_key_file) {
    auto r = Convert(kind, key_file, new_key_file);
    if (r) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << r.error().ToString();
  }

  // The data key of namespace `ns` as its envelope holds it under `key_file`.
  PgSealer SealerOf(const std::string& key_file, const std::string& ns = "default") {
    const std::string envelope =
        pg_->Query("SELECT value FROM index_meta WHERE namespace = '" + ns + "' AND key = '" +
                   std::string(postgres::kNamespaceEnvelopeKey) + "'");
    auto master = cipher::ReadMasterKey(key_file);
    EXPECT_TRUE(master);
    auto key = store::OpenKeyEnvelope(envelope, *master, postgres::NamespaceKeyScope(ns), ns);
    EXPECT_TRUE(key) << key.error().ToString();
    return key ? PgSealer(*key) : PgSealer();
  }

  std::string KeyId(const std::string& ns = "default") {
    auto status = GetEncryptionStatus(Location(), With("", ns));
    EXPECT_TRUE(status) << status.error().ToString();
    return status ? status->key_id : "";
  }

  // One of everything a namespace holds, each with a planted word.
  void Fill(Store& store) {
    auto session = store.CreateSession({.id = "s1",
                                        .title = "canarytitle",
                                        .metadata_json = R"({"project":"/src/canaryproject"})"});
    ASSERT_TRUE(session) << session.error().ToString();
    ASSERT_TRUE(store.Append("s1", Text("canarymessage about the zeppelin and the quokka")));
    Message call;
    call.role = Role::kAssistant;
    call.parts.push_back(Part::ToolCall("call_1", "shell", R"({"cmd":"canarytoolinput"})"));
    ASSERT_TRUE(store.Append("s1", call));
    Message result;
    result.role = Role::kTool;
    result.parts.push_back(Part::ToolResult("call_1", "canarytoolresult"));
    ASSERT_TRUE(store.Append("s1", result));
    Message image;
    image.role = Role::kUser;
    image.parts.push_back(Part::ImageFromBytes(png_, "image/png"));
    ASSERT_TRUE(store.Append("s1", image));
    ASSERT_TRUE(store.Append("s1", Text("a zeppelin again", Role::kAssistant)));
    auto draft = store.OpenDraft("s1", Role::kAssistant, "model");
    ASSERT_TRUE(draft);
    draft->text = "canarydraft";
    draft->reasoning = "canaryreasoning";
    ASSERT_TRUE(store.SaveDraft(*draft).ok());
    ASSERT_TRUE(store.SetRedactionSettings({.enabled = true, .allow = {"canarysetting"}}).ok());
    ASSERT_TRUE(store.ForkSession("s1", 2, {}));
    auto memory = CodeMemory::Open(store, MemoryOpts());
    ASSERT_TRUE(memory) << memory.error().ToString();
    ASSERT_TRUE((*memory)->RecordWrite({.file_path = kFile,
                                        .old_code = "def canaryold():\n    pass\n",
                                        .new_code = "def canarycode():\n    return 1\n",
                                        .project = "/src/canaryproject"}));
    ASSERT_TRUE((*memory)->RecordWrite({.file_path = kFile,
                                        .new_code = "def canarycode():\n    return 2\n"
                                                    "def canaryother():\n    return 3\n",
                                        .project = "/src/canaryproject"}));
    ASSERT_TRUE(*(*memory)->FirstSighting("canaryhook"));
    auto index = SearchIndex::Open(store, SearchOpts());
    ASSERT_TRUE(index) << index.error().ToString();
    auto embedded = (*index)->Embed();
    ASSERT_TRUE(embedded) << embedded.error().ToString();
  }

  // File versions of the code memory's file, with planted words in the
  // path, project, tool and content: a before, an after, a created file.
  void FillVersions(Store& store) {
    FileVersion v{.agent_session = "s1",
                  .tool_use_id = "call_1",
                  .file_path = kFile,
                  .phase = FileVersionPhase::kBefore,
                  .tool = "canaryedittool",
                  .source = "hook",
                  .project = "/src/canaryproject"};
    ASSERT_TRUE(store.RecordFileVersion(v, kVersionBefore));
    v.phase = FileVersionPhase::kAfter;
    ASSERT_TRUE(store.RecordFileVersion(v, kVersionAfter));
    FileVersion created = v;
    created.tool_use_id = "call_2";
    created.file_path = "/src/canaryproject/canarycreated.py";
    created.phase = FileVersionPhase::kBefore;
    created.exists = false;
    created.project = "";
    ASSERT_TRUE(store.RecordFileVersion(created, ""));
  }

  static SearchOptions SearchOpts() {
    SearchOptions options;
    options.embedder.from_environment = false;  // the built-in embedder
    return options;
  }
  static MemoryOptions MemoryOpts() {
    MemoryOptions options;
    options.search = SearchOpts();
    return options;
  }

  // Everything the namespace gives back through the store, as text.
  std::string Reading(Store& store) {
    std::string out;
    auto page = store.ListSessions({.limit = 1000, .archived = ArchiveFilter::kAll});
    EXPECT_TRUE(page) << page.error().ToString();
    if (!page) return out;
    std::vector<Session> sessions = page->sessions;
    std::sort(sessions.begin(), sessions.end(),
              [](const Session& a, const Session& b) { return a.id < b.id; });
    for (const Session& s : sessions) {
      out += s.id + "|" + s.title + "|" + s.preview + "|" + s.metadata_json + "\n";
      auto messages = store.ReadMessages(s.id);
      EXPECT_TRUE(messages) << messages.error().ToString();
      for (const Message& m : messages.value_or(std::vector<Message>())) {
        auto body = EncodeMessageBody(m);
        EXPECT_TRUE(body);
        out += "  " + (body && *body ? **body : m.parts.front().text) + "\n";
      }
      auto drafts = store.ListDrafts(s.id);
      EXPECT_TRUE(drafts);
      for (const Draft& d : drafts.value_or(std::vector<Draft>())) {
        out += "  draft " + d.text + "|" + d.reasoning + "\n";
      }
    }
    auto settings = store.GetRedactionSettings();
    EXPECT_TRUE(settings);
    for (const std::string& a : settings->allow) out += "allow " + a + "\n";
    auto bytes = store.ReadBlob(blob::Sha256Hex(png_));
    EXPECT_TRUE(bytes) << bytes.error().ToString();
    out += "blob " + std::to_string(bytes && *bytes == png_) + "\n";
    out += ReadingVersions(store);
    return out;
  }

  // Every file version, field by field, with its content; and those of
  // kFile found by its path.
  static std::string ReadingVersions(Store& store) {
    std::string out;
    auto versions = store.ListFileVersions({});
    EXPECT_TRUE(versions) << versions.error().ToString();
    for (const FileVersion& v : versions.value_or(std::vector<FileVersion>())) {
      out += "version " + std::to_string(v.id) + "|" + v.agent_session + "|" + v.tool_use_id + "|" +
             v.file_path + "|" + std::string(FileVersionPhaseName(v.phase)) + "|" +
             std::to_string(v.exists) + "|" + v.sha256 + "|" + std::to_string(v.size) + "|" +
             v.tool + "|" + v.source + "|" + v.project + "|" + std::to_string(v.time_ms) + "\n";
      if (v.exists) {
        auto content = store.ReadBlob(v.sha256);
        EXPECT_TRUE(content) << content.error().ToString();
        out += "  " + content.value_or("unreadable") + "\n";
      }
    }
    auto of_file = store.ListFileVersions({.file_path = kFile});
    EXPECT_TRUE(of_file) << of_file.error().ToString();
    for (const FileVersion& v : of_file.value_or(std::vector<FileVersion>())) {
      out += "of file " + std::to_string(v.id) + "\n";
    }
    return out;
  }

  // What search and the code memory find, as text.
  std::string Finding(Store& store) {
    std::string out;
    auto index = SearchIndex::Open(store, SearchOpts());
    EXPECT_TRUE(index) << index.error().ToString();
    if (!index) return out;
    for (const char* q : {"zeppelin", "quokka", "canarytoolinput", "canarytoolresult", "heliotrope",
                          "canarycode", "\"zeppelin and the\""}) {
      auto r = (*index)->Search({.query = q, .mode = SearchMode::kKeyword});
      EXPECT_TRUE(r) << q << ": " << r.error().ToString();
      out += std::string(q) + ":";
      for (const SearchHit& h : r ? r->hits : std::vector<SearchHit>()) {
        out += " " + h.session_id + "/" + std::to_string(h.seq) + "/" + h.file_path;
      }
      out += "\n";
    }
    auto vectors = (*index)->Search({.query = "zeppelin quokka", .mode = SearchMode::kVector});
    EXPECT_TRUE(vectors) << vectors.error().ToString();
    out += "vector:";
    for (const SearchHit& h : vectors ? vectors->hits : std::vector<SearchHit>()) {
      out += " " + h.session_id + "/" + std::to_string(h.seq) + "/" + std::to_string(h.code_id);
    }
    out += "\nvectors " + std::to_string((*index)->VectorCount().value_or(-1)) + " pending " +
           std::to_string((*index)->PendingEmbeddings().value_or(-1)) + "\n";
    auto memory = CodeMemory::Open(store, MemoryOpts());
    EXPECT_TRUE(memory) << memory.error().ToString();
    if (!memory) return out;
    auto recalled = (*memory)->Recall(kFile, "def canarycode():\n    return 2\n");
    EXPECT_TRUE(recalled) << recalled.error().ToString();
    for (const RecalledCode& r : recalled.value_or(std::vector<RecalledCode>())) {
      out += "recall " + r.file_path + "|" + r.preview + "|" + r.project + "\n";
    }
    auto hot = (*memory)->Hotspots({.functions = true});
    EXPECT_TRUE(hot);
    for (const ChurnEntry& e : hot.value_or(std::vector<ChurnEntry>())) {
      out += "hot " + e.file_path + "|" + e.function + "|" + std::to_string(e.edits_30d) + "\n";
    }
    auto churn = (*memory)->FileChurn(kFile);
    EXPECT_TRUE(churn);
    out += "churn " + std::to_string(churn ? churn->edits_30d : -1) + "\n";
    return out;
  }

  // Every sealed value of namespace `ns`: how many there are, and how many
  // `sealer` opens.
  struct Opened {
    int total = 0;
    int opened = 0;
  };
  Opened OpenSealedValues(const PgSealer& sealer, const std::string& ns = "default") {
    Opened out;
    auto check = [&](PgColumn column, const std::string& record, const std::string& stored) {
      if (stored.empty()) return;
      ++out.total;
      out.opened += sealer.OpenText(column, record, stored).has_value();
    };
    auto check_bytes = [&](PgColumn column, const std::string& record, const std::string& hex) {
      ++out.total;
      out.opened += sealer.OpenBytes(column, record, FromHex(hex)).has_value();
    };
    const std::string where = " WHERE namespace = '" + ns + "'";
    for (const std::string& row :
         Rows(*pg_,
              "SELECT concat_ws(E'\\x1f', id, title, preview, metadata) FROM sessions" + where)) {
      auto f = Fields(row);
      check(PgColumn::kSessionTitle, f[0], f[1]);
      check(PgColumn::kSessionPreview, f[0], f[2]);
      check(PgColumn::kSessionMetadata, f[0], f[3]);
    }
    for (const std::string& row :
         Rows(*pg_,
              "SELECT concat_ws(E'\\x1f', id, text, coalesce(body, '')) FROM events" + where)) {
      auto f = Fields(row);
      check(PgColumn::kEventText, f[0], f[1]);
      check(PgColumn::kEventBody, f[0], f[2]);
    }
    for (const std::string& row :
         Rows(*pg_, "SELECT concat_ws(E'\\x1f', id, text, reasoning) FROM drafts" + where)) {
      auto f = Fields(row);
      check(PgColumn::kDraftText, f[0], f[1]);
      check(PgColumn::kDraftReasoning, f[0], f[2]);
    }
    for (const std::string& row :
         Rows(*pg_, "SELECT concat_ws(E'\\x1f', key, value) FROM index_meta" + where +
                        " AND key LIKE 'setting:%'")) {
      auto f = Fields(row);
      check(PgColumn::kSetting, f[0], f[1]);
    }
    for (const std::string& row :
         Rows(*pg_,
              "SELECT concat_ws(E'\\x1f', content_sha256, file_path, old_code, new_code, "
              "project) FROM code_writes" +
                  where)) {
      auto f = Fields(row);
      check(PgColumn::kCodeFilePath, f[0], f[1]);
      check(PgColumn::kCodeOld, f[0], f[2]);
      check(PgColumn::kCodeNew, f[0], f[3]);
      check(PgColumn::kCodeProject, f[0], f[4]);
    }
    for (const std::string& row :
         Rows(*pg_, "SELECT function FROM code_edits" + where + " AND function <> ''")) {
      const size_t space = row.find(' ');
      check(PgColumn::kCodeFunction, row.substr(0, space), row.substr(space + 1));
    }
    for (const std::string& row :
         Rows(*pg_, "SELECT concat_ws(E'\\x1f', id, sealed) FROM file_versions" + where)) {
      auto f = Fields(row);
      ++out.total;  // a version without its seal counts as one that does not open
      if (f.size() > 1) {
        out.opened += sealer.OpenText(PgColumn::kFileVersion, f[0], f[1]).has_value();
      }
    }
    for (const std::string& row :
         Rows(*pg_, "SELECT concat_ws(E'\\x1f', sha256, digest) FROM blob_refs" + where)) {
      auto f = Fields(row);
      if (f.size() > 1) check(PgColumn::kBlobDigest, f[0], f[1]);
    }
    for (const std::string& row :
         Rows(*pg_,
              "SELECT concat_ws(E'\\x1f', sha256, encode(bytes, 'hex')) FROM blobs WHERE sha256 "
              "IN (SELECT sha256 FROM blob_refs" +
                  where + ")")) {
      auto f = Fields(row);
      check_bytes(PgColumn::kBlob, f[0], f[1]);
    }
    for (const std::string& row :
         Rows(*pg_, "SELECT concat_ws(E'\\x1f', doc_id, encode(vector, 'hex')) FROM embeddings" +
                        where + " AND length(vector) > 0")) {
      auto f = Fields(row);
      check_bytes(PgColumn::kEmbedding, f[0], f[1]);
    }
    return out;
  }

  // Every row of every table that holds `ns`, as text: what "untouched" compares.
  std::string RowsOf(const std::string& ns) {
    std::string out;
    for (const char* table :
         {"sessions", "events", "drafts", "index_meta", "code_writes", "code_edits", "blob_refs",
          "search_docs", "embeddings", "hook_seen", "usage_totals"}) {
      out += pg_->Query("SELECT coalesce(string_agg(x::text, E'\\n' ORDER BY x::text), '') FROM " +
                        std::string(table) + " x WHERE namespace = '" + ns + "'");
    }
    return out;
  }

  // The planted words, and where any of them is still in a table's rows.
  std::vector<std::string> Canaries() const {
    return {"canarytitle",
            "canaryproject",
            "canarymessage",
            "zeppelin",
            "canarytoolinput",
            "canarytoolresult",
            "canarydraft",
            "canaryreasoning",
            "canarysetting",
            "canarycode",
            "canaryold",
            "heliotrope",
            "canaryhook",
            HexOf(png_.substr(100, 24)),
            blob::Sha256Hex(png_),
            "canaryedittool",
            "canarycreated",
            "canaryversion",
            blob::Sha256Hex(kVersionBefore),
            blob::Sha256Hex(kVersionAfter)};
  }
  void ExpectNoCanaryInTheRows() {
    for (const std::string& canary : Canaries()) {
      for (const std::string& table : Rows(*pg_,
                                           "SELECT tablename::text FROM pg_tables WHERE "
                                           "schemaname = current_schema()")) {
        EXPECT_EQ(pg_->Query("SELECT count(*) FROM \"" + table + "\" x WHERE position('" + canary +
                             "' in x::text) > 0"),
                  "0")
            << canary << " is still in table " << table;
      }
    }
  }

  // Runs the conversion in a child that is killed (SIGKILL) after its
  // `batches`th committed batch.
  void ConvertKilledAfter(NamespaceConversion kind, const std::string& key_file,
                          const std::string& new_key_file, int batches) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int done = 0;
      ConvertOptions convert;
      convert.new_key_file = new_key_file;
      convert.progress = [&](int64_t, int64_t) {
        if (++done == batches) raise(SIGKILL);
      };
      auto r = ConvertNamespace(Location(), With(key_file), kind, convert);
      _exit(r ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the conversion ended before its batch " << batches << " (status " << status << ")";
  }

  // Runs the conversion in a child killed (SIGKILL) as soon as its progress
  // row moves: most likely inside the transaction of the batch after, or
  // (rarely) after its last.
  void ConvertKilledWhileRunning(NamespaceConversion kind, const std::string& key_file,
                                 const std::string& new_key_file) {
    const std::string progress = "SELECT value FROM index_meta WHERE key = '" +
                                 std::string(postgres::kNamespaceConversionProgressKey) + "'";
    const std::string before = pg_->Query(progress);
    const pid_t pid = fork();
    EXPECT_GE(pid, 0);
    if (pid == 0) {
      auto r = Convert(kind, key_file, new_key_file);
      _exit(r ? 0 : 3);
    }
    int status = 0;
    for (int i = 0; i < 30'000 && waitpid(pid, &status, WNOHANG) == 0; ++i) {
      if (pg_->Query(progress) != before) {
        kill(pid, SIGKILL);
        EXPECT_EQ(waitpid(pid, &status, 0), pid);
        break;
      }
      usleep(1000);
    }
  }

  static constexpr char kVersionBefore[] = "def canaryversion():\n    return 'before'\n";
  static constexpr char kVersionAfter[] = "def canaryversion():\n    return 'after'\n";
  std::string key_a_, key_b_;
  const std::string png_ = MakePng(8, 8, "canaryimage", 600);
};

TEST_F(PgNamespaceConvert, EncryptingSealsEverythingAndEverythingReadsAndSearchesTheSame) {
  Fill(*store_);
  FillVersions(*store_);
  const std::string reading = Reading(*store_);
  ASSERT_NE(reading.find("version "), std::string::npos) << reading;
  const std::string finding = Finding(*store_);
  ASSERT_NE(finding.find("zeppelin: s1/"), std::string::npos) << finding;
  ASSERT_NE(finding.find("recall " + std::string(kFile)), std::string::npos) << finding;
  ASSERT_EQ(finding.find("vectors 0 "), std::string::npos) << finding;
  store_.reset();

  auto report = Convert(NamespaceConversion::kEncrypt, "", key_a_);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->old_copy.empty());
  EXPECT_EQ(report->blobs, 3) << "the image and two versions' contents";
  EXPECT_GT(report->rows, 10);
  EXPECT_EQ(report->key_id, KeyId());
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_docs WHERE tsv IS NULL"), "0")
      << "the conversion indexed the documents again itself";

  auto without_key = TryOpen("");
  ASSERT_FALSE(without_key);
  EXPECT_EQ(without_key.error().code(), StatusCode::kFailedPrecondition);
  auto sealed = Open(key_a_);
  ASSERT_TRUE(sealed);
  EXPECT_EQ(Reading(*sealed), reading);
  EXPECT_EQ(Finding(*sealed), finding);
  const Opened opened = OpenSealedValues(SealerOf(key_a_));
  EXPECT_GT(opened.total, 30);
  EXPECT_EQ(opened.opened, opened.total);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM hook_seen"), "0") << "the hook memory starts afresh";
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM index_meta WHERE key LIKE 'encryption:convert%'"),
            "0");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE sealed IS NULL"), "0");
  sealed.reset();
  ExpectNoCanaryInTheRows();
}

TEST_F(PgNamespaceConvert, DecryptingGivesThePlaintextNamespaceBack) {
  Fill(*store_);
  FillVersions(*store_);
  const std::string reading = Reading(*store_);
  const std::string finding = Finding(*store_);
  store_.reset();
  ASSERT_TRUE(Converts(NamespaceConversion::kEncrypt, "", key_a_));

  auto report = Convert(NamespaceConversion::kDecrypt, key_a_, "");
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->key_id.empty());
  EXPECT_EQ(report->blobs, 3);
  auto with_key = TryOpen(key_a_);
  ASSERT_FALSE(with_key) << "a plaintext namespace with content refuses a key";
  auto plain = Open("");
  ASSERT_TRUE(plain);
  EXPECT_EQ(Reading(*plain), reading);
  EXPECT_EQ(Finding(*plain), finding);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM index_meta WHERE key LIKE 'encryption:%'"), "0");
  EXPECT_EQ(pg_->Query("SELECT string_agg(sha256, ',' ORDER BY sha256) FROM blobs"),
            pg_->Query("SELECT string_agg(x, ',' ORDER BY x) FROM unnest(ARRAY['" +
                       blob::Sha256Hex(png_) + "', '" + blob::Sha256Hex(kVersionBefore) + "', '" +
                       blob::Sha256Hex(kVersionAfter) + "']) AS x"))
      << "the keyed blob rows are gone; the plaintext ones are back";
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE sealed IS NOT NULL"), "0");
  EXPECT_EQ(pg_->Query("SELECT string_agg(DISTINCT file_path, ',') FROM file_versions WHERE "
                       "sha256 IS NOT NULL"),
            kFile);
  EXPECT_EQ(pg_->Query("SELECT string_agg(DISTINCT tool, ',') FROM file_versions"),
            "canaryedittool");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_refs WHERE digest IS NOT NULL"), "0");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM events WHERE text LIKE 'sdb1:%' OR "
                       "body LIKE 'sdb1:%'"),
            "0");
}

TEST_F(PgNamespaceConvert, RekeyingChangesTheDataKeyAndTheOldOneOpensNothing) {
  Fill(*store_);
  FillVersions(*store_);
  const std::string reading = Reading(*store_);
  const std::string finding = Finding(*store_);
  store_.reset();
  ASSERT_TRUE(Converts(NamespaceConversion::kEncrypt, "", key_a_));
  const std::string old_id = KeyId();
  const PgSealer old_key = SealerOf(key_a_);

  auto report = Convert(NamespaceConversion::kRekey, key_a_, key_b_);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_NE(report->key_id, old_id);
  EXPECT_EQ(report->key_id, KeyId());
  auto with_old_master = TryOpen(key_a_);
  ASSERT_FALSE(with_old_master);
  EXPECT_EQ(with_old_master.error().code(), StatusCode::kFailedPrecondition);
  auto rekeyed = Open(key_b_);
  ASSERT_TRUE(rekeyed);
  EXPECT_EQ(Reading(*rekeyed), reading);
  EXPECT_EQ(Finding(*rekeyed), finding);
  rekeyed.reset();
  const Opened by_old = OpenSealedValues(old_key);
  const Opened by_new = OpenSealedValues(SealerOf(key_b_));
  EXPECT_GT(by_new.total, 30);
  EXPECT_EQ(by_new.opened, by_new.total);
  EXPECT_EQ(by_old.opened, 0) << "of " << by_old.total;
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "3") << "the old key's blob rows are gone";

  // Without a new key file: a new data key under the same master key.
  auto again = Convert(NamespaceConversion::kRekey, key_b_, "");
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_NE(again->key_id, report->key_id);
  auto reopened = Open(key_b_);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(Reading(*reopened), reading);
}

TEST_F(PgNamespaceConvert, ANamespaceSharingABlobIsUntouchedAndStillReadsIt) {
  auto plain_other = Open("", "plain-other");
  auto sealed_other = Open(key_a_, "sealed-other");
  ASSERT_TRUE(plain_other && sealed_other);
  Message image;
  image.role = Role::kUser;
  image.parts.push_back(Part::ImageFromBytes(png_, "image/png"));
  for (Store* s : {plain_other.get(), sealed_other.get()}) {
    ASSERT_TRUE(s->CreateSession({.id = "o1"}));
    ASSERT_TRUE(s->Append("o1", image));
  }
  Fill(*store_);
  store_.reset();
  const std::string plain_rows = RowsOf("plain-other");
  const std::string sealed_rows = RowsOf("sealed-other");
  const std::string sha = blob::Sha256Hex(png_);

  ASSERT_TRUE(Converts(NamespaceConversion::kEncrypt, "", key_b_));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs WHERE sha256 = '" + sha + "'"), "1")
      << "the plaintext row another namespace refers to stays";
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "3");
  ASSERT_TRUE(Converts(NamespaceConversion::kRekey, key_b_, key_a_));
  ASSERT_TRUE(Converts(NamespaceConversion::kDecrypt, key_a_, ""));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "2") << "the plaintext row is shared again";

  EXPECT_EQ(RowsOf("plain-other"), plain_rows);
  EXPECT_EQ(RowsOf("sealed-other"), sealed_rows);
  for (Store* s : {plain_other.get(), sealed_other.get()}) {
    auto bytes = s->ReadBlob(sha);
    ASSERT_TRUE(bytes) << bytes.error().ToString();
    EXPECT_EQ(*bytes, png_);
  }
  plain_other.reset();
  auto reopened = Open("", "plain-other");
  ASSERT_TRUE(reopened);
  EXPECT_EQ(*reopened->ReadBlob(sha), png_);
  auto mine = Open("");
  ASSERT_TRUE(mine);
  EXPECT_EQ(*mine->ReadBlob(sha), png_);
}

TEST_F(PgNamespaceConvert, AKilledConversionIsRefusedAtOpenAndFinishedByRunningItAgain) {
  Fill(*store_);
  FillVersions(*store_);
  // Enough for several batches of events (500 rows each).
  for (const char* id : {"bulk1", "bulk2"}) {
    ASSERT_TRUE(store_->CreateSession({.id = id, .title = std::string("title of ") + id}));
    std::vector<Message> batch;
    for (int i = 0; i < 700; ++i) batch.push_back(Text("bulk message " + std::to_string(i)));
    ASSERT_TRUE(store_->AppendBatch(id, batch));
  }
  store_.reset();
  ASSERT_TRUE(Converts(NamespaceConversion::kEncrypt, "", key_a_));
  auto before = Open(key_a_);
  ASSERT_TRUE(before);
  const std::string reading = Reading(*before);
  const std::string finding = Finding(*before);
  before.reset();
  const PgSealer old_key = SealerOf(key_a_);

  // Killed after the sessions, in the middle of the events, after them.
  for (int batches : {1, 2, 4}) {
    SCOPED_TRACE("killed after batch " + std::to_string(batches));
    ConvertKilledAfter(NamespaceConversion::kRekey, key_a_, key_b_, batches);
    for (const std::string& key : {key_a_, key_b_, std::string()}) {
      auto refused = TryOpen(key);
      ASSERT_FALSE(refused);
      EXPECT_EQ(refused.error().code(), StatusCode::kFailedPrecondition);
      EXPECT_NE(refused.error().message().find("a `sessiondb key rekey` of namespace 'default' "
                                               "is under way; run it again to finish it"),
                std::string::npos)
          << refused.error().message();
    }
  }
  // Another kind is refused, saying which is under way; so is another new key.
  auto decrypt = Convert(NamespaceConversion::kDecrypt, key_a_, "");
  ASSERT_FALSE(decrypt);
  EXPECT_EQ(decrypt.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(decrypt.error().message().find("`sessiondb key rekey`"), std::string::npos)
      << decrypt.error().message();
  auto other_target = Convert(NamespaceConversion::kRekey, key_a_, key_a_);
  ASSERT_FALSE(other_target);
  EXPECT_EQ(other_target.error().code(), StatusCode::kFailedPrecondition);

  auto finished = Convert(NamespaceConversion::kRekey, key_a_, key_b_);
  ASSERT_TRUE(finished) << finished.error().ToString();
  const std::string rows = pg_->Query(
      "SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM events) + "
      "(SELECT count(*) FROM drafts) + (SELECT count(*) FROM code_writes) + "
      "(SELECT count(*) FROM file_versions) + "
      "(SELECT count(*) FROM index_meta WHERE key LIKE 'setting:%') + "
      "(SELECT count(DISTINCT sha256) FROM blob_refs)");
  EXPECT_EQ(std::to_string(finished->rows), rows)
      << "every row re-sealed once: no batch lost, none redone";
  auto after = Open(key_b_);
  ASSERT_TRUE(after);
  EXPECT_EQ(Reading(*after), reading);
  EXPECT_EQ(Finding(*after), finding);
  after.reset();
  const Opened by_new = OpenSealedValues(SealerOf(key_b_));
  EXPECT_GT(by_new.total, 1400);
  EXPECT_EQ(by_new.opened, by_new.total);
  EXPECT_EQ(OpenSealedValues(old_key).opened, 0);
}

TEST_F(PgNamespaceConvert, AnEncryptionKilledMidWayLosesNothing) {
  Fill(*store_);
  ASSERT_TRUE(store_->CreateSession({.id = "bulk", .title = "bulk"}));
  std::vector<Message> batch;
  for (int i = 0; i < 600; ++i) batch.push_back(Text("bulk message " + std::to_string(i)));
  ASSERT_TRUE(store_->AppendBatch("bulk", batch));
  const std::string reading = Reading(*store_);
  const std::string finding = Finding(*store_);
  store_.reset();
  ConvertKilledAfter(NamespaceConversion::kEncrypt, "", key_a_, 2);
  auto refused = TryOpen("");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("`sessiondb encrypt`"), std::string::npos)
      << refused.error().message();
  // And killed at a moment of its own, inside a batch (or just after the end).
  ConvertKilledWhileRunning(NamespaceConversion::kEncrypt, "", key_a_);
  if (pg_->Query("SELECT count(*) FROM index_meta WHERE key = 'encryption:convert'") == "1") {
    EXPECT_FALSE(TryOpen(key_a_));
    auto finished = Convert(NamespaceConversion::kEncrypt, "", key_a_);
    ASSERT_TRUE(finished) << finished.error().ToString();
  }
  auto sealed = Open(key_a_);
  ASSERT_TRUE(sealed);
  EXPECT_EQ(Reading(*sealed), reading);
  EXPECT_EQ(Finding(*sealed), finding);
  sealed.reset();
  const Opened opened = OpenSealedValues(SealerOf(key_a_));
  EXPECT_EQ(opened.opened, opened.total);
  ExpectNoCanaryInTheRows();
}

TEST_F(PgNamespaceConvert, FileVersionsKeepTheirIdsDigestsAndContentThroughEveryConversion) {
  FillVersions(*store_);
  // More than a batch (500 rows), so that a run can be killed inside them.
  for (int i = 0; i < 520; ++i) {
    FileVersion v{.agent_session = "s2",
                  .file_path = "/src/canaryproject/many/" + std::to_string(i) + ".py",
                  .tool = "Bash",
                  .source = "shell",
                  .project = "/src/canaryproject"};
    ASSERT_TRUE(store_->RecordFileVersion(v, "shared content " + std::to_string(i % 3) + "\n"));
  }
  const std::string versions = ReadingVersions(*store_);
  ASSERT_NE(versions.find("of file "), std::string::npos) << versions;
  store_.reset();
  const std::string token_of_file =
      "SELECT DISTINCT file_path FROM file_versions WHERE tool_use_id = 'call_1'";
  auto same_key_again = [&](Store& store) {
    // The converted token of the path is the one this key makes: a retried
    // hook finds the row kept, and a "before" compares with the opened rows.
    FileVersion after{.agent_session = "s1",
                      .tool_use_id = "call_1",
                      .file_path = kFile,
                      .phase = FileVersionPhase::kAfter,
                      .tool = "canaryedittool",
                      .source = "hook",
                      .project = "/src/canaryproject"};
    auto kept = store.RecordFileVersion(after, "something else\n");
    ASSERT_TRUE(kept) << kept.error().ToString();
    EXPECT_EQ(kept->sha256, blob::Sha256Hex(kVersionAfter));
  };

  ASSERT_TRUE(Converts(NamespaceConversion::kEncrypt, "", key_a_));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE sealed IS NULL OR "
                       "position('canary' in file_path || project || tool) > 0"),
            "0");
  const std::string token_a = pg_->Query(token_of_file);
  EXPECT_NE(token_a, kFile);
  {
    auto sealed = Open(key_a_);
    ASSERT_TRUE(sealed);
    EXPECT_EQ(ReadingVersions(*sealed), versions);
    same_key_again(*sealed);
  }
  Opened opened = OpenSealedValues(SealerOf(key_a_));
  EXPECT_EQ(opened.opened, opened.total);

  // A rekey killed inside the versions (the sixth batch is their first:
  // sessions, events, drafts, settings and code writes take one each), then
  // finished by running it again.
  const PgSealer old_key = SealerOf(key_a_);
  ConvertKilledAfter(NamespaceConversion::kRekey, key_a_, key_b_, 6);
  EXPECT_NE(pg_->Query("SELECT value FROM index_meta WHERE key = '" +
                       std::string(postgres::kNamespaceConversionProgressKey) + "'")
                .find("file_versions"),
            std::string::npos);
  ASSERT_TRUE(Converts(NamespaceConversion::kRekey, key_a_, key_b_));
  const std::string token_b = pg_->Query(token_of_file);
  EXPECT_NE(token_b, token_a);
  EXPECT_EQ(token_b.size(), token_a.size());
  {
    auto rekeyed = Open(key_b_);
    ASSERT_TRUE(rekeyed);
    EXPECT_EQ(ReadingVersions(*rekeyed), versions);
    same_key_again(*rekeyed);
  }
  opened = OpenSealedValues(SealerOf(key_b_));
  EXPECT_EQ(opened.opened, opened.total);
  EXPECT_EQ(OpenSealedValues(old_key).opened, 0);

  ASSERT_TRUE(Converts(NamespaceConversion::kDecrypt, key_b_, ""));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE sealed IS NOT NULL"), "0");
  EXPECT_EQ(pg_->Query(token_of_file), kFile);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE sha256 IS NOT NULL AND "
                       "sha256 !~ '^[0-9a-f]{64}$'"),
            "0");
  auto plain = Open("");
  ASSERT_TRUE(plain);
  EXPECT_EQ(ReadingVersions(*plain), versions);
  same_key_again(*plain);
  auto verify = plain->Verify();
  ASSERT_TRUE(verify) << verify.error().ToString();
  EXPECT_TRUE(verify->missing.empty());
}

TEST_F(PgNamespaceConvert, LargeMessagesAreConvertedAFewAtATime) {
  ASSERT_TRUE(store_->CreateSession({.id = "big"}));
  const std::string big(size_t{6} << 20, 'x');
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(store_->Append("big", Text(std::to_string(i) + big)));
  store_.reset();
  std::vector<int64_t> done = {0};
  ConvertOptions convert;
  convert.new_key_file = key_a_;
  convert.progress = [&](int64_t rows, int64_t) { done.push_back(rows); };
  auto report = ConvertNamespace(Location(), With(""), NamespaceConversion::kEncrypt, convert);
  ASSERT_TRUE(report) << report.error().ToString();
  int64_t largest = 0;
  for (size_t i = 1; i < done.size(); ++i) largest = std::max(largest, done[i] - done[i - 1]);
  EXPECT_EQ(largest, 3) << "16 MiB of stored rows per batch: three messages of 6 MiB";
  auto sealed = Open(key_a_);
  ASSERT_TRUE(sealed);
  auto messages = sealed->ReadMessages("big");
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE((*messages)[i].parts[0].text == std::to_string(i) + big);
}

TEST_F(PgNamespaceConvert, ADamagedValueStopsTheConversionNamingItEveryTime) {
  Fill(*store_);
  store_.reset();
  ASSERT_TRUE(Converts(NamespaceConversion::kEncrypt, "", key_a_));
  const std::string id =
      pg_->Query("SELECT id FROM events WHERE body IS NOT NULL ORDER BY seq LIMIT 1");
  ASSERT_FALSE(id.empty());
  pg_->Query(
      "UPDATE events SET body = overlay(body placing CASE WHEN substr(body, 30, 1) = 'A' "
      "THEN 'B' ELSE 'A' END from 30 for 1) WHERE id = '" +
      id + "'");

  for (int run = 0; run < 2; ++run) {
    auto failed = Convert(NamespaceConversion::kRekey, key_a_, key_b_);
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().code(), StatusCode::kCorruption);
    EXPECT_NE(failed.error().message().find("event body of " + id), std::string::npos)
        << failed.error().message();
  }
  auto refused = TryOpen(key_a_);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("under way"), std::string::npos);
}

TEST_F(PgNamespaceConvert, ADamagedBlobIsCorruptionNamingItNotConverted) {
  Fill(*store_);
  store_.reset();
  const std::string sha = blob::Sha256Hex(png_);
  pg_->Query("UPDATE blobs SET bytes = set_byte(bytes, 20, get_byte(bytes, 20) # 1)");
  auto failed = Convert(NamespaceConversion::kEncrypt, "", key_a_);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code(), StatusCode::kCorruption);
  EXPECT_NE(failed.error().message().find("blob " + sha), std::string::npos)
      << failed.error().message();
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs WHERE sha256 LIKE 'k%'"), "0");
}

TEST_F(PgNamespaceConvert, AWrongOrMissingKeyOrKindChangesNothing) {
  Fill(*store_);
  store_.reset();
  const std::string plain_rows = RowsOf("default");
  auto expect = [&](const Result<ConvertReport>& r, StatusCode code, const std::string& words) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), code) << r.error().ToString();
    EXPECT_NE(r.error().message().find(words), std::string::npos) << r.error().message();
  };
  expect(Convert(NamespaceConversion::kDecrypt, key_a_, ""), StatusCode::kFailedPrecondition,
         "is not encrypted");
  expect(Convert(NamespaceConversion::kRekey, key_a_, ""), StatusCode::kFailedPrecondition,
         "is not encrypted");
  expect(Convert(NamespaceConversion::kEncrypt, "", ""), StatusCode::kInvalidArgument,
         "needs the key to encrypt with");
  EXPECT_EQ(RowsOf("default"), plain_rows);

  ASSERT_TRUE(Converts(NamespaceConversion::kEncrypt, "", key_a_));
  const std::string sealed_rows = RowsOf("default");
  expect(Convert(NamespaceConversion::kEncrypt, "", key_b_), StatusCode::kFailedPrecondition,
         "already encrypted");
  expect(Convert(NamespaceConversion::kDecrypt, "", ""), StatusCode::kFailedPrecondition,
         "--key-file");
  expect(Convert(NamespaceConversion::kDecrypt, key_b_, ""), StatusCode::kFailedPrecondition,
         "does not open");
  expect(Convert(NamespaceConversion::kRekey, key_b_, key_a_), StatusCode::kFailedPrecondition,
         "does not open");
  EXPECT_EQ(RowsOf("default"), sealed_rows);

  PgTestDatabase empty;
  ASSERT_TRUE(empty.ok());
  auto none = ConvertNamespace(empty.uri(), With(key_a_), NamespaceConversion::kDecrypt, {});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kNotFound);
}

// A store closed just before (its server backends still leaving) is not in
// the way: the conversion gives holders a moment to go.
TEST_F(PgNamespaceConvert, AStoreClosingAsTheConversionStartsIsNotInTheWay) {
  ASSERT_TRUE(store_->CreateSession({.id = "s1"}));
  ASSERT_TRUE(store_->Append("s1", Text("written before")));
  std::thread closer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    store_.reset();
  });
  auto report = Convert(NamespaceConversion::kEncrypt, "", key_a_);
  closer.join();
  ASSERT_TRUE(report) << report.error().ToString();
  std::unique_ptr<Store> sealed = Open(key_a_);
  ASSERT_TRUE(sealed);
  auto log = sealed->ReadMessages("s1");
  ASSERT_TRUE(log) << log.error().ToString();
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ(log->front().Text(), "written before");
}

// A store that has the namespace open (any process) would go on writing
// under the old key: the conversion does not start, names them, and
// changes nothing; while one runs, no store opens the namespace.
TEST_F(PgNamespaceConvert, AConversionWaitsForNoStoreToHaveTheNamespaceOpen) {
  ASSERT_TRUE(store_->CreateSession({.id = "s1"}));
  ASSERT_TRUE(store_->Append("s1", Text("written before")));
  auto refused = Convert(NamespaceConversion::kEncrypt, "", key_a_);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kBusy);
  EXPECT_NE(refused.error().message().find("is open in other processes"), std::string::npos)
      << refused.error().ToString();
  EXPECT_NE(refused.error().message().find("sessiondb"), std::string::npos)
      << "names the backends of the store's connections: " << refused.error().ToString();
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM index_meta WHERE key LIKE 'encryption:%'"), "0");
  // The store that held it goes on as it was.
  ASSERT_TRUE(store_->Append("s1", Text("written after the refusal")));
  store_.reset();

  // While the conversion runs (its progress is called between batches),
  // a store asking for the namespace is refused at once.
  std::string while_running;
  ConvertOptions convert;
  convert.new_key_file = key_a_;
  convert.progress = [&](int64_t, int64_t) {
    if (!while_running.empty()) return;
    auto opened = TryOpen(key_a_);
    while_running = opened ? "opened" : opened.error().ToString();
  };
  auto report = ConvertNamespace(Location(), With(""), NamespaceConversion::kEncrypt, convert);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_NE(while_running.find("is being converted"), std::string::npos) << while_running;
  auto sealed = Open(key_a_);
  ASSERT_TRUE(sealed);
  auto messages = sealed->ReadMessages("s1");
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 2u);
  EXPECT_EQ(messages->back().parts.front().text, "written after the refusal");
}

}  // namespace
}  // namespace sessiondb::testing
