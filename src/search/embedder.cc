#include "search/embedder.h"

#include <cmath>
#include <cstdlib>

namespace sessiondb::search {
namespace {

// The value of an environment variable, or "" when unset.
std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

void NormalizeInPlace(std::span<float> v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  if (!(sum > 0) || !std::isfinite(sum)) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : v) x *= inv;
}

Result<std::unique_ptr<Embedder>> EmbedderFromEnvironment() {
  const std::string url = Env("SESSIONDB_EMBED_URL");
  if (url.empty()) return MakeHashEmbedder();
  HttpEmbedderConfig config;
  config.url = url;
  config.model = Env("SESSIONDB_EMBED_MODEL");
  if (config.model.empty()) {
    return Err(Status::InvalidArgument(
        "SESSIONDB_EMBED_URL is set (" + url +
        ") but SESSIONDB_EMBED_MODEL is not: set it to the endpoint's embedding model, "
        "e.g. nomic-embed-text, or unset SESSIONDB_EMBED_URL for the built-in embedder"));
  }
  config.api_key = Env("SESSIONDB_EMBED_KEY");
  if (config.api_key.empty()) config.api_key = Env("OPENAI_API_KEY");
  return MakeHttpEmbedder(config);
}

}  // namespace sessiondb::search
