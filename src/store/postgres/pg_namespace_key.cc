#include "store/postgres/pg_namespace_key.h"

#include <chrono>
#include <thread>

#include "core/key_file.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_store.h"
#include "store/store_common.h"

namespace sessiondb::postgres {
std::string GiveKeyHint() {
  return "give its key with --key-file FILE or " + std::string(cipher::kKeyFileEnv) + "=FILE";
}

namespace {

// True when the namespace holds anything a plaintext writer put there:
// sessions, code memory or settings.
Result<bool> NamespaceHasContent(PgConnection& c, const std::string& ns) {
  PgParams p;
  p.Add(ns);
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT EXISTS (SELECT 1 FROM sessions WHERE namespace = $1) OR "
                          "EXISTS (SELECT 1 FROM code_writes WHERE namespace = $1) OR "
                          "EXISTS (SELECT 1 FROM file_versions WHERE namespace = $1) OR "
                          "EXISTS (SELECT 1 FROM index_meta WHERE namespace = $1 AND "
                          "key LIKE 'setting:%')",
                          p));
  return r.Bool(0, 0);
}

// The command a conversion of `kind` is run with.
std::string ConversionCommand(std::string_view kind) {
  if (kind == "rekey") return "sessiondb key rekey";
  return "sessiondb " + std::string(kind);
}

// The key of namespace `ns`'s open lock (HoldNamespaceOpen).
PgParams OpenLockKey(const std::string& ns) {
  PgParams p;
  p.Add("sessiondb namespace open " + ns);
  return p;
}

}  // namespace

Status HoldNamespaceOpen(PgConnection& c, const std::string& ns) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT pg_try_advisory_lock_shared(hashtextextended($1, "
                                      "0))",
                                      OpenLockKey(ns)));
  if (r.Bool(0, 0)) return Status::Ok();
  return Status::FailedPrecondition(
      "namespace '" + ns +
      "' is being converted (`sessiondb encrypt`, `decrypt` or `key rekey`) by another "
      "process; open it once that has finished");
}

Status LockNamespaceAlone(PgConnection& c, const std::string& ns, const std::string& where) {
  const PgParams key = OpenLockKey(ns);
  // A process that closed the namespace a moment ago may still hold the
  // lock: its server backend lets it go as it exits, after the client has
  // gone. So a holder gets a second to leave before it counts as open.
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSIGN_OR_RETURN(PgResult locked,
                     c.Exec("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", key));
    if (locked.Bool(0, 0)) return Status::Ok();
  }
  // An advisory lock on a bigint shows in pg_locks as its two halves.
  ASSIGN_OR_RETURN(
      PgResult holders,
      c.Exec("SELECT string_agg(DISTINCT a.pid::text || ' (' || COALESCE(NULLIF("
             "a.application_name, ''), 'no name') || ')', ', ') FROM pg_locks l JOIN "
             "pg_stat_activity a ON a.pid = l.pid, hashtextextended($1, 0) AS k(v) WHERE "
             "l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid() AND "
             "l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND "
             "l.objsubid = 1 AND l.classid::bigint = ((k.v >> 32) & 4294967295) AND "
             "l.objid::bigint = (k.v & 4294967295)",
             key));
  const std::string pids = holders.rows() > 0 ? std::string(holders.Text(0, 0)) : "";
  return Status::Busy(where + " is open in other processes" +
                      (pids.empty() ? "" : " (PostgreSQL backends " + pids + ")") +
                      ": stop them (serve, an MCP server, a running agent's hook) first, as they "
                      "would go on under the old key, then run this again");
}

Status ConversionUnderWay(std::string_view ns, std::string_view kind) {
  return Status::FailedPrecondition("a `" + ConversionCommand(kind) + "` of namespace '" +
                                    std::string(ns) + "' is under way; run it again to finish it");
}

Result<std::optional<std::string>> ConversionKindUnderWay(PgConnection& c, const std::string& ns) {
  PgParams p;
  p.Add(ns).Add(kNamespaceConversionKey);
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT split_part(value, E'\\n', 1) FROM index_meta WHERE "
                                      "namespace = $1 AND key = $2",
                                      p));
  if (r.rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(std::string(r.Text(0, 0)));
}

Result<NamespaceConnection> ConnectToNamespace(const std::string& uri,
                                               const StoreOptions& options) {
  ASSIGN_OR_RETURN(PgLocation location, ParsePgUri(uri));
  if (!options.namespace_name.empty() && !location.namespace_name.empty() &&
      options.namespace_name != location.namespace_name) {
    return Err(Status::InvalidArgument("namespace '" + options.namespace_name +
                                       "' was asked for, but the store URI names namespace '" +
                                       location.namespace_name + "'; give one of them"));
  }
  ASSIGN_OR_RETURN(std::string ns,
                   ResolveNamespace(options.namespace_name.empty() ? location.namespace_name
                                                                   : options.namespace_name));
  ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn,
                   PgConnection::Connect(location.conninfo,
                                         "SET client_min_messages = warning; SET lock_timeout = " +
                                             std::to_string(options.busy_timeout_ms)));
  ASSIGN_OR_RETURN(PgResult exists, conn->Exec("SELECT to_regclass('index_meta') IS NOT NULL"));
  if (!exists.Bool(0, 0)) return Err(Status::NotFound("no sessiondb store in " + location.display));
  return NamespaceConnection{std::move(conn), ns, "namespace '" + ns + "' of " + location.display};
}

std::string NamespaceKeyScope(std::string_view ns) {
  return "postgres namespace " + std::string(ns);
}

