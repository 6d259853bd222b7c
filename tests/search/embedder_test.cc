#include "search/embedder.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sessiondb::search {
namespace {

using nlohmann::json;

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

double Norm(const std::vector<float>& v) { return std::sqrt(Dot(v, v)); }

std::vector<float> EmbedOne(Embedder& embedder, const std::string& text) {
  std::vector<std::string> texts = {text};
  auto result = embedder.Embed(texts);
  EXPECT_TRUE(result) << result.error().ToString();
  return result ? (*result)[0] : std::vector<float>();
}

// ---------------------------------------------------------------------------
// Hash embedder

TEST(HashEmbedder, NamesItsVectorSpace) { EXPECT_EQ(MakeHashEmbedder()->Model(), "hash-384-v1"); }

TEST(HashEmbedder, TheSameTextGivesTheSameUnitVector) {
  auto a = MakeHashEmbedder();
  auto b = MakeHashEmbedder();
  const std::string text = "Refactor the storage engine's write-ahead log (WAL) for speed";
  std::vector<float> first = EmbedOne(*a, text);
  ASSERT_EQ(first.size(), static_cast<size_t>(kHashEmbedderDims));
  EXPECT_EQ(first, EmbedOne(*a, text));
  EXPECT_EQ(first, EmbedOne(*b, text));
  EXPECT_NEAR(Norm(first), 1.0, 1e-5);
}

// Pins the vector space: these values change only if the features or the
// hash change, which needs a new model name.
TEST(HashEmbedder, OneWordLandsInFixedBuckets) {
  auto embedder = MakeHashEmbedder();
  std::vector<float> v = EmbedOne(*embedder, "cat");
  // "cat": the unigram and the trigrams of "<cat>" ("<ca", "cat", "at>"):
  // four features, three buckets if two collide.
  int nonzero = 0;
  for (float x : v) nonzero += x != 0.0f;
  EXPECT_GE(nonzero, 3);
  EXPECT_LE(nonzero, 4);
  // Upper case, punctuation and spacing do not change the features.
  EXPECT_EQ(v, EmbedOne(*embedder, "  CAT!! "));
  std::vector<std::pair<int, float>> golden;
  for (int i = 0; i < kHashEmbedderDims; ++i) {
    if (v[i] != 0.0f) golden.emplace_back(i, v[i]);
  }
  // Recorded from the first implementation (hash-384-v1).
  const std::vector<std::pair<int, float>> expected = {
      {111, -0.377964f}, {157, -0.377964f}, {236, -0.755929f}, {378, -0.377964f}};
  std::string actual;
  for (auto [i, x] : golden) actual += "{" + std::to_string(i) + ", " + std::to_string(x) + "f}, ";
  ASSERT_EQ(golden.size(), expected.size()) << actual;
  for (size_t i = 0; i < golden.size(); ++i) {
    EXPECT_EQ(golden[i].first, expected[i].first) << actual;
    EXPECT_NEAR(golden[i].second, expected[i].second, 1e-6);
  }
}

TEST(HashEmbedder, RelatedTextsAreCloserThanUnrelatedOnes) {
  auto embedder = MakeHashEmbedder();
  std::vector<float> a = EmbedOne(*embedder, "parse the JSON config file");
  std::vector<float> related = EmbedOne(*embedder, "parsing json configuration files");
  std::vector<float> unrelated = EmbedOne(*embedder, "the cat sat on the mat");
  EXPECT_GT(Dot(a, related), Dot(a, unrelated) + 0.2)
      << "related " << Dot(a, related) << " unrelated " << Dot(a, unrelated);
  EXPECT_GT(Dot(a, related), 0.3);
}

TEST(HashEmbedder, EmptyOrPunctuationOnlyTextGivesZerosNotNaN) {
  auto embedder = MakeHashEmbedder();
  for (const std::string text : {"", "  ?! ... -- "}) {
    std::vector<float> v = EmbedOne(*embedder, text);
    ASSERT_EQ(v.size(), static_cast<size_t>(kHashEmbedderDims));
    for (float x : v) EXPECT_EQ(x, 0.0f);
  }
}

TEST(HashEmbedder, EmbedsEveryTextInOrder) {
  auto embedder = MakeHashEmbedder();
  std::vector<std::string> texts = {"alpha", "", "beta gamma"};
  auto vectors = embedder->Embed(texts);
  ASSERT_TRUE(vectors);
  ASSERT_EQ(vectors->size(), 3u);
  EXPECT_EQ((*vectors)[0], EmbedOne(*embedder, "alpha"));
  EXPECT_EQ(Norm((*vectors)[1]), 0.0);
  EXPECT_EQ((*vectors)[2], EmbedOne(*embedder, "beta gamma"));
}

// ---------------------------------------------------------------------------
// HTTP embedder against a real local server

struct SeenRequest {
  std::string path;
  std::string authorization;
  json body;
};

// An OpenAI-style embeddings server on 127.0.0.1 in a thread. By default it
// answers each input t with the vector (|t|, 1, 0) times 3 (not unit length),
// listing the items in reverse order with their "index".
class FakeEndpoint {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  explicit FakeEndpoint(Handler handler = {}) : handler_(std::move(handler)) {
    auto serve = [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mutex_);
        requests_.push_back({req.path, req.get_header_value("Authorization"),
                             json::parse(req.body, nullptr, false)});
      }
      if (handler_) return handler_(req, res);
      json body = json::parse(req.body);
      json data = json::array();
      const auto& input = body["input"];
      for (size_t i = input.size(); i-- > 0;) {
        const double len = static_cast<double>(input[i].get<std::string>().size());
        data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", {3 * len, 3.0, 0.0}}});
      }
      res.set_content(json{{"object", "list"}, {"data", data}, {"model", body["model"]}}.dump(),
                      "application/json");
    };
    server_.Post("/v1/embeddings", serve);
    server_.Post("/custom/embeddings", serve);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs; wait for it.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeEndpoint() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int port() const { return port_; }
  std::vector<SeenRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  Handler handler_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<SeenRequest> requests_;
};

