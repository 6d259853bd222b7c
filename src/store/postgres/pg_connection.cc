#include "store/postgres/pg_connection.h"

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/mutex.h"

namespace sessiondb::postgres {

const PgSealer PgConnection::kPlaintext;

namespace {

// libpq error texts end with a newline; statuses read better without it.
std::string Trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// When a connection being made gives up: `connect_timeout` seconds of its
// parameters from now (at least 2, as libpq counts it), or never (nullopt)
// without one, as PQconnectdb would.
std::optional<std::chrono::steady_clock::time_point> ConnectDeadline(const LibPq& pq,
                                                                     PGconn* conn) {
  PQconninfoOption* options = pq.conninfo(conn);
  if (options == nullptr) return std::nullopt;
  int seconds = 0;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::strcmp(o->keyword, "connect_timeout") == 0 && o->val != nullptr) {
      const char* end = o->val + std::strlen(o->val);
      (void)std::from_chars(o->val, end, seconds);
    }
  }
  pq.conninfoFree(options);
  if (seconds <= 0) return std::nullopt;
  return std::chrono::steady_clock::now() + std::chrono::seconds(std::max(seconds, 2));
}

// SQLSTATEs after which the same transaction may succeed if run again.
bool IsTransientState(std::string_view state) {
  return state == "40001" || state == "40P01" ||  // serialization failure, deadlock
         StartsWith(state, "08") ||               // connection exception
         state == "57P01" || state == "57P02" ||  // admin / crash shutdown
         state == "57P03";                        // cannot connect now (starting up)
}

bool EnvIs(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v != nullptr && value == v;
}

bool IsUri(const std::string& conninfo) {
  return StartsWith(conninfo, "postgresql://") || StartsWith(conninfo, "postgres://");
}

// `settings` as libpq's `options` value: -c name=value ..., with the
// backslash and space escapes the server reads there.
std::string StartupOptions(const PgSettings& settings) {
  std::string out;
  for (const auto& [name, value] : settings) {
    if (!out.empty()) out += ' ';
    out += "-c " + name + '=';
    for (char c : value) {
      if (c == ' ' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

// `conninfo` (a URI or key=value words) with libpq's `options` parameter added.
std::string WithStartupOptions(const std::string& conninfo, const std::string& options) {
  if (IsUri(conninfo)) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string encoded;
    for (unsigned char c : options) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.') {
        encoded += static_cast<char>(c);
      } else {
        encoded += '%';
        encoded += kHex[c >> 4];
        encoded += kHex[c & 15];
      }
    }
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + "options=" + encoded;
  }
  std::string quoted;
  for (char c : options) {
    if (c == '\'' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return conninfo + (conninfo.empty() ? "" : " ") + "options='" + quoted + "'";
}

// `settings` as SET statements, LOCAL ones (for a transaction) or not.
std::string SetStatements(const PgSettings& settings, bool local) {
  std::string out;
  for (const auto& [name, value] : settings) {
    std::string literal = "'";
    for (char c : value) {
      if (c == '\'') literal += '\'';
      literal += c;
    }
    out += std::string(out.empty() ? "" : "; ") + (local ? "SET LOCAL " : "SET ") + name + " = " +
           literal + "'";
  }
  return out;
}

// The connection strings behind which a pooler refused startup options, so
// later connections of the process go there without trying them again.
Mutex pooled_mu;
std::set<std::string>& PooledConninfos() {
  static std::set<std::string>* known = new std::set<std::string>();
  return *known;
}

}  // namespace

bool IsNoFreeConnectionSlot(std::string_view message) {
  return message.find("too many clients") != std::string_view::npos ||
         message.find("connection slots are reserved") != std::string_view::npos ||
         message.find("no more connections allowed") != std::string_view::npos;
}

PgParams& PgParams::Add(std::string_view text) {
  values_.push_back({.text = std::string(text)});
  return *this;
}
PgParams& PgParams::Add(int64_t value) { return Add(std::string_view(std::to_string(value))); }
PgParams& PgParams::Add(bool value) { return Add(std::string_view(value ? "t" : "f")); }
PgParams& PgParams::AddNull() {
  values_.push_back({.is_null = true});
  return *this;
}
PgParams& PgParams::AddOptional(const std::optional<std::string>& text) {
  return text ? Add(std::string_view(*text)) : AddNull();
}
PgParams& PgParams::AddBytes(std::string_view bytes) {
  values_.push_back({.bytes = bytes, .binary = true});
  return *this;
}

std::string_view PgResult::Text(int row, int col) const {
  return {Pq().getvalue(result_.get(), row, col),
          static_cast<size_t>(Pq().getlength(result_.get(), row, col))};
}

int64_t PgResult::Int(int row, int col) const {
  std::string_view t = Text(row, col);
  int64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

int64_t PgResult::Affected() const {
  const char* n = Pq().cmdTuples(result_.get());
  return (n && *n) ? std::strtoll(n, nullptr, 10) : 0;
}

namespace {
void AppendArrayElement(std::string_view value, std::string* out) {
  *out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') *out += '\\';
    *out += c;
  }
  *out += '"';
}
}  // namespace

std::string PgArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    AppendArrayElement(values[i], &out);
  }
  return out + '}';
}

