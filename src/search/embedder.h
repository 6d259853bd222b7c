// Text embedders: turn texts into unit-length vectors for semantic search.
//
// Two kinds: the built-in hash embedder (offline, no model file, 384
// dimensions from hashed word and character n-grams: finds texts that share
// words and word stems, not synonyms) and an HTTP client for any
// OpenAI-compatible /v1/embeddings endpoint (Ollama, llama.cpp, vLLM, OpenAI).
// Model() names the vector space; vectors of different models are never
// compared, so a store keeps the model name beside every vector it holds.
//
// Example:
//   ASSIGN_OR_RETURN(std::unique_ptr<Embedder> embedder, EmbedderFromEnvironment());
//   std::vector<std::string> texts = {"parse the JSON config"};
//   ASSIGN_OR_RETURN(auto vectors, embedder->Embed(texts));
//
// Thread-safety: Embed may be called from several threads at once on one
// embedder (the hash embedder has no state; the HTTP one opens a connection
// per request).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sessiondb/status.h"

namespace sessiondb::search {

class Embedder {
 public:
  virtual ~Embedder() = default;
  // Names the vector space: vectors of different models are never compared.
  // "hash-384-v1" for the built-in one; "http:<model>" for an endpoint.
  virtual std::string Model() const = 0;
  // Unit-length (L2-normalised) vectors, one per text, in order; a text with
  // nothing to embed gives a zero vector. Errors: kBusy when the endpoint is
  // unreachable, times out or is overloaded (429, 5xx); kInvalidArgument for
  // a rejected request (4xx: URL, model or key) or a malformed reply; the
  // message says what to check.
  virtual Result<std::vector<std::vector<float>>> Embed(std::span<const std::string> texts) = 0;
  // True for a model of meaning (an endpoint's); false for the built-in
  // embedder, which knows spelling only: hybrid search then keeps the keyword
  // order whole (FuseKeywordFirst) instead of fusing by rank.
  virtual bool KnowsMeaning() const = 0;
};

inline constexpr int kHashEmbedderDims = 384;

// The built-in embedder: lower-cased word unigrams (tokens of letters, digits,
// '_' and non-ASCII bytes), word bigrams and the character trigrams of each
// word with boundary marks, each hashed with FNV-1a 64 to a bucket and a sign,
// weighted 1+log(tf) (bigrams and trigrams lower, English stop words such as
// "the" at a tenth), then L2-normalised.
// Deterministic across runs and machines; empty text gives a zero vector.
std::unique_ptr<Embedder> MakeHashEmbedder();

struct HttpEmbedderConfig {
  // Base URL, e.g. http://127.0.0.1:11434/v1 ; the client POSTs to
  // url + "/embeddings" (if url already ends with /embeddings, to url itself).
  std::string url;
  std::string model;
  std::string api_key;  // sent as "Authorization: Bearer KEY" when non-empty
  int timeout_ms = 30000;
  int batch_size = 64;  // texts per request
};

// An OpenAI-compatible /embeddings client over libcurl: request
// {"model":M,"input":[...]}, reply {"data":[{"embedding":[...],"index":i},...]},
// ordered by "index" when present. Returns normalised vectors, all of one
// dimension. kInvalidArgument if the config has no URL or model, or a
// batch_size < 1; kFailedPrecondition, saying what to install, if libcurl
// cannot be loaded (the first call loads it: core/libcurl.h).
Result<std::unique_ptr<Embedder>> MakeHttpEmbedder(const HttpEmbedderConfig& config);

// SESSIONDB_EMBED_URL set (non-empty): the HTTP embedder with
// SESSIONDB_EMBED_MODEL (required then: kInvalidArgument otherwise) and the key
// SESSIONDB_EMBED_KEY, else OPENAI_API_KEY, else none. Unset: the hash embedder.
Result<std::unique_ptr<Embedder>> EmbedderFromEnvironment();

// Scales `v` to unit length in place; leaves a zero (or non-finite-norm) vector alone.
void NormalizeInPlace(std::span<float> v);

}  // namespace sessiondb::search
