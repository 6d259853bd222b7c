#include "store/postgres/pg_connection.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>

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

}  // namespace

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

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo,
                                                            const std::string& setup_sql) {
  ASSIGN_OR_RETURN(const LibPq* pq, LoadLibPq());
  // Started, not made at once (PQconnectdb), so that notices are not ours to
  // print from the first byte on: a server sends WARNINGs while a session
  // starts (a database setting that no longer applies, a collation version
  // mismatch), which libpq's default processor writes raw to stderr.
  PGconn* raw = pq->connectStart(conninfo.c_str());
  if (raw == nullptr) return Err(Status::Io("out of memory connecting to PostgreSQL"));
  std::unique_ptr<PgConnection> conn(new PgConnection(raw));
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
  // CREATE ... IF NOT EXISTS and friends emit notices too (set above).
  PGresult* r = pq->exec(raw, setup_sql.c_str());
  const bool ok = pq->resultStatus(r) == PGRES_COMMAND_OK;
  Status failed = ok ? Status::Ok() : conn->ErrorFrom(r, setup_sql.c_str());
  pq->clear(r);
  if (!ok) return Err(failed);
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

Result<PgResult> PgConnection::Exec(const char* sql, const PgParams& params, bool binary_result) {
  retryable_ = false;
  const size_t n = params.values_.size();
  std::vector<const char*> values(n);
  std::vector<int> lengths(n), formats(n);
  for (size_t i = 0; i < n; ++i) {
    const PgParams::Value& v = params.values_[i];
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
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    const std::string name = "sdb" + std::to_string(prepared_.size());
    PGresult* prep = Pq().prepare(conn_, name.c_str(), sql, static_cast<int>(n), nullptr);
    const bool ok = prep && Pq().resultStatus(prep) == PGRES_COMMAND_OK;
    Status error = ok ? Status::Ok() : ErrorFrom(prep, sql);
    if (prep) Pq().clear(prep);
    if (!ok) return Err(std::move(error));
    it = prepared_.emplace(sql, name).first;
  }
  PGresult* raw = Pq().execPrepared(conn_, it->second.c_str(), static_cast<int>(n), values.data(),
                                    lengths.data(), formats.data(), binary_result ? 1 : 0);
  const ExecStatusType st = raw ? Pq().resultStatus(raw) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return PgResult(raw);
  Status error = ErrorFrom(raw, sql);
  if (raw) Pq().clear(raw);
  return Err(std::move(error));
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
  RETURN_IF_ERROR(conn->Run("BEGIN"));
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
  Status s = conn_->Run("COMMIT");
  conn_ = nullptr;
  return s;
}

}  // namespace sessiondb::postgres
