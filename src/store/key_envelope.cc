#include "store/key_envelope.h"

#include <nlohmann/json.hpp>

#include "core/json_parse.h"

namespace sessiondb::store {
namespace {

constexpr std::string_view kFormat = "sessiondb-key-envelope";
constexpr int kVersion = 1;
constexpr size_t kSaltBytes = 16;

std::string WrapAssociated(std::string_view scope) {
  return "sessiondb data key v1\n" + std::string(scope);
}

// The key that wraps the data key: HKDF of a generated key (with the salt
// in its label, so each envelope's wrapping key differs), or scrypt of a passphrase.
Result<cipher::SecretKey> WrappingKey(const cipher::MasterKey& master, std::string_view salt,
                                      const cipher::StretchParams& params) {
  if (!master.is_passphrase) return master.raw.Derive("wrap\n" + std::string(salt));
  return cipher::StretchPassphrase(master.passphrase, salt, params);
}

struct Parsed {
  std::string kdf;
  cipher::StretchParams params;
  std::string salt;
  std::string wrapped;
  std::string key_id;
  int64_t created_ms = 0;
  int64_t wrapped_ms = 0;
};

Result<Parsed> Parse(std::string_view text, std::string_view where) {
  auto bad = [&](const std::string& why) {
    return Err(Status::InvalidArgument("the key envelope of " + std::string(where) +
                                       " is damaged (" + why +
                                       "); restore it from a backup of the store"));
  };
  if (text.size() > kMaxEnvelopeBytes) return bad("longer than 64 KiB");
  Result<nlohmann::json> json = ParseJson(text, 8);
  if (!json || !json->is_object()) return bad("not a JSON object");
  const nlohmann::json& j = *json;
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto num = [&](const nlohmann::json& o, const char* k) -> int64_t {
    auto it = o.find(k);
    return it != o.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
  };
  if (str("format") != kFormat) return bad("no sessiondb-key-envelope format");
  if (num(j, "version") != kVersion) {
    return bad("version " + std::to_string(num(j, "version")) + ", this build reads version 1");
  }
  Parsed p;
  p.kdf = str("kdf");
  if (p.kdf != "hkdf" && p.kdf != "scrypt") return bad("unknown kdf '" + p.kdf + "'");
  if (p.kdf == "scrypt") {
    auto it = j.find("scrypt");
    if (it == j.end() || !it->is_object()) return bad("scrypt parameters missing");
    const int64_t log2_n = num(*it, "log2_n");
    const int64_t r = num(*it, "r");
    const int64_t par = num(*it, "p");
    if (log2_n < 0 || r < 0 || par < 0) return bad("scrypt parameters missing");
    p.params = {static_cast<uint64_t>(log2_n), static_cast<uint64_t>(r),
                static_cast<uint64_t>(par)};
  }
  Result<std::string> salt = cipher::FromHex(str("salt"), "salt");
  Result<std::string> wrapped = cipher::FromHex(str("wrapped_key"), "wrapped_key");
  if (!salt || salt->size() != kSaltBytes) return bad("salt");
  if (!wrapped || wrapped->size() != cipher::kKeyBytes + cipher::kSealOverhead) {
    return bad("wrapped_key");
  }
  p.salt = std::move(*salt);
  p.wrapped = std::move(*wrapped);
  p.key_id = str("key_id");
  p.created_ms = num(j, "created_ms");
  p.wrapped_ms = num(j, "wrapped_ms");
  return p;
}

std::string Render(const cipher::SecretKey& data_key, const cipher::MasterKey& master,
                   std::string_view scope, int64_t created_ms, int64_t now_ms) {
  const cipher::StretchParams params;
  const std::string salt = cipher::RandomBytes(kSaltBytes);
  // A generated key never fails to derive; a passphrase's stretch fails only
  // for parameters out of range, and these are the defaults.
  Result<cipher::SecretKey> wrapping = WrappingKey(master, salt, params);
  if (!wrapping) std::abort();
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["kdf"] = master.is_passphrase ? "scrypt" : "hkdf";
  if (master.is_passphrase) {
    j["scrypt"] = {{"log2_n", params.log2_n}, {"r", params.r}, {"p", params.p}};
  }
  j["salt"] = cipher::ToHex(salt);
  j["wrapped_key"] = cipher::ToHex(cipher::Seal(*wrapping, data_key.view(), WrapAssociated(scope)));
  j["key_id"] = DataKeyId(data_key);
  j["created_ms"] = created_ms;
  j["wrapped_ms"] = now_ms;
  return j.dump(2) + "\n";
}

}  // namespace

std::string DataKeyId(const cipher::SecretKey& data_key) {
  return cipher::ToHex(cipher::Hmac(data_key, "sessiondb key id").substr(0, 8));
}

NewEnvelope MakeKeyEnvelope(const cipher::MasterKey& master, std::string_view scope,
                            int64_t now_ms) {
  NewEnvelope out;
  out.data_key = cipher::SecretKey::Random();
  out.text = Render(out.data_key, master, scope, now_ms, now_ms);
  return out;
}

std::string WrapDataKey(const cipher::SecretKey& data_key, const cipher::MasterKey& master,
                        std::string_view scope, int64_t created_ms, int64_t now_ms) {
  return Render(data_key, master, scope, created_ms, now_ms);
}

Result<cipher::SecretKey> OpenKeyEnvelope(std::string_view text, const cipher::MasterKey& master,
                                          std::string_view scope, std::string_view where) {
  ASSIGN_OR_RETURN(Parsed p, Parse(text, where));
  if ((p.kdf == "scrypt") != master.is_passphrase) {
    return Err(Status::FailedPrecondition(
        "the key in " + master.source + " does not open " + std::string(where) + ": it holds " +
        (master.is_passphrase ? "a passphrase" : "a generated key") + " and the store was " +
        "encrypted with " + (p.kdf == "scrypt" ? "a passphrase" : "a generated key")));
  }
  ASSIGN_OR_RETURN(cipher::SecretKey wrapping, WrappingKey(master, p.salt, p.params));
  Result<std::string> raw =
      cipher::Open(wrapping, p.wrapped, WrapAssociated(scope), "the data key");
  if (!raw) {
    return Err(Status::FailedPrecondition(
        "the key in " + master.source + " does not open " + std::string(where) +
        ": it is not the key the store was encrypted with; give the right one with "
        "--key-file FILE or SESSIONDB_KEY_FILE"));
  }
  Result<cipher::SecretKey> key = cipher::SecretKey::FromBytes(*raw);
  std::fill(raw->begin(), raw->end(), '\0');
  return key;
}

Result<std::string> RewrapKeyEnvelope(std::string_view text, const cipher::MasterKey& old_master,
                                      const cipher::MasterKey& new_master, std::string_view scope,
                                      std::string_view where, int64_t now_ms) {
  ASSIGN_OR_RETURN(Parsed p, Parse(text, where));
  ASSIGN_OR_RETURN(cipher::SecretKey data_key, OpenKeyEnvelope(text, old_master, scope, where));
  return Render(data_key, new_master, scope, p.created_ms, now_ms);
}

Result<EnvelopeInfo> DescribeKeyEnvelope(std::string_view text, std::string_view where) {
  ASSIGN_OR_RETURN(Parsed p, Parse(text, where));
  return EnvelopeInfo{p.kdf, p.key_id, p.created_ms, p.wrapped_ms};
}

}  // namespace sessiondb::store
