#include "store/postgres/pg_sealer.h"

#include <unordered_map>

#include "blob/base64.h"
#include "core/mutex.h"
#include "store/key_envelope.h"

namespace sessiondb::postgres {
namespace {

// The associated data of a value: its column and its record, with a
// separator neither can hold in the same place (ids hold no NUL).
std::string Associated(PgColumn column, std::string_view record) {
  std::string ad(PgColumnName(column));
  ad += '\0';
  ad += record;
  return ad;
}

Status NotOpened(PgColumn column, std::string_view record) {
  return Status::Corruption(
      "the " + std::string(PgColumnName(column)) + " of " + std::string(record) +
      " does not open with this namespace's key: it was changed, moved from another record, "
      "or written without the key; the value is not returned");
}

// Search tokens already made, shared by every sealer of the process.
struct TermTokens {
  Mutex mu;
  std::unordered_map<std::string, std::string> tokens GUARDED_BY(mu);
};
constexpr size_t kMaxCachedTerms = size_t{1} << 17;

TermTokens& SharedTermTokens() {
  static TermTokens* const cache = new TermTokens;  // never destroyed: used until exit
  return *cache;
}

}  // namespace

std::string_view PgColumnName(PgColumn column) {
  switch (column) {
    case PgColumn::kSessionTitle:
      return "session title";
    case PgColumn::kSessionPreview:
      return "session preview";
    case PgColumn::kSessionMetadata:
      return "session metadata";
    case PgColumn::kEventText:
      return "event text";
    case PgColumn::kEventBody:
      return "event body";
    case PgColumn::kDraftText:
      return "draft text";
    case PgColumn::kDraftReasoning:
      return "draft reasoning";
    case PgColumn::kSetting:
      return "setting";
    case PgColumn::kCodeFilePath:
      return "code write path";
    case PgColumn::kCodeOld:
      return "code write old code";
    case PgColumn::kCodeNew:
      return "code write new code";
    case PgColumn::kCodeFunction:
      return "code edit function";
    case PgColumn::kCodeProject:
      return "code write project";
    case PgColumn::kEmbedding:
      return "embedding";
    case PgColumn::kBlob:
      return "blob";
    case PgColumn::kBlobDigest:
      return "blob digest";
    case PgColumn::kFileVersion:
      return "file_versions.sealed";
  }
  return "value";
}

PgSealer::PgSealer(const cipher::SecretKey& data_key)
    : keys_(Keys{.fields = data_key.Derive("pg-fields"),
                 .terms = data_key.Derive("pg-search-terms"),
                 .blob_names = data_key.Derive("pg-blob-names"),
                 .digests = data_key.Derive("pg-keyed-digests")}),
      key_id_(store::DataKeyId(data_key)) {}

std::string PgSealer::Text(PgColumn column, std::string_view record, std::string_view plain) const {
  if (!keys_) return std::string(plain);
  return std::string(kSealedTextPrefix) +
         blob::Base64Encode(cipher::Seal(keys_->fields, plain, Associated(column, record)));
}

Result<std::string> PgSealer::OpenText(PgColumn column, std::string_view record,
                                       std::string_view stored) const {
  if (!keys_) return std::string(stored);
  if (stored.substr(0, kSealedTextPrefix.size()) != kSealedTextPrefix) {
    return Err(NotOpened(column, record));
  }
  Result<std::string> sealed = blob::Base64Decode(stored.substr(kSealedTextPrefix.size()));
  if (!sealed) return Err(NotOpened(column, record));
  return OpenBytes(column, record, *sealed);
}

std::string PgSealer::Bytes(PgColumn column, std::string_view record,
                            std::string_view plain) const {
  if (!keys_) return std::string(plain);
  return cipher::Seal(keys_->fields, plain, Associated(column, record));
}

Result<std::string> PgSealer::OpenBytes(PgColumn column, std::string_view record,
                                        std::string_view stored) const {
  if (!keys_) return std::string(stored);
  Result<std::string> plain =
      cipher::Open(keys_->fields, stored, Associated(column, record), PgColumnName(column));
  if (!plain) return Err(NotOpened(column, record));
  return plain;
}

std::string PgSealer::Term(std::string_view term) const {
  if (!keys_) return std::string(term);
  // A namespace's words repeat (100,000 messages hold a few thousand
  // distinct ones) and an HMAC costs about a microsecond: indexing spent more
  // on them than on sealing. Tokens already made are kept per data key (its
  // id leads the cache key), in a table cleared when it fills.
  TermTokens& cache = SharedTermTokens();
  std::string cache_key = key_id_;
  cache_key += '\0';
  cache_key += term;
  {
    MutexLock lock(&cache.mu);
    auto it = cache.tokens.find(cache_key);
    if (it != cache.tokens.end()) return it->second;
  }
  // 96 bits: collisions between a namespace's terms stay out of reach, and
  // the token stays short in the index. The leading letter keeps PostgreSQL's
  // parser from reading a token such as "12e45..." as a number.
  std::string token = "t" + cipher::HmacHex(keys_->terms, term).substr(0, 24);
  MutexLock lock(&cache.mu);
  if (cache.tokens.size() >= kMaxCachedTerms) cache.tokens.clear();
  cache.tokens.emplace(std::move(cache_key), token);
  return token;
}

std::string PgSealer::BlobName(std::string_view sha256) const {
  if (!keys_) return std::string(sha256);
  return "k" + cipher::HmacHex(keys_->blob_names, sha256);
}

std::string PgSealer::KeyedDigest(std::string_view text) const {
  if (!keys_) return std::string(text);
  return cipher::HmacHex(keys_->digests, text);
}

std::string EditToken(const PgSealer& sealer, PgColumn column, std::string_view name) {
  std::string labelled(PgColumnName(column));
  labelled += '\0';
  labelled += name;
  return "e" + sealer.KeyedDigest(labelled).substr(0, 32);
}

std::string EditKey(const PgSealer& sealer, PgColumn column, std::string_view name) {
  if (!sealer.encrypted() || name.empty()) return std::string(name);
  std::string token = EditToken(sealer, column, name);
  return token + " " + sealer.Text(column, token, name);
}

Result<std::string> OpenEditKey(const PgSealer& sealer, PgColumn column, std::string_view stored) {
  if (!sealer.encrypted() || stored.empty()) return std::string(stored);
  const size_t space = stored.find(' ');
  if (space == std::string_view::npos) return sealer.OpenText(column, "", stored);
  return sealer.OpenText(column, stored.substr(0, space), stored.substr(space + 1));
}

}  // namespace sessiondb::postgres
