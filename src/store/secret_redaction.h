// Secrets never stored (docs/retention.md), for the store front: the
// settings that every face of a store agrees on (kept in the store through
// Backend::LoadSetting/StoreSetting), and the fields of messages and events
// a redactor rewrites. Which fields: the text of text, reasoning and tool
// result parts, tool call arguments, a link's URL and name, a message's
// metadata and edit results, a compaction's summary and limitations, a
// resource view's reason. Never a part's signature (replay needs it byte
// for byte), ids, digests, or attachment bytes (images are not scanned).
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/secret_scan.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"
#include "store/backend.h"

namespace sessiondb::store {

// The setting names (Backend::LoadSetting): the key as 64 hex digits, "on"
// or "off", and the allow-list as a JSON array of strings.
inline constexpr std::string_view kSettingRedactionKey = "redaction.key";
inline constexpr std::string_view kSettingRedactionEnabled = "redaction.enabled";
inline constexpr std::string_view kSettingRedactionAllow = "redaction.allow";

// The store's redaction settings and key. A writable store without a key is
// given one (32 random bytes) and keeps it; a read-only one gets an empty key
// (it writes nothing, so no marker it makes is ever stored).
struct LoadedRedaction {
  RedactionSettings settings;
  std::string key;
};
Result<LoadedRedaction> LoadRedaction(Backend& backend, bool writable);
Status StoreRedactionSettings(Backend& backend, const RedactionSettings& settings);

// Whether any field of `m` (see the top of this file) holds a secret the
// redactor does not let through.
bool MessageHoldsSecrets(const SecretRedactor& redactor, const Message& m);
// The same for an event (RedactEvent's fields).
bool EventHoldsSecrets(const SecretRedactor& redactor, const Event& e);
// Redacts those fields in place; true if anything changed. `kinds`, when not
// null, receives the kind of each secret replaced.
bool RedactMessage(const SecretRedactor& redactor, Message* m,
                   std::vector<std::string_view>* kinds = nullptr);
// A message event's message, a compaction's summary and limitations, a
// resource view's reason.
bool RedactEvent(const SecretRedactor& redactor, Event* e,
                 std::vector<std::string_view>* kinds = nullptr);

}  // namespace sessiondb::store
