// EncryptStore, DecryptStore and RekeyStore (include/sessiondb/encryption.h):
// which keys a conversion goes from and to. The embedded backend copies the
// store beside itself (store/sqlite/store_conversion.h); a PostgreSQL
// namespace is re-sealed in place (store/postgres/pg_namespace_convert.h).
// Part of the Store::Open target, which knows both backends.
#include <filesystem>

#include "core/key_file.h"
#include "sessiondb/encryption.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_namespace_convert.h"
#include "store/sqlite/store_conversion.h"
#include "store/store_common.h"
#include "store/store_encryption.h"

namespace sessiondb {
namespace {

bool IsPostgres(const std::string& location) {
  return StoreKindOf(location) == StoreKind::kPostgres;
}

Status CheckEmbedded(const std::string& location) {
  RETURN_IF_ERROR(sqlite::FinishInterruptedConversion(location));
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(location) / kEmbeddedDatabaseFile, ec)) {
    return Status::NotFound("no store at " + location);
  }
  return Status::Ok();
}

std::string DbPath(const std::string& location) {
  return (std::filesystem::path(location) / kEmbeddedDatabaseFile).string();
}

// The data key of the encrypted store at `location` (its key from `options`).
Result<cipher::SecretKey> CurrentDataKey(const std::string& location, const StoreOptions& options) {
  ASSIGN_OR_RETURN(EncryptionStatus status, store::EmbeddedEncryptionStatus(location));
  if (!status.encrypted) {
    return Err(Status::FailedPrecondition("the store at " + location + " is not encrypted"));
  }
  ASSIGN_OR_RETURN(std::optional<cipher::SecretKey> key,
                   store::LoadEmbeddedDataKey(location, DbPath(location), options, false));
  if (!key) return Err(Status::Internal("an encrypted store opened without its key"));
  return *key;
}

sqlite::ConversionTarget KeyedTarget(const cipher::MasterKey& master) {
  sqlite::ConversionTarget target;
  target.master = master;
  return target;
}

}  // namespace

Result<ConvertReport> EncryptStore(const std::string& location, const StoreOptions& given,
                                   const ConvertOptions& options) {
  ASSIGN_OR_RETURN(StoreOptions store_options, WithDefaults(given));
  if (IsPostgres(location)) {
    return postgres::ConvertNamespace(location, store_options,
                                      postgres::NamespaceConversion::kEncrypt, options);
  }
  RETURN_IF_ERROR(CheckEmbedded(location));
  ASSIGN_OR_RETURN(EncryptionStatus status, store::EmbeddedEncryptionStatus(location));
  if (status.encrypted) {
    return Err(Status::FailedPrecondition("the store at " + location +
                                          " is already encrypted; `sessiondb key rekey` gives "
                                          "it a new data key"));
  }
  if (options.new_key_file.empty()) {
    return Err(
        Status::InvalidArgument("encrypting needs the key to encrypt with: --key-file FILE "
                                "(make one with `sessiondb key new FILE`)"));
  }
  ASSIGN_OR_RETURN(cipher::MasterKey master, cipher::ReadMasterKey(options.new_key_file));
  return sqlite::ConvertEmbeddedStore(location, std::nullopt, KeyedTarget(master), "encrypt",
                                      store_options.busy_timeout_ms, options,
                                      store_options.clock());
}

Result<ConvertReport> DecryptStore(const std::string& location, const StoreOptions& given,
                                   const ConvertOptions& options) {
  ASSIGN_OR_RETURN(StoreOptions store_options, WithDefaults(given));
  if (IsPostgres(location)) {
    return postgres::ConvertNamespace(location, store_options,
                                      postgres::NamespaceConversion::kDecrypt, options);
  }
  RETURN_IF_ERROR(CheckEmbedded(location));
  ASSIGN_OR_RETURN(cipher::SecretKey from, CurrentDataKey(location, store_options));
  return sqlite::ConvertEmbeddedStore(location, from, {}, "decrypt", store_options.busy_timeout_ms,
                                      options, store_options.clock());
}

Result<ConvertReport> RekeyStore(const std::string& location, const StoreOptions& given,
                                 const ConvertOptions& options) {
  ASSIGN_OR_RETURN(StoreOptions store_options, WithDefaults(given));
  if (IsPostgres(location)) {
    return postgres::ConvertNamespace(location, store_options,
                                      postgres::NamespaceConversion::kRekey, options);
  }
  RETURN_IF_ERROR(CheckEmbedded(location));
  ASSIGN_OR_RETURN(cipher::SecretKey from, CurrentDataKey(location, store_options));
  ASSIGN_OR_RETURN(cipher::MasterKey master,
                   cipher::ReadMasterKey(options.new_key_file.empty() ? store_options.key_file
                                                                      : options.new_key_file));
  return sqlite::ConvertEmbeddedStore(location, from, KeyedTarget(master), "rekey",
                                      store_options.busy_timeout_ms, options,
                                      store_options.clock());
}

}  // namespace sessiondb