std::unique_ptr<Embedder> MakeClient(const std::string& url, int batch_size = 64,
                                     const std::string& key = "") {
  HttpEmbedderConfig config{.url = url,
                            .model = "test-model",
                            .api_key = key,
                            .timeout_ms = 5000,
                            .batch_size = batch_size};
  auto embedder = MakeHttpEmbedder(config);
  EXPECT_TRUE(embedder) << embedder.error().ToString();
  return std::move(*embedder);
}

TEST(HttpEmbedder, PostsModelAndInputsWithTheKeyAndNamesTheModel) {
  FakeEndpoint endpoint;
  auto embedder = MakeClient(endpoint.url(), 64, "sk-test");
  EXPECT_EQ(embedder->Model(), "http:test-model");
  std::vector<std::string> texts = {"hello", "world!"};
  auto vectors = embedder->Embed(texts);
  ASSERT_TRUE(vectors) << vectors.error().ToString();
  auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/embeddings");
  EXPECT_EQ(requests[0].authorization, "Bearer sk-test");
  EXPECT_EQ(requests[0].body["model"], "test-model");
  EXPECT_EQ(requests[0].body["input"], json({"hello", "world!"}));
}

TEST(HttpEmbedder, SendsNoAuthorizationWithoutAKey) {
  FakeEndpoint endpoint;
  auto embedder = MakeClient(endpoint.url());
  std::vector<std::string> texts = {"x"};
  ASSERT_TRUE(embedder->Embed(texts));
  EXPECT_EQ(endpoint.requests().at(0).authorization, "");
}

TEST(HttpEmbedder, AUrlEndingInEmbeddingsIsUsedAsIs) {
  FakeEndpoint endpoint;
  auto embedder =
      MakeClient("http://127.0.0.1:" + std::to_string(endpoint.port()) + "/custom/embeddings/");
  std::vector<std::string> texts = {"x"};
  auto vectors = embedder->Embed(texts);
  ASSERT_TRUE(vectors) << vectors.error().ToString();
  EXPECT_EQ(endpoint.requests().at(0).path, "/custom/embeddings");
}

