// `sessiondb encrypt`, `decrypt` and `key rekey` of a PostgreSQL namespace,
// in place (docs/encryption.md, "PostgreSQL"): every value the namespace
// sealed is opened with the key it has and sealed with the one it gets, a
// batch of rows per transaction (pg_namespace_reseal.h), on one connection
// of its own, as `key status` and `key rotate` use (pg_key_admin.h).
//
// A conversion is resumable. Its first transaction records its kind and the
// envelope of the new data key (index_meta "encryption:convert"), and each
// batch advances "encryption:convert-progress" in the transaction that
// re-seals it, so one killed at any point loses nothing, and running it
// again continues from there with the same new key. Meanwhile the namespace
// does not open as a store (LoadNamespaceDataKey says what is under way);
// the old envelope stays until the last transaction, which puts the new one
// in its place (or removes it, for decrypt) and ends the conversion.
//
// A conversion does not start while any process has the namespace open
// (they would go on writing under the old key): every connection of an open
// store holds the namespace's open lock shared, and a conversion takes it
// alone or stops at once (kBusy naming their backends); while it runs, no
// store connects (pg_namespace_key.h, HoldNamespaceOpen). Not converted: the hook's deny-once
// memory (hook_seen, keyed one-way), which starts afresh. After a rekey the old data key opens
// nothing the namespace holds, but backups taken before still hold it in their envelope row (as
// with crypto-shredding): they open with the old master key as they did.
//
// Example:
//   ConvertOptions convert{.new_key_file = "/keys/new.key"};
//   ASSIGN_OR_RETURN(ConvertReport report,
//                    ConvertNamespace(uri, options, NamespaceConversion::kRekey, convert));
//
// Thread-safety: each call uses a connection of its own; two conversions of
// one namespace at once are refused (kBusy) by advisory locks.
#pragma once

#include <string>

#include "sessiondb/encryption.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb::postgres {

enum class NamespaceConversion { kEncrypt, kDecrypt, kRekey };

// Converts the namespace of `uri` (options.namespace_name, or the URI's) in place.
// options.key_file: the current master key (decrypt, rekey); convert.new_key_file: the
// target master key (encrypt: required; rekey: empty means the current one).
// ConvertReport: old_copy stays empty (in place), rows = rows re-sealed (those
// of an interrupted run's included), blobs = blobs converted, key_id = the new data key's
// id (empty after decrypt). convert.progress gets (rows done, rows in all) after each batch.
//
// Errors: kNotFound when the database holds no sessiondb store; kInvalidArgument for
// encrypt without new_key_file; kFailedPrecondition for a namespace already in the asked
// form, a missing or wrong key (for a resumed run, the new key must be the one it started
// with), or a conversion of another kind under way (named, with how to finish it); kBusy
// while another process converts the namespace; kCorruption naming the column and record
// (or blob) that does not open with the current key: the conversion stops there, and stays
// under way until that value is repaired or removed.
Result<ConvertReport> ConvertNamespace(const std::string& uri, const StoreOptions& options,
                                       NamespaceConversion kind, const ConvertOptions& convert);

}  // namespace sessiondb::postgres
