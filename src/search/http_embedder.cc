// The HTTP embedder: an OpenAI-compatible /embeddings client over libcurl,
// which is loaded when the first one is made (core/libcurl.h).

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "core/libcurl.h"
#include "search/embedder.h"

namespace sessiondb::search {
namespace {

using nlohmann::json;

constexpr size_t kBodyExcerptBytes = 200;

std::string Excerpt(std::string_view body) {
  std::string out(body.substr(0, kBodyExcerptBytes));
  if (body.size() > kBodyExcerptBytes) out += "...";
  return out;
}

size_t AppendToString(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

class HttpEmbedder final : public Embedder {
 public:
  HttpEmbedder(HttpEmbedderConfig config, const CurlFunctions* curl)
      : config_(std::move(config)), curl_(curl) {
    std::string url = config_.url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    endpoint_ = url.ends_with("/embeddings") ? url : url + "/embeddings";
  }

  bool KnowsMeaning() const override { return true; }
  std::string Model() const override { return "http:" + config_.model; }

  Result<std::vector<std::vector<float>>> Embed(std::span<const std::string> texts) override {
    std::vector<std::vector<float>> out(texts.size());
    // Endpoints reject empty inputs; an empty text gets a zero vector of the
    // common dimension below, without a request.
    std::vector<size_t> pending;
    for (size_t i = 0; i < texts.size(); ++i) {
      if (!texts[i].empty()) pending.push_back(i);
    }
    size_t dims = 0;
    const size_t batch = static_cast<size_t>(config_.batch_size);
    for (size_t start = 0; start < pending.size(); start += batch) {
      const size_t end = std::min(pending.size(), start + batch);
      json input = json::array();
      for (size_t j = start; j < end; ++j) input.push_back(texts[pending[j]]);
      ASSIGN_OR_RETURN(std::vector<std::vector<float>> vectors, EmbedBatch(input));
      for (size_t j = start; j < end; ++j) {
        std::vector<float>& v = vectors[j - start];
        if (dims == 0) dims = v.size();
        if (v.size() != dims) {
          return Err(Status::InvalidArgument(
              "embedding endpoint " + endpoint_ + " returned vectors of " + std::to_string(dims) +
              " and of " + std::to_string(v.size()) + " dimensions for model '" + config_.model +
              "'; one model must give one dimension"));
        }
        NormalizeInPlace(v);
        out[pending[j]] = std::move(v);
      }
    }
    for (size_t i = 0; i < texts.size(); ++i) {
      if (texts[i].empty()) out[i].assign(dims, 0.0f);
    }
    return out;
  }

 private:
  // One request: the vectors for `input` (a JSON array of strings), in order,
  // not yet normalised.
  Result<std::vector<std::vector<float>>> EmbedBatch(const json& input) {
    json request = {{"model", config_.model}, {"input", input}};
    const std::string request_body = request.dump();
    ASSIGN_OR_RETURN(std::string reply, Post(request_body));
    return ParseReply(reply, input.size());
  }

  Result<std::string> Post(const std::string& body) {
    const CurlFunctions& lib = *curl_;
    std::unique_ptr<CURL, decltype(CurlFunctions::easy_cleanup)> curl(lib.easy_init(),
                                                                      lib.easy_cleanup);
    if (!curl) return Err(Status::Internal("cannot start a libcurl session"));
    curl_slist* raw_headers = lib.slist_append(nullptr, "Content-Type: application/json");
    raw_headers = lib.slist_append(raw_headers, "Accept: application/json");
    if (!config_.api_key.empty()) {
      const std::string authorization = "Authorization: Bearer " + config_.api_key;
      raw_headers = lib.slist_append(raw_headers, authorization.c_str());
    }
    std::unique_ptr<curl_slist, decltype(CurlFunctions::slist_free_all)> headers(
        raw_headers, lib.slist_free_all);
    std::string reply;
    char error[CURL_ERROR_SIZE] = {};
    CURL* c = curl.get();
    lib.easy_setopt(c, CURLOPT_URL, endpoint_.c_str());
    lib.easy_setopt(c, CURLOPT_POST, 1L);
    lib.easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    lib.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    lib.easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    lib.easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendToString);
    lib.easy_setopt(c, CURLOPT_WRITEDATA, &reply);
    lib.easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    lib.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(config_.timeout_ms));
    lib.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM: safe in threaded programs
    lib.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    lib.easy_setopt(c, CURLOPT_MAXREDIRS, 3L);
    const CURLcode rc = lib.easy_perform(c);
    if (rc != CURLE_OK) {
      const std::string why = error[0] != '\0' ? std::string(error) : lib.easy_strerror(rc);
      return Err(Status::Busy("cannot reach the embedding endpoint " + endpoint_ + ": " + why +
                              (rc == CURLE_OPERATION_TIMEDOUT
                                   ? " (timeout " + std::to_string(config_.timeout_ms) + " ms)"
                                   : std::string()) +
                              "; check SESSIONDB_EMBED_URL and that the server is running"));
    }
    long status = 0;
    lib.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 400) return Err(HttpError(status, reply));
    return reply;
  }

