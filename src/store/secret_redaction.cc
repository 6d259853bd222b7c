#include "store/secret_redaction.h"

#include <openssl/rand.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "core/json_parse.h"
#include "nlohmann/json.hpp"

namespace sessiondb::store {
namespace {

std::string ToHex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out.push_back(kHex[static_cast<unsigned char>(c) >> 4]);
    out.push_back(kHex[static_cast<unsigned char>(c) & 0xF]);
  }
  return out;
}

std::optional<std::string> FromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]);
    const int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

// Calls `f` on every field of `m` a secret may be in (the top of the header).
template <typename F>
void ForEachField(Message* m, F&& f) {
  for (Part& p : m->parts) {
    switch (p.type) {
      case PartType::kText:
      case PartType::kReasoning:  // its text; never its signature
      case PartType::kToolResult:
        f(&p.text);
        break;
      case PartType::kToolCall:
        f(&p.arguments_json);
        break;
      case PartType::kResourceLink:
        if (p.resource) {
          f(&p.resource->uri);
          f(&p.resource->name);
        }
        break;
      default:  // images and files: their bytes are not scanned
        break;
    }
  }
  f(&m->metadata_json);
  f(&m->edit_results_json);
}

bool HoldsSecret(const SecretRedactor& redactor, std::string_view text) {
  for (const SecretFinding& f : FindSecrets(text)) {
    if (!redactor.Allowed(f.kind, text.substr(f.offset, f.length))) return true;
  }
  return false;
}

}  // namespace

Result<LoadedRedaction> LoadRedaction(Backend& backend, bool writable) {
  LoadedRedaction out;
  ASSIGN_OR_RETURN(std::optional<std::string> enabled,
                   backend.LoadSetting(kSettingRedactionEnabled));
  out.settings.enabled = !enabled || *enabled != "off";
  ASSIGN_OR_RETURN(std::optional<std::string> allow, backend.LoadSetting(kSettingRedactionAllow));
  if (allow && !allow->empty()) {
    ASSIGN_OR_RETURN(nlohmann::json list, ParseJson(*allow));
    if (!list.is_array()) {
      return Err(Status::Corruption("the store's redaction allow-list is not a JSON array"));
    }
    for (const nlohmann::json& v : list) {
      if (v.is_string()) out.settings.allow.push_back(v.get<std::string>());
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> key, backend.LoadSetting(kSettingRedactionKey));
  if (key) {
    std::optional<std::string> bytes = FromHex(*key);
    if (!bytes || bytes->empty()) {
      return Err(Status::Corruption("the store's redaction key is not hexadecimal"));
    }
    out.key = std::move(*bytes);
  } else if (writable) {
    std::string fresh(32, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(fresh.data()), 32) != 1) {
      return Err(Status::Internal("no random bytes for the store's redaction key"));
    }
    RETURN_IF_ERROR(backend.StoreSetting(kSettingRedactionKey, ToHex(fresh)));
    // Another process may have made its key at the same moment: the one
    // stored last is everyone's from now on.
    ASSIGN_OR_RETURN(key, backend.LoadSetting(kSettingRedactionKey));
    std::optional<std::string> bytes = key ? FromHex(*key) : std::nullopt;
    out.key = bytes ? std::move(*bytes) : std::move(fresh);
  }
  return out;
}

Status StoreRedactionSettings(Backend& backend, const RedactionSettings& settings) {
  RETURN_IF_ERROR(backend.StoreSetting(kSettingRedactionEnabled, settings.enabled ? "on" : "off"));
  return backend.StoreSetting(kSettingRedactionAllow, nlohmann::json(settings.allow).dump());
}

bool MessageHoldsSecrets(const SecretRedactor& redactor, const Message& m) {
  bool found = false;
  // ForEachField only reads through the pointer here.
  ForEachField(const_cast<Message*>(&m), [&](std::string* field) {
    if (!found && !field->empty()) found = HoldsSecret(redactor, *field);
  });
  return found;
}

bool EventHoldsSecrets(const SecretRedactor& redactor, const Event& e) {
  switch (e.type) {
    case EventType::kMessage:
      return MessageHoldsSecrets(redactor, e.message);
    case EventType::kCompaction:
      return HoldsSecret(redactor, e.compaction.summary) ||
             HoldsSecret(redactor, e.compaction.limitations);
    case EventType::kResourceView:
      return HoldsSecret(redactor, e.resource_view.reason);
    default:
      return false;
  }
}

bool RedactMessage(const SecretRedactor& redactor, Message* m,
                   std::vector<std::string_view>* kinds) {
  bool changed = false;
  ForEachField(m, [&](std::string* field) {
    if (!field->empty()) changed |= redactor.Redact(field, kinds);
  });
  return changed;
}

bool RedactEvent(const SecretRedactor& redactor, Event* e, std::vector<std::string_view>* kinds) {
  switch (e->type) {
    case EventType::kMessage:
      return RedactMessage(redactor, &e->message, kinds);
    case EventType::kCompaction: {
      const bool summary = redactor.Redact(&e->compaction.summary, kinds);
      const bool limitations = redactor.Redact(&e->compaction.limitations, kinds);
      return summary || limitations;
    }
    case EventType::kResourceView:
      return redactor.Redact(&e->resource_view.reason, kinds);
    default:
      return false;
  }
}

}  // namespace sessiondb::store