TEST(HttpEmbedder, SplitsInputsIntoBatchesAndKeepsTheirOrder) {
  FakeEndpoint endpoint;
  auto embedder = MakeClient(endpoint.url(), /*batch_size=*/2);
  std::vector<std::string> texts = {"a", "bb", "ccc", "dddd", "eeeee"};
  auto vectors = embedder->Embed(texts);
  ASSERT_TRUE(vectors) << vectors.error().ToString();
  auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].body["input"], json({"a", "bb"}));
  EXPECT_EQ(requests[1].body["input"], json({"ccc", "dddd"}));
  EXPECT_EQ(requests[2].body["input"], json({"eeeee"}));
  ASSERT_EQ(vectors->size(), 5u);
  for (size_t i = 0; i < texts.size(); ++i) {
    // The server sent (3|t|, 3, 0) in reverse order: the client reorders by
    // "index" and normalises.
    const double len = static_cast<double>(texts[i].size());
    const double norm = std::sqrt(len * len + 1);
    const std::vector<float>& v = (*vectors)[i];
    ASSERT_EQ(v.size(), 3u);
    EXPECT_NEAR(v[0], len / norm, 1e-6) << i;
    EXPECT_NEAR(v[1], 1 / norm, 1e-6) << i;
    EXPECT_NEAR(Norm(v), 1.0, 1e-6);
  }
}

TEST(HttpEmbedder, NoTextsMeansNoRequest) {
  FakeEndpoint endpoint;
  auto embedder = MakeClient(endpoint.url());
  auto vectors = embedder->Embed({});
  ASSERT_TRUE(vectors);
  EXPECT_TRUE(vectors->empty());
  EXPECT_TRUE(endpoint.requests().empty());
}

TEST(HttpEmbedder, AServerErrorNamesTheStatusAndTheBody) {
  FakeEndpoint endpoint([](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content("model exploded: out of GPU memory", "text/plain");
  });
  auto embedder = MakeClient(endpoint.url());
  std::vector<std::string> texts = {"x"};
  auto vectors = embedder->Embed(texts);
  ASSERT_FALSE(vectors);
  EXPECT_EQ(vectors.error().code(), StatusCode::kBusy);
  EXPECT_NE(vectors.error().message().find("500"), std::string::npos) << vectors.error().message();
  EXPECT_NE(vectors.error().message().find("out of GPU memory"), std::string::npos);
}

TEST(HttpEmbedder, ARejectedKeySaysToCheckTheKey) {
  FakeEndpoint endpoint([](const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_content(std::string(1000, 'z'), "text/plain");
  });
  auto embedder = MakeClient(endpoint.url(), 64, "wrong");
  std::vector<std::string> texts = {"x"};
  auto vectors = embedder->Embed(texts);
  ASSERT_FALSE(vectors);
  EXPECT_EQ(vectors.error().code(), StatusCode::kInvalidArgument);
  const std::string& m = vectors.error().message();
  EXPECT_NE(m.find("401"), std::string::npos);
  EXPECT_NE(m.find("key"), std::string::npos);
  EXPECT_NE(m.find(std::string(200, 'z')), std::string::npos);
  EXPECT_EQ(m.find(std::string(201, 'z')), std::string::npos) << "only the first 200 bytes";
}

TEST(HttpEmbedder, AMalformedReplyIsAnError) {
  for (const std::string reply :
       {"{not json", "[1,2]", R"({"data":"nope"})", R"({"data":[]})",
        R"({"data":[{"embedding":["a"]}]})", R"({"data":[{"index":7,"embedding":[1]}]})"}) {
    FakeEndpoint endpoint([reply](const httplib::Request&, httplib::Response& res) {
      res.set_content(reply, "application/json");
    });
    auto embedder = MakeClient(endpoint.url());
    std::vector<std::string> texts = {"x"};
    auto vectors = embedder->Embed(texts);
    ASSERT_FALSE(vectors) << reply;
    EXPECT_EQ(vectors.error().code(), StatusCode::kInvalidArgument) << reply;
    EXPECT_NE(vectors.error().message().find("malformed"), std::string::npos);
  }
}

TEST(HttpEmbedder, VectorsOfDifferentDimensionsAreAnError) {
  FakeEndpoint endpoint([](const httplib::Request& req, httplib::Response& res) {
    // Each batch answers with a dimension of its own.
    const size_t dims = json::parse(req.body)["input"][0].get<std::string>().size();
    json data = json::array({{{"index", 0}, {"embedding", std::vector<double>(dims, 1.0)}}});
    res.set_content(json{{"data", data}}.dump(), "application/json");
  });
  auto embedder = MakeClient(endpoint.url(), /*batch_size=*/1);
  std::vector<std::string> texts = {"abc", "abcd"};
  auto vectors = embedder->Embed(texts);
  ASSERT_FALSE(vectors);
  EXPECT_NE(vectors.error().message().find("dimension"), std::string::npos)
      << vectors.error().message();
}