  Status HttpError(long status, std::string_view body) const {
    std::string message = "embedding endpoint " + endpoint_ + " answered HTTP " +
                          std::to_string(status) + ": " + Excerpt(body);
    if (status == 401 || status == 403) {
      return Status::InvalidArgument(message +
                                     "; check the API key (SESSIONDB_EMBED_KEY or OPENAI_API_KEY)");
    }
    if (status == 429 || status >= 500) return Status::Busy(message + "; try again later");
    return Status::InvalidArgument(message + "; check the URL and the model name '" +
                                   config_.model + "'");
  }

  Status Malformed(const std::string& what, std::string_view reply) const {
    return Status::InvalidArgument("embedding endpoint " + endpoint_ + " sent a malformed reply (" +
                                   what + "): " + Excerpt(reply) +
                                   "; check that the URL is an OpenAI-compatible /v1 endpoint");
  }

  Result<std::vector<std::vector<float>>> ParseReply(std::string_view reply,
                                                     size_t expected) const {
    const json doc = ParseJson(reply).value_or(json(json::value_t::discarded));
    if (doc.is_discarded()) return Err(Malformed("not JSON", reply));
    if (!doc.is_object()) return Err(Malformed("not a JSON object", reply));
    const auto data = doc.find("data");
    if (data == doc.end() || !data->is_array()) return Err(Malformed("no \"data\" array", reply));
    if (data->size() != expected) {
      return Err(Malformed(
          std::to_string(data->size()) + " embeddings for " + std::to_string(expected) + " inputs",
          reply));
    }
    std::vector<std::vector<float>> out(expected);
    std::vector<bool> seen(expected, false);
    for (size_t pos = 0; pos < data->size(); ++pos) {
      const json& item = (*data)[pos];
      if (!item.is_object()) return Err(Malformed("an item of \"data\" is not an object", reply));
      size_t index = pos;
      if (const auto it = item.find("index"); it != item.end()) {
        if (!it->is_number_integer() || it->get<int64_t>() < 0 ||
            it->get<int64_t>() >= static_cast<int64_t>(expected)) {
          return Err(Malformed("\"index\" out of range", reply));
        }
        index = static_cast<size_t>(it->get<int64_t>());
      }
      if (seen[index]) return Err(Malformed("index " + std::to_string(index) + " twice", reply));
      seen[index] = true;
      const auto embedding = item.find("embedding");
      if (embedding == item.end() || !embedding->is_array() || embedding->empty()) {
        return Err(Malformed("an item has no \"embedding\" array", reply));
      }
      std::vector<float>& v = out[index];
      v.reserve(embedding->size());
      for (const json& x : *embedding) {
        if (!x.is_number()) return Err(Malformed("an embedding holds a non-number", reply));
        const double d = x.get<double>();
        if (!std::isfinite(d))
          return Err(Malformed("an embedding holds a non-finite number", reply));
        v.push_back(static_cast<float>(d));
      }
    }
    return out;
  }

  HttpEmbedderConfig config_;
  const CurlFunctions* curl_;  // loaded, never unloaded
  std::string endpoint_;
};

}  // namespace

Result<std::unique_ptr<Embedder>> MakeHttpEmbedder(const HttpEmbedderConfig& config) {
  if (config.url.empty()) {
    return Err(Status::InvalidArgument("the embedding endpoint needs a URL (SESSIONDB_EMBED_URL)"));
  }
  if (config.model.empty()) {
    return Err(Status::InvalidArgument("the embedding endpoint " + config.url +
                                       " needs a model name (SESSIONDB_EMBED_MODEL)"));
  }
  if (config.batch_size < 1) {
    return Err(Status::InvalidArgument("embedding batch size is " +
                                       std::to_string(config.batch_size) + "; it must be >= 1"));
  }
  if (config.timeout_ms < 1) {
    return Err(Status::InvalidArgument("embedding timeout is " + std::to_string(config.timeout_ms) +
                                       " ms; it must be >= 1"));
  }
  ASSIGN_OR_RETURN(const CurlFunctions* curl, LoadCurlFunctions());
  return std::unique_ptr<Embedder>(std::make_unique<HttpEmbedder>(config, curl));
}

}  // namespace sessiondb::search
