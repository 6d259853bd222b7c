// An erasure's receipt as JSON (forget.h): written canonically (fixed key
// order, no whitespace) so its digest, SHA-256 over that text without the
// `digest` key, names exactly what was issued.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blob/sha256.h"
#include "core/json_parse.h"
#include "core/json_writer.h"
#include "sessiondb/forget.h"
#include "store/forget_rules.h"

namespace sessiondb {
namespace {

// More than any real erasure's receipt (a million sessions' ids is ~40 MiB).
constexpr size_t kMaxReceiptBytes = size_t{64} << 20;

void WriteStrings(JsonWriter& w, std::string_view key, const std::vector<std::string>& values) {
  w.Key(key).BeginArray();
  for (const std::string& v : values) w.String(v);
  w.EndArray();
}

std::string ReceiptJson(const ErasureReceipt& r, bool with_digest) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("id").String(r.id);
  w.Key("erased_ms").Int(r.erased_ms);
  w.Key("store").String(r.store);
  w.Key("namespace").String(r.namespace_name);
  w.Key("actor").String(r.actor);
  w.Key("scope").String(r.scope);
  WriteStrings(w, "sessions", r.sessions);
  WriteStrings(w, "kept_for_forks", r.kept_for_forks);
  w.Key("messages").BeginArray();
  for (const MessageRef& m : r.messages) {
    w.BeginObject().Key("session_id").String(m.session_id).Key("seq").Int(m.seq).EndObject();
  }
  w.EndArray();
  w.Key("counts").BeginObject();
  for (const auto& [kind, n] : r.counts) w.Key(kind).Int(n);
  w.EndObject();
  WriteStrings(w, "blobs", r.blobs);
  // Only when a key was destroyed: receipts issued before crypto-shredding
  // existed keep their text, and so their digest.
  if (!r.destroyed_key_id.empty()) w.Key("destroyed_key").String(r.destroyed_key_id);
  if (with_digest) w.Key("digest").String(r.digest);
  w.EndObject();
  return out;
}

Status NotAReceipt(std::string_view why) {
  return Status::InvalidArgument("not an erasure receipt (as `sessiondb erase` prints): " +
                                 std::string(why));
}

Result<std::string> StringField(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string()) {
    return Err(NotAReceipt(std::string("`") + key + "` must be a string"));
  }
  return it->get<std::string>();
}

Result<std::vector<std::string>> StringsField(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) {
    return Err(NotAReceipt(std::string("`") + key + "` must be an array of strings"));
  }
  std::vector<std::string> out;
  for (const nlohmann::json& v : *it) {
    if (!v.is_string()) {
      return Err(NotAReceipt(std::string("`") + key + "` must be an array of strings"));
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

std::string ErasureReceiptToJson(const ErasureReceipt& receipt) {
  return ReceiptJson(receipt, /*with_digest=*/true);
}

std::string ErasureReceiptDigest(const ErasureReceipt& receipt) {
  return blob::Sha256Hex(ReceiptJson(receipt, /*with_digest=*/false));
}

Result<ErasureReceipt> ParseErasureReceipt(std::string_view json) {
  if (json.size() > kMaxReceiptBytes) {
    return Err(NotAReceipt("it is " + std::to_string(json.size()) + " bytes; the limit is 64 MiB"));
  }
  Result<nlohmann::json> parsed = ParseJson(json);
  if (!parsed) return Err(NotAReceipt(parsed.error().message()));
  const nlohmann::json& doc = *parsed;
  if (!doc.is_object()) return Err(NotAReceipt("it is not a JSON object"));
  static constexpr const char* kKeys[] = {"id",           "erased_ms", "store",    "namespace",
                                          "actor",        "scope",     "sessions", "kept_for_forks",
                                          "messages",     "counts",    "blobs",    "digest",
                                          "destroyed_key"};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    bool known = false;
    for (const char* k : kKeys) known = known || it.key() == k;
    if (!known) return Err(NotAReceipt("unknown key `" + it.key() + "`"));
  }
  ErasureReceipt r;
  ASSIGN_OR_RETURN(r.id, StringField(doc, "id"));
  auto erased = doc.find("erased_ms");
  if (erased == doc.end() || !erased->is_number_integer()) {
    return Err(NotAReceipt("`erased_ms` must be an integer"));
  }
  r.erased_ms = erased->get<int64_t>();
  ASSIGN_OR_RETURN(r.store, StringField(doc, "store"));
  ASSIGN_OR_RETURN(r.namespace_name, StringField(doc, "namespace"));
  ASSIGN_OR_RETURN(r.actor, StringField(doc, "actor"));
  ASSIGN_OR_RETURN(r.scope, StringField(doc, "scope"));
  ASSIGN_OR_RETURN(r.sessions, StringsField(doc, "sessions"));
  ASSIGN_OR_RETURN(r.kept_for_forks, StringsField(doc, "kept_for_forks"));
  auto messages = doc.find("messages");
  if (messages == doc.end() || !messages->is_array()) {
    return Err(NotAReceipt("`messages` must be an array"));
  }
  for (const nlohmann::json& m : *messages) {
    if (!m.is_object() || m.size() != 2 || !m.contains("session_id") ||
        !m["session_id"].is_string() || !m.contains("seq") || !m["seq"].is_number_integer()) {
      return Err(NotAReceipt("each of `messages` must be {\"session_id\", \"seq\"}"));
    }
    r.messages.push_back({m["session_id"].get<std::string>(), m["seq"].get<int64_t>()});
  }
  auto counts = doc.find("counts");
  if (counts == doc.end() || !counts->is_object()) {
    return Err(NotAReceipt("`counts` must be an object of integers"));
  }
  // nlohmann's object sorts its keys; a receipt's counts are every kind in
  // the fixed order ErasureReceipt::counts names, whatever the spacing or
  // order of the text read (a receipt pretty-printed by another tool
  // still checks against its digest).
  for (auto it = counts->begin(); it != counts->end(); ++it) {
    if (!it->is_number_integer()) return Err(NotAReceipt("`counts` must be an object of integers"));
    if (std::find(std::begin(store::kErasureKinds), std::end(store::kErasureKinds), it.key()) ==
        std::end(store::kErasureKinds)) {
      return Err(NotAReceipt("`counts` holds an unknown kind \"" + it.key() + "\""));
    }
  }
  for (const char* kind : store::kErasureKinds) {
    auto count = counts->find(kind);
    if (count == counts->end()) {
      return Err(NotAReceipt("`counts` lacks the kind \"" + std::string(kind) + "\""));
    }
    r.counts.emplace_back(kind, count->get<int64_t>());
  }
  ASSIGN_OR_RETURN(r.blobs, StringsField(doc, "blobs"));
  if (doc.contains("destroyed_key")) {
    ASSIGN_OR_RETURN(r.destroyed_key_id, StringField(doc, "destroyed_key"));
  }
  ASSIGN_OR_RETURN(r.digest, StringField(doc, "digest"));
  return r;
}

}  // namespace sessiondb
