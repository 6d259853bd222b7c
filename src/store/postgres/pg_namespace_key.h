// Where an encrypted PostgreSQL namespace keeps its wrapped data key, and how
// a store finds it when it opens (docs/encryption.md). Each namespace has a
// data key of its own (a key per tenant), wrapped under the master key in its
// envelope (key_envelope.h), which lives in the namespace's row of
// index_meta: it is backed up with the data, and destroying it (crypto-
// shredding, pg_namespace_key.cc's DestroyNamespaceKey) leaves everything
// the namespace wrote unreadable, in the WAL and in backups too.
// Thread-safety: functions of one connection; making an envelope is atomic
// against other processes making the same namespace's.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/cipher.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

// The index_meta key of a namespace's envelope (beside "setting:" keys).
inline constexpr std::string_view kNamespaceEnvelopeKey = "encryption:envelope";

// The index_meta keys of a conversion under way (pg_namespace_convert.h).
// The first holds its kind ("encrypt", "decrypt" or "rekey"), a newline,
// then the envelope of the data key it converts to (nothing for decrypt);
// the second, how far it got. While the first exists the namespace does not
// open as a store.
inline constexpr std::string_view kNamespaceConversionKey = "encryption:convert";
inline constexpr std::string_view kNamespaceConversionProgressKey = "encryption:convert-progress";

// What to tell a user whose encrypted namespace was opened without its key.
std::string GiveKeyHint();

// kFailedPrecondition saying that a conversion of kind `kind` of namespace
// `ns` is under way and that running it again finishes it.
Status ConversionUnderWay(std::string_view ns, std::string_view kind);

// The kind of the conversion of `ns` under way, or nullopt when there is none.
Result<std::optional<std::string>> ConversionKindUnderWay(PgConnection& c, const std::string& ns);

// A connection of its own to the store of `uri`, for the verbs that manage
// one namespace's key without opening it as a store (key status, key
// rotate, the conversions): the namespace (options.namespace_name, or the
// URI's; both given and different is kInvalidArgument) and how messages
// name it. Lock waits end after options.busy_timeout_ms. kNotFound when the
// database holds no sessiondb store.
struct NamespaceConnection {
  std::unique_ptr<PgConnection> conn;
  std::string ns;
  std::string where;
};
Result<NamespaceConnection> ConnectToNamespace(const std::string& uri, const StoreOptions& options);

// The namespace's open lock, a PostgreSQL advisory lock a connection holds
// until it closes (a killed process's too). Every connection of an open
// store holds it shared; a conversion (encrypt, decrypt, rekey) holds it
// alone. So a conversion does not start while any process has the
// namespace open (it would go on writing under the old key), and no store
// connects to the namespace while one runs.
//
// HoldNamespaceOpen: the lock shared, for connection `c` of a store;
// kFailedPrecondition at once when a conversion holds it.
Status HoldNamespaceOpen(PgConnection& c, const std::string& ns);
// LockNamespaceAlone: the lock alone, for a conversion's connection; kBusy at
// once when others hold it, naming their processes (pid and program).
Status LockNamespaceAlone(PgConnection& c, const std::string& ns, const std::string& where);

// The scope bound into namespace `ns`'s envelope: one copied to another
// namespace (or to an embedded store) does not open there.
std::string NamespaceKeyScope(std::string_view ns);

// The envelope of namespace `ns`, or nullopt when it has none (plaintext).
Result<std::optional<std::string>> ReadNamespaceEnvelope(PgConnection& c, const std::string& ns);

// Replaces the envelope of `ns` (a rotation): one statement, so a rotation
// killed at any point leaves the old envelope or the new one.
Status ReplaceNamespaceEnvelope(PgConnection& c, const std::string& ns, std::string_view text);

// The data key of namespace `ns` (`where` names it in messages), or nullopt
// for a plaintext namespace opened without a key. kFailedPrecondition
// (ConversionUnderWay) while a conversion of the namespace is under way,
// with or without a key: half of it is sealed under one key, half under
// another. With a key and no envelope, a namespace that holds nothing yet
// gets one (two processes making it at once agree on one); a namespace with
// content is kFailedPrecondition. With an envelope and no key:
// kFailedPrecondition saying how to give it. The key file is read first, so a bad one fails
// before anything is written.
Result<std::optional<cipher::SecretKey>> LoadNamespaceDataKey(PgConnection& c,
                                                              const std::string& ns,
                                                              const std::string& where,
                                                              const StoreOptions& options);

// Crypto-shredding, inside the caller's transaction (which has erased
// everything the namespace held): a new data key for `ns`, wrapped under the
// master key in `key_file`, replaces the old one, and the namespace's
// settings (which an erasure keeps) are sealed again under it. Returns the
// new key; `*destroyed_id` is set to the old one's id. kFailedPrecondition
// when the namespace is not encrypted.
Result<cipher::SecretKey> ReplaceNamespaceDataKey(PgConnection& c, const std::string& ns,
                                                  const std::string& key_file, int64_t now_ms,
                                                  std::string* destroyed_id);

}  // namespace sessiondb::postgres