std::string PgArray(const std::vector<std::optional<std::string>>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    if (values[i]) {
      AppendArrayElement(*values[i], &out);
    } else {
      out += "NULL";
    }
  }
  return out + '}';
}

std::string PgArray(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out + '}';
}

std::string PgByteaHex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  out.reserve(2 + bytes.size() * 2);
  for (unsigned char ch : bytes) {
    out += kHex[ch >> 4];
    out += kHex[ch & 15];
  }
  return out;
}

namespace {

// A connection made (no setting applied yet), or why not (see Connect).
Result<PGconn*> OpenConnection(const std::string& conninfo) {
  ASSIGN_OR_RETURN(const LibPq* pq, LoadLibPq());
  // Started, not made at once (PQconnectdb), so that notices are not ours to
  // print from the first byte on: a server sends WARNINGs while a session
  // starts (a database setting that no longer applies, a collation version
  // mismatch), which libpq's default processor writes raw to stderr.
  PGconn* raw = pq->connectStart(conninfo.c_str());
  if (raw == nullptr) return Err(Status::Io("out of memory connecting to PostgreSQL"));
  std::unique_ptr<PGconn, decltype(LibPq::finish)> conn(raw, pq->finish);
  pq->setNoticeProcessor(
      raw, [](void*, const char*) {}, nullptr);
  bool timed_out = false;
  if (pq->status(raw) != CONNECTION_BAD) {
    const auto deadline = ConnectDeadline(*pq, raw);
    PostgresPollingStatusType state = PGRES_POLLING_WRITING;
    while (state != PGRES_POLLING_OK && state != PGRES_POLLING_FAILED) {
      pollfd wait{.fd = pq->socket(raw),
                  .events = static_cast<short>(state == PGRES_POLLING_READING ? POLLIN : POLLOUT),
                  .revents = 0};
      if (wait.fd < 0) break;
      int timeout_ms = -1;
      if (deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            *deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
          timed_out = true;
          break;
        }
        timeout_ms = static_cast<int>(left.count());
      }
      const int ready = ::poll(&wait, 1, timeout_ms);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;  // the deadline is checked above
      state = pq->connectPoll(raw);
    }
  }
  if (timed_out) {
    return Err(Status::Busy("cannot connect to PostgreSQL: timeout expired (connect_timeout)"));
  }
  if (pq->status(raw) != CONNECTION_OK) {
    std::string why = Trimmed(pq->errorMessage(raw));
    // A server that is starting, stopping or restarting refuses or drops
    // connections for a moment, in many words; callers retry those. What a
    // retry cannot mend fails at once.
    static constexpr const char* kPermanent[] = {
        "does not exist",    "authentication failed",         "no pg_hba.conf entry", "invalid",
        "permission denied", "could not translate host name", "password is required", "SSL",
    };
    bool transient = true;
    for (const char* words : kPermanent) {
      if (why.find(words) != std::string::npos) transient = false;
    }
    std::string message = "cannot connect to PostgreSQL: " + why;
    return Err(transient ? Status::Busy(message) : Status::Io(message));
  }
  return conn.release();
}

}  // namespace

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo,
                                                            const std::string& setup_sql) {
  ASSIGN_OR_RETURN(PGconn * raw, OpenConnection(conninfo));
  std::unique_ptr<PgConnection> conn(new PgConnection(raw));
  // CREATE ... IF NOT EXISTS and friends emit notices too (set above).
  PGresult* r = Pq().exec(raw, setup_sql.c_str());
  const bool ok = Pq().resultStatus(r) == PGRES_COMMAND_OK;
  Status failed = ok ? Status::Ok() : conn->ErrorFrom(r, setup_sql.c_str());
  Pq().clear(r);
  if (!ok) return Err(failed);
  if (EnvIs("SESSIONDB_PG_PREPARE", "0")) conn->prepare_ = false;
  return conn;
}

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo,
                                                            const PgSettings& settings) {
  bool pooled = EnvIs("SESSIONDB_PG_POOLED", "1");
  if (!pooled) {
    MutexLock lock(&pooled_mu);
    pooled = PooledConninfos().count(conninfo) > 0;
  }
  // The user's own startup options are kept; the settings are SET then.
  const bool user_options = conninfo.find("options") != std::string::npos;
  std::unique_ptr<PgConnection> conn;
  if (!pooled && !user_options && !settings.empty()) {
    Result<PGconn*> raw = OpenConnection(WithStartupOptions(conninfo, StartupOptions(settings)));
    if (raw) {
      conn.reset(new PgConnection(*raw));
    } else if (raw.error().message().find("unsupported startup parameter") != std::string::npos) {
      pooled = true;  // PgBouncer: it forwards no `options` to the server
      MutexLock lock(&pooled_mu);
      PooledConninfos().insert(conninfo);
    } else {
      return Err(raw.error());
    }
  }
  if (conn == nullptr) {
    ASSIGN_OR_RETURN(PGconn * raw, OpenConnection(conninfo));
    conn.reset(new PgConnection(raw));
    if (pooled) {
      conn->transaction_pooled_ = true;
      conn->prepare_ = false;
      if (!settings.empty()) conn->begin_sql_ = "BEGIN; " + SetStatements(settings, /*local=*/true);
    } else if (!settings.empty()) {
      RETURN_IF_ERROR(conn->RunScript(SetStatements(settings, /*local=*/false).c_str()));
    }
  }
  if (EnvIs("SESSIONDB_PG_PREPARE", "0")) conn->prepare_ = false;
  return conn;
}

