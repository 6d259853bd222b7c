#include "store/postgres/pg_namespace_convert.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "core/key_file.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_namespace_reseal.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_store.h"
#include "store/store_common.h"

namespace sessiondb::postgres {
namespace {

// Rows per transaction: large enough that a commit's cost is spread, small
// enough that a batch of long messages stays a few MiB.
constexpr int kBatchRows = 500;
// A batch that fails on a transient conflict (a deadlock with a writer) is
// tried again this many times before the conversion gives up (to be rerun).
constexpr int kBatchAttempts = 5;

std::string KindName(NamespaceConversion kind) {
  switch (kind) {
    case NamespaceConversion::kEncrypt:
      return "encrypt";
    case NamespaceConversion::kDecrypt:
      return "decrypt";
    case NamespaceConversion::kRekey:
      return "rekey";
  }
  return "";
}

// Held until the connection closes (a killed process's closes with it, a
// moment later: the lock is waited for, up to the lock timeout).
Status LockAgainstOtherConversions(PgConnection& c, const std::string& ns,
                                   const std::string& where) {
  PgParams p;
  p.Add("sessiondb conversion of " + ns);
  Status locked = c.Run("SELECT pg_advisory_lock(hashtextextended($1, 0))", p);
  if (locked.code() != StatusCode::kBusy) return locked;
  return Status::Busy("another process is converting " + where +
                      "; wait for it to end (or stop it and run the conversion again)");
}

// The conversion under way, as its first transaction recorded it.
struct UnderWay {
  std::string kind;
  std::string target_envelope;  // empty for decrypt
};

Result<std::optional<UnderWay>> ReadUnderWay(PgConnection& c, const std::string& ns) {
  PgParams p;
  p.Add(ns).Add(kNamespaceConversionKey);
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT value FROM index_meta WHERE namespace = $1 AND key = $2", p));
  if (r.rows() == 0) return std::optional<UnderWay>();
  const std::string_view value = r.Text(0, 0);
  const size_t newline = value.find('\n');
  UnderWay out{.kind = std::string(value.substr(0, newline))};
  if (newline != std::string_view::npos) out.target_envelope = value.substr(newline + 1);
  return std::optional<UnderWay>(std::move(out));
}

// The keys a conversion goes from and to, and the envelope of the new one.
struct ConversionKeys {
  PgSealer from;
  PgSealer to;
  std::string target_envelope;  // empty for decrypt
};

// The namespace's current key: plaintext for encrypt, else its data key
// opened with options.key_file. kFailedPrecondition when the namespace is
// not in the form `kind` converts from, or the key is missing or wrong.
Result<PgSealer> CurrentKey(PgConnection& c, const NamespaceConnection& target,
                            NamespaceConversion kind, const StoreOptions& options,
                            const ConvertOptions& convert) {
  ASSIGN_OR_RETURN(std::optional<std::string> envelope, ReadNamespaceEnvelope(c, target.ns));
  if (kind == NamespaceConversion::kEncrypt) {
    if (envelope) {
      return Err(Status::FailedPrecondition(
          target.where + " is already encrypted; `sessiondb key rekey` gives it a new data key"));
    }
    if (convert.new_key_file.empty()) {
      return Err(
          Status::InvalidArgument("encrypting needs the key to encrypt with: --key-file FILE "
                                  "(make one with `sessiondb key new FILE`)"));
    }
    return PgSealer();
  }
  if (!envelope) {
    return Err(Status::FailedPrecondition(
        target.where + " is not encrypted" +
        (kind == NamespaceConversion::kRekey ? "; `sessiondb encrypt` encrypts it" : "")));
  }
  if (options.key_file.empty()) {
    return Err(Status::FailedPrecondition(target.where + " is encrypted; " + GiveKeyHint()));
  }
  ASSIGN_OR_RETURN(cipher::MasterKey master, cipher::ReadMasterKey(options.key_file));
  ASSIGN_OR_RETURN(
      cipher::SecretKey data_key,
      store::OpenKeyEnvelope(*envelope, master, NamespaceKeyScope(target.ns), target.where));
  return PgSealer(data_key);
}

Result<ConversionKeys> ChooseKeys(PgConnection& c, const NamespaceConnection& target,
                                  NamespaceConversion kind, const StoreOptions& options,
                                  const ConvertOptions& convert,
                                  const std::optional<UnderWay>& under_way) {
  ASSIGN_OR_RETURN(PgSealer from, CurrentKey(c, target, kind, options, convert));
  if (kind == NamespaceConversion::kDecrypt) return ConversionKeys{from, PgSealer(), ""};
  const std::string& target_file =
      convert.new_key_file.empty() ? options.key_file : convert.new_key_file;
  ASSIGN_OR_RETURN(cipher::MasterKey master, cipher::ReadMasterKey(target_file));
  const std::string scope = NamespaceKeyScope(target.ns);
  if (!under_way) {
    store::NewEnvelope made = store::MakeKeyEnvelope(master, scope, options.clock());
    return ConversionKeys{from, PgSealer(made.data_key), made.text};
  }
  // A resumed run goes on with the data key the first run chose.
  Result<cipher::SecretKey> key =
      store::OpenKeyEnvelope(under_way->target_envelope, master, scope, target.where);
  if (!key) {
    return Err(Status(key.error().code(),
                      key.error().message() + " (the new key of the " + under_way->kind +
                          " under way: give the key file it was started with)"));
  }
  return ConversionKeys{from, PgSealer(*key), under_way->target_envelope};
}

Status StartConversion(PgConnection& c, const std::string& ns, const std::string& kind,
                       const std::string& target_envelope) {
  ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
  PgParams p;
  p.Add(ns).Add(kNamespaceConversionKey).Add(kind + "\n" + target_envelope);
  p.Add(kNamespaceConversionProgressKey).Add(EncodeResealPosition(ResealPosition{}));
  RETURN_IF_ERROR(
      c.Run("INSERT INTO index_meta (namespace, key, value) VALUES ($1, $2, $3), ($1, $4, $5)", p));
  return txn.Commit();
}

Result<ResealPosition> ReadPosition(PgConnection& c, const std::string& ns) {
  PgParams p;
  p.Add(ns).Add(kNamespaceConversionProgressKey);
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT value FROM index_meta WHERE namespace = $1 AND key = $2", p));
  if (r.rows() == 0) return ResealPosition{};  // killed before its first batch wrote one
  return DecodeResealPosition(r.Text(0, 0));
}

// One batch and the progress row that says it is done, in one transaction;
// `*at` moves only when it commits.
Status CommitBatch(PgConnection& c, const std::string& ns, const ResealKeys& keys,
                   ResealPosition* at) {
  ResealPosition next = *at;
  ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
  RETURN_IF_ERROR(ResealNextBatch(c, ns, keys, kBatchRows, &next));
  PgParams p;
  p.Add(ns).Add(kNamespaceConversionProgressKey).Add(EncodeResealPosition(next));
  RETURN_IF_ERROR(
      c.Run("INSERT INTO index_meta (namespace, key, value) VALUES ($1, $2, $3) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
            p));
  RETURN_IF_ERROR(txn.Commit());
  *at = std::move(next);
  return Status::Ok();
}

Status CommitBatchWithRetries(PgConnection& c, const std::string& ns, const ResealKeys& keys,
                              ResealPosition* at) {
  for (int attempt = 1;; ++attempt) {
    Status s = CommitBatch(c, ns, keys, at);
    if (s.ok() || !c.retryable() || c.broken() || attempt >= kBatchAttempts) return s;
  }
}

// The last transaction: the new envelope in place of the old (none after a
// decrypt), the hook's keyed memory forgotten, the conversion's rows gone.
Status FinishConversion(PgConnection& c, const std::string& ns, NamespaceConversion kind,
                        const std::string& target_envelope) {
  ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
  PgParams n;
  n.Add(ns);
  if (kind == NamespaceConversion::kDecrypt) {
    PgParams p;
    p.Add(ns).Add(kNamespaceEnvelopeKey);
    RETURN_IF_ERROR(c.Run("DELETE FROM index_meta WHERE namespace = $1 AND key = $2", p));
  } else {
    RETURN_IF_ERROR(ReplaceNamespaceEnvelope(c, ns, target_envelope));
  }
  // Its keys are HMACs under the old key: they would never match again.
  RETURN_IF_ERROR(c.Run("DELETE FROM hook_seen WHERE namespace = $1", n));
  PgParams p;
  p.Add(ns).Add(kNamespaceConversionKey).Add(kNamespaceConversionProgressKey);
  RETURN_IF_ERROR(c.Run("DELETE FROM index_meta WHERE namespace = $1 AND key IN ($2, $3)", p));
  return txn.Commit();
}

}  // namespace

Result<ConvertReport> ConvertNamespace(const std::string& uri, const StoreOptions& given,
                                       NamespaceConversion kind, const ConvertOptions& convert) {
  ASSIGN_OR_RETURN(StoreOptions options, WithDefaults(given));
  ASSIGN_OR_RETURN(NamespaceConnection target, ConnectToNamespace(uri, options));
  // The schema as this build writes it, before any row is converted.
  RETURN_IF_ERROR(MigratePgSchema(target.conn.get(), /*create=*/false, target.where));
  PgConnection& c = *target.conn;
  RETURN_IF_ERROR(LockAgainstOtherConversions(c, target.ns, target.where));
  RETURN_IF_ERROR(LockNamespaceAlone(c, target.ns, target.where));
  ASSIGN_OR_RETURN(std::optional<UnderWay> under_way, ReadUnderWay(c, target.ns));
  if (under_way && under_way->kind != KindName(kind)) {
    return Err(ConversionUnderWay(target.ns, under_way->kind));
  }
  ASSIGN_OR_RETURN(ConversionKeys keys, ChooseKeys(c, target, kind, options, convert, under_way));
  ResealPosition at;
  if (under_way) {
    ASSIGN_OR_RETURN(at, ReadPosition(c, target.ns));
  } else {
    RETURN_IF_ERROR(StartConversion(c, target.ns, KindName(kind), keys.target_envelope));
  }
  ASSIGN_OR_RETURN(int64_t total, CountRowsToReseal(c, target.ns));
  const ResealKeys reseal{.from = keys.from, .to = keys.to};
  while (at.phase != ResealPhase::kDone) {
    RETURN_IF_ERROR(CommitBatchWithRetries(c, target.ns, reseal, &at));
    if (convert.progress) convert.progress(at.rows, std::max(total, at.rows));
  }
  RETURN_IF_ERROR(FinishConversion(c, target.ns, kind, keys.target_envelope));
  ConvertReport report;
  report.rows = at.rows;
  report.blobs = at.blobs;
  report.key_id = keys.to.key_id();
  return report;
}

}  // namespace sessiondb::postgres