TEST(HttpEmbedder, AnUnreachableEndpointFailsFastWithBusy) {
  // A port nobody listens on: bound, then closed.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1";

  auto embedder = MakeHttpEmbedder({.url = url, .model = "m", .timeout_ms = 2000});
  ASSERT_TRUE(embedder);
  std::vector<std::string> texts = {"x"};
  const auto start = std::chrono::steady_clock::now();
  auto vectors = (*embedder)->Embed(texts);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  ASSERT_FALSE(vectors);
  EXPECT_EQ(vectors.error().code(), StatusCode::kBusy);
  EXPECT_NE(vectors.error().message().find(url), std::string::npos) << vectors.error().message();
}

TEST(HttpEmbedder, ASlowEndpointTimesOut) {
  FakeEndpoint endpoint([](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content("{}", "application/json");
  });
  auto embedder = MakeHttpEmbedder({.url = endpoint.url(), .model = "m", .timeout_ms = 200});
  ASSERT_TRUE(embedder);
  std::vector<std::string> texts = {"x"};
  const auto start = std::chrono::steady_clock::now();
  auto vectors = (*embedder)->Embed(texts);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1200));
  ASSERT_FALSE(vectors);
  EXPECT_EQ(vectors.error().code(), StatusCode::kBusy);
}

TEST(HttpEmbedder, ConfigWithoutUrlOrModelIsRejected) {
  EXPECT_FALSE(MakeHttpEmbedder({.url = "", .model = "m"}));
  EXPECT_FALSE(MakeHttpEmbedder({.url = "http://127.0.0.1:1/v1", .model = ""}));
  EXPECT_FALSE(MakeHttpEmbedder({.url = "http://127.0.0.1:1/v1", .model = "m", .batch_size = 0}));
}

// ---------------------------------------------------------------------------
// EmbedderFromEnvironment

class EnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override { Clear(); }
  void TearDown() override { Clear(); }
  static void Clear() {
    for (const char* name : {"SESSIONDB_EMBED_URL", "SESSIONDB_EMBED_MODEL", "SESSIONDB_EMBED_KEY",
                             "OPENAI_API_KEY"}) {
      ::unsetenv(name);
    }
  }
};

TEST_F(EnvironmentTest, WithoutAUrlItIsTheHashEmbedder) {
  auto embedder = EmbedderFromEnvironment();
  ASSERT_TRUE(embedder);
  EXPECT_EQ((*embedder)->Model(), "hash-384-v1");
}

TEST_F(EnvironmentTest, AUrlWithoutAModelIsAnError) {
  ::setenv("SESSIONDB_EMBED_URL", "http://127.0.0.1:11434/v1", 1);
  auto embedder = EmbedderFromEnvironment();
  ASSERT_FALSE(embedder);
  EXPECT_EQ(embedder.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(embedder.error().message().find("SESSIONDB_EMBED_MODEL"), std::string::npos);
}

TEST_F(EnvironmentTest, TheKeyComesFromSessiondbEmbedKeyElseOpenAiApiKey) {
  FakeEndpoint endpoint;
  ::setenv("SESSIONDB_EMBED_URL", endpoint.url().c_str(), 1);
  ::setenv("SESSIONDB_EMBED_MODEL", "nomic", 1);
  ::setenv("OPENAI_API_KEY", "openai-key", 1);
  std::vector<std::string> texts = {"x"};
  {
    auto embedder = EmbedderFromEnvironment();
    ASSERT_TRUE(embedder);
    EXPECT_EQ((*embedder)->Model(), "http:nomic");
    ASSERT_TRUE((*embedder)->Embed(texts));
  }
  ::setenv("SESSIONDB_EMBED_KEY", "own-key", 1);
  {
    auto embedder = EmbedderFromEnvironment();
    ASSERT_TRUE(embedder);
    ASSERT_TRUE((*embedder)->Embed(texts));
  }
  auto requests = endpoint.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].authorization, "Bearer openai-key");
  EXPECT_EQ(requests[1].authorization, "Bearer own-key");
  EXPECT_EQ(requests[1].body["model"], "nomic");
}

}  // namespace
}  // namespace sessiondb::search