PgConnection::~PgConnection() { Pq().finish(conn_); }

Status PgConnection::ErrorFrom(PGresult* result, const char* sql) {
  const char* state_c = result ? Pq().resultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string state = state_c ? state_c : "";
  std::string message =
      Trimmed(result ? Pq().resultErrorMessage(result) : Pq().errorMessage(conn_));
  if (message.empty()) message = Trimmed(Pq().errorMessage(conn_));
  // A statement is named by its first words, enough to find it in the code.
  std::string what = std::string(sql).substr(0, 48);
  for (char& c : what) {
    if (c == '\n') c = ' ';
  }
  const std::string text = "PostgreSQL: " + message + " (in: " + what + "...)";

  retryable_ = broken() || IsTransientState(state);
  if (retryable_) return Status::Busy(text);
  if (state == "23505") return Status::AlreadyExists(text);
  if (state == "55P03" || state == "57014") return Status::Busy(text);
  if (StartsWith(state, "53") || StartsWith(state, "58")) return Status::Io(text);
  if (StartsWith(state, "XX00")) return Status::Corruption(text);
  if (StartsWith(state, "22")) return Status::InvalidArgument(text);
  return Status::Internal(text);
}

namespace {

// PgParams as libpq takes them; points into the params, which must outlive it.
struct LibPqParams {
  explicit LibPqParams(const PgParams::Values& params)
      : values(params.size()), lengths(params.size()), formats(params.size()) {
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& v = params[i];
      if (v.is_null) {
        values[i] = nullptr;
      } else if (v.binary) {
        values[i] = v.bytes.data();
        lengths[i] = static_cast<int>(v.bytes.size());
        formats[i] = 1;
      } else {
        values[i] = v.text.c_str();
      }
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
};

}  // namespace

std::string PgConnection::PreparedName(const char* sql, PGresult** failed) {
  *failed = nullptr;
  // Unnamed the first time (one round trip), prepared the second.
  auto it = prepare_ ? prepared_.find(sql) : prepared_.end();
  if (it == prepared_.end()) {
    if (prepare_) prepared_.emplace(sql, "");
    return "";
  }
  if (it->second.empty()) {
    const std::string name = "sdb" + std::to_string(next_name_++);
    PGresult* prep = Pq().prepare(conn_, name.c_str(), sql, 0, nullptr);
    if (prep == nullptr || Pq().resultStatus(prep) != PGRES_COMMAND_OK) {
      *failed = prep;
      return "";
    }
    Pq().clear(prep);
    it->second = name;
  }
  return it->second;
}

Result<PgResult> PgConnection::TakeResult(PGresult* raw, const char* sql, bool* lost_prepared) {
  *lost_prepared = false;
  const ExecStatusType st = raw ? Pq().resultStatus(raw) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return PgResult(raw);
  const char* state_c = raw ? Pq().resultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  const std::string_view state = state_c ? state_c : "";
  if (prepare_ && (state == "26000" || state == "42P05")) {
    // The statement prepared is not there, or another's is under its name:
    // a pooler in transaction mode gave this session another server
    // connection. Unnamed statements from now on.
    if (raw) Pq().clear(raw);
    prepare_ = false;
    prepared_.clear();
    *lost_prepared = true;
    retryable_ = true;
    return Err(Status::Busy(
        "PostgreSQL lost a prepared statement of this connection (a pooler in transaction "
        "mode?); the transaction is run again without them"));
  }
  Status error = ErrorFrom(raw, sql);
  if (raw) Pq().clear(raw);
  return Err(std::move(error));
}

Result<PgResult> PgConnection::Exec(const char* sql, const PgParams& params, bool binary_result) {
  retryable_ = false;
  if (in_flight_ != nullptr) {
    return Err(Status::Internal("a statement was run before the one in flight was received"));
  }
  const LibPqParams p(params.values_);
  PGresult* raw = nullptr;
  const std::string name = PreparedName(sql, &raw);
  if (raw == nullptr && name.empty()) {
    raw = Pq().execParams(conn_, sql, p.count(), nullptr, p.values.data(), p.lengths.data(),
                          p.formats.data(), binary_result ? 1 : 0);
  } else if (raw == nullptr) {
    raw = Pq().execPrepared(conn_, name.c_str(), p.count(), p.values.data(), p.lengths.data(),
                            p.formats.data(), binary_result ? 1 : 0);
  }
  bool lost_prepared = false;
  Result<PgResult> result = TakeResult(raw, sql, &lost_prepared);
  if (lost_prepared && Pq().transactionStatus(conn_) == PQTRANS_IDLE) {
    retryable_ = false;
    return Exec(sql, params, binary_result);  // nothing to roll back: at once
  }
  return result;
}

Status PgConnection::Send(const char* sql, const PgParams& params) {
  retryable_ = false;
  if (in_flight_ != nullptr) {
    return Status::Internal("a statement was sent before the one in flight was received");
  }
  const LibPqParams p(params.values_);
  PGresult* failed = nullptr;
  const std::string name = PreparedName(sql, &failed);
  if (failed != nullptr) {
    bool lost_prepared = false;
    return TakeResult(failed, sql, &lost_prepared).error();
  }
  const int sent = name.empty()
                       ? Pq().sendQueryParams(conn_, sql, p.count(), nullptr, p.values.data(),
                                              p.lengths.data(), p.formats.data(), 0)
                       : Pq().sendQueryPrepared(conn_, name.c_str(), p.count(), p.values.data(),
                                                p.lengths.data(), p.formats.data(), 0);
  if (sent != 1) return ErrorFrom(nullptr, sql);
  in_flight_ = sql;
  return Status::Ok();
}

Result<PgResult> PgConnection::Receive() {
  retryable_ = false;
  const char* sql = std::exchange(in_flight_, nullptr);
  if (sql == nullptr) return Err(Status::Internal("nothing was sent to receive"));
  // One statement gives one result, then null: the rest is taken so the
  // connection is ready for the next.
  PGresult* raw = nullptr;
  while (PGresult* next = Pq().getResult(conn_)) {
    if (raw == nullptr) {
      raw = next;
    } else {
      Pq().clear(next);
    }
  }
  bool lost_prepared = false;
  return TakeResult(raw, sql, &lost_prepared);
}

Result<PgResult> PgConnection::ExecPlanned(const char* sql, const PgParams& params) {
  const bool prepare = prepare_;
  prepare_ = false;  // Exec sends it unnamed, and remembers nothing of it
  Result<PgResult> result = Exec(sql, params);
  prepare_ = prepare;
  return result;
}

Status PgConnection::Run(const char* sql, const PgParams& params) {
  RETURN_IF_ERROR(Exec(sql, params));
  return Status::Ok();
}

Status PgConnection::RunScript(const char* sql) {
  retryable_ = false;
  PGresult* raw = Pq().exec(conn_, sql);
  const ExecStatusType st = raw ? Pq().resultStatus(raw) : PGRES_FATAL_ERROR;
  Status result =
      (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) ? Status::Ok() : ErrorFrom(raw, sql);
  if (raw) Pq().clear(raw);
  return result;
}

Result<PgTransaction> PgTransaction::Begin(PgConnection* conn) {
  // The simple protocol: one round trip, settings and all.
  RETURN_IF_ERROR(conn->RunScript(conn->begin_sql().c_str()));
  return PgTransaction(conn);
}

void PgConnection::RollbackQuietly() {
  if (broken()) return;
  Pq().clear(Pq().exec(conn_, "ROLLBACK"));
}

PgTransaction::~PgTransaction() {
  if (conn_) conn_->RollbackQuietly();
}

Status PgTransaction::Commit() {
  Status s = conn_->RunScript("COMMIT");
  conn_ = nullptr;
  return s;
}

}  // namespace sessiondb::postgres
