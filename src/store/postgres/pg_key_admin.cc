#include "store/postgres/pg_key_admin.h"

#include <memory>

#include "core/key_file.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_store.h"
#include "store/store_common.h"

namespace sessiondb::postgres {
Result<EncryptionStatus> NamespaceEncryptionStatus(const std::string& uri,
                                                   const StoreOptions& options) {
  ASSIGN_OR_RETURN(NamespaceConnection target, ConnectToNamespace(uri, options));
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadNamespaceEnvelope(*target.conn, target.ns));
  EncryptionStatus status;
  if (!text) return status;
  ASSIGN_OR_RETURN(store::EnvelopeInfo info, store::DescribeKeyEnvelope(*text, target.where));
  status.encrypted = true;
  status.kdf = info.kdf;
  status.key_id = info.key_id;
  status.created_ms = info.created_ms;
  status.wrapped_ms = info.wrapped_ms;
  status.envelope = "index_meta row '" + std::string(kNamespaceEnvelopeKey) + "' of namespace '" +
                    target.ns + "'";
  return status;
}

Status RotateNamespaceKey(const std::string& uri, const StoreOptions& given,
                          const std::string& new_key_file) {
  ASSIGN_OR_RETURN(StoreOptions options, WithDefaults(given));
  ASSIGN_OR_RETURN(NamespaceConnection target, ConnectToNamespace(uri, options));
  // A conversion's last transaction puts its own envelope in place: a
  // rotation now would be lost then, or leave the old key half-used.
  ASSIGN_OR_RETURN(std::optional<std::string> converting,
                   ConversionKindUnderWay(*target.conn, target.ns));
  if (converting) return ConversionUnderWay(target.ns, *converting);
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadNamespaceEnvelope(*target.conn, target.ns));
  if (!text) {
    return Status::FailedPrecondition(target.where +
                                      " is not encrypted; there is no key to rotate");
  }
  if (options.key_file.empty()) {
    return Status::FailedPrecondition(target.where + " is encrypted; give its current key with " +
                                      "--key-file FILE or " + std::string(cipher::kKeyFileEnv) +
                                      "=FILE to rotate it");
  }
  ASSIGN_OR_RETURN(cipher::MasterKey old_master, cipher::ReadMasterKey(options.key_file));
  ASSIGN_OR_RETURN(cipher::MasterKey new_master, cipher::ReadMasterKey(new_key_file));
  const std::string scope = NamespaceKeyScope(target.ns);
  ASSIGN_OR_RETURN(std::string rewrapped,
                   store::RewrapKeyEnvelope(*text, old_master, new_master, scope, target.where,
                                            options.clock()));
  PgParams p;
  p.Add(target.ns).Add(kNamespaceEnvelopeKey).Add(rewrapped).Add(*text);
  ASSIGN_OR_RETURN(PgResult r, target.conn->Exec("UPDATE index_meta SET value = $3 WHERE "
                                                 "namespace = $1 AND key = $2 AND value = $4",
                                                 p));
  if (r.Affected() != 1) {
    return Status::Busy("the key of " + target.where +
                        " changed while it was being rotated (a rotation or an erasure at the "
                        "same time); run the rotation again");
  }
  return Status::Ok();
}

}  // namespace sessiondb::postgres