Result<std::optional<std::string>> ReadNamespaceEnvelope(PgConnection& c, const std::string& ns) {
  PgParams p;
  p.Add(ns).Add(kNamespaceEnvelopeKey);
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT value FROM index_meta WHERE namespace = $1 AND key = $2", p));
  if (r.rows() == 0) return std::optional<std::string>();
  std::string_view text = r.Text(0, 0);
  if (text.size() > store::kMaxEnvelopeBytes) {
    return Err(Status::InvalidArgument("the key envelope of namespace '" + ns +
                                       "' is longer than 64 KiB; it is not one"));
  }
  return std::optional<std::string>(std::string(text));
}

Status ReplaceNamespaceEnvelope(PgConnection& c, const std::string& ns, std::string_view text) {
  PgParams p;
  p.Add(ns).Add(kNamespaceEnvelopeKey).Add(text);
  return c.Run(
      "INSERT INTO index_meta (namespace, key, value) VALUES ($1, $2, $3) "
      "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
      p);
}

Result<std::optional<cipher::SecretKey>> LoadNamespaceDataKey(PgConnection& c,
                                                              const std::string& ns,
                                                              const std::string& where,
                                                              const StoreOptions& options) {
  // Before anything else: a namespace half converted opens under neither key.
  ASSIGN_OR_RETURN(std::optional<std::string> converting, ConversionKindUnderWay(c, ns));
  if (converting) return Err(ConversionUnderWay(ns, *converting));
  ASSIGN_OR_RETURN(std::optional<std::string> envelope, ReadNamespaceEnvelope(c, ns));
  if (options.key_file.empty()) {
    if (envelope) return Err(Status::FailedPrecondition(where + " is encrypted; " + GiveKeyHint()));
    return std::optional<cipher::SecretKey>();
  }
  ASSIGN_OR_RETURN(cipher::MasterKey master, cipher::ReadMasterKey(options.key_file));
  const std::string scope = NamespaceKeyScope(ns);
  if (!envelope) {
    ASSIGN_OR_RETURN(bool has_content, NamespaceHasContent(c, ns));
    if (has_content) {
      return Err(Status::FailedPrecondition(
          where + " is not encrypted, and a key was given (--key-file or " +
          std::string(cipher::kKeyFileEnv) +
          "); open it without a key, or copy its sessions into a new encrypted namespace "
          "with `sessiondb copy --to-key-file`"));
    }
    store::NewEnvelope made = store::MakeKeyEnvelope(master, scope, options.clock());
    PgParams p;
    p.Add(ns).Add(kNamespaceEnvelopeKey).Add(made.text);
    // Another process making the namespace at the same time: its key wins.
    RETURN_IF_ERROR(
        c.Run("INSERT INTO index_meta (namespace, key, value) VALUES ($1, $2, $3) "
              "ON CONFLICT (namespace, key) DO NOTHING",
              p));
    ASSIGN_OR_RETURN(envelope, ReadNamespaceEnvelope(c, ns));
    if (!envelope) return Err(Status::Io("the key envelope of " + where + " vanished"));
  }
  ASSIGN_OR_RETURN(cipher::SecretKey data_key,
                   store::OpenKeyEnvelope(*envelope, master, scope, where));
  return std::optional<cipher::SecretKey>(data_key);
}

Result<cipher::SecretKey> ReplaceNamespaceDataKey(PgConnection& c, const std::string& ns,
                                                  const std::string& key_file, int64_t now_ms,
                                                  std::string* destroyed_id) {
  const std::string where = "namespace '" + ns + "'";
  ASSIGN_OR_RETURN(std::optional<std::string> old_envelope, ReadNamespaceEnvelope(c, ns));
  if (!old_envelope || !c.sealer().encrypted()) {
    return Err(Status::FailedPrecondition(where + " is not encrypted; it has no key to destroy"));
  }
  ASSIGN_OR_RETURN(store::EnvelopeInfo old_info, store::DescribeKeyEnvelope(*old_envelope, where));
  ASSIGN_OR_RETURN(cipher::MasterKey master, cipher::ReadMasterKey(key_file));
  store::NewEnvelope made = store::MakeKeyEnvelope(master, NamespaceKeyScope(ns), now_ms);
  const PgSealer next(made.data_key);

  // The settings outlive an erasure (the redaction key, the retention
  // policy): open each under the old key and seal it under the new one.
  PgParams p;
  p.Add(ns);
  ASSIGN_OR_RETURN(PgResult settings, c.Exec("SELECT key, value FROM index_meta WHERE "
                                             "namespace = $1 AND key LIKE 'setting:%' FOR UPDATE",
                                             p));
  std::vector<std::string> keys, values;
  for (int i = 0; i < settings.rows(); ++i) {
    const std::string key(settings.Text(i, 0));
    ASSIGN_OR_RETURN(std::string value,
                     c.sealer().OpenText(PgColumn::kSetting, key, settings.Text(i, 1)));
    values.push_back(next.Text(PgColumn::kSetting, key, value));
    keys.push_back(key);
  }
  if (!keys.empty()) {
    PgParams u;
    u.Add(ns).Add(PgArray(keys)).Add(PgArray(values));
    RETURN_IF_ERROR(
        c.Run("UPDATE index_meta m SET value = u.value FROM unnest($2::text[], "
              "$3::text[]) AS u(key, value) WHERE m.namespace = $1 AND m.key = u.key",
              u));
  }
  RETURN_IF_ERROR(ReplaceNamespaceEnvelope(c, ns, made.text));
  *destroyed_id = old_info.key_id;
  return made.data_key;
}

}  // namespace sessiondb::postgres
