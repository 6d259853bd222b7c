// GET /v1/sessions/{id}/events as Server-Sent Events against the real server:
// a client that drops and reconnects with its last id while many clients
// append sees every event exactly once, drafts arrive as events without an
// id, and appends made by another process arrive too.
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "server/server_fixture.h"
#include "server/sse_parser.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

json TextMessage(const std::string& text) {
  return {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", text}}})}};
}

httplib::Headers StreamHeaders(int64_t last_id) {
  httplib::Headers h = {{"Accept", "text/event-stream"}};
  if (last_id > 0) h.emplace("Last-Event-ID", std::to_string(last_id));
  return h;
}

TEST(EventStream, ReconnectingClientMissesNothingAndSeesNothingTwice) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  ASSERT_EQ(server.Client()->Post("/v1/sessions", R"({"id":"live"})", "application/json")->status,
            201);

  constexpr int kWriters = 8, kEach = 40, kTotal = kWriters * kEach;
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto c = server.Client();
      for (int i = 0; i < kEach; ++i) {
        auto r = c->Post("/v1/sessions/live/messages",
                         TextMessage("w" + std::to_string(w) + "-" + std::to_string(i)).dump(),
                         "application/json");
        if (!r || r->status != 201) ++failures;
      }
    });
  }

  std::vector<int64_t> seqs;
  std::set<std::string> texts;
  int64_t last = 0;
  int connections = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (last < kTotal && connections < 200 && std::chrono::steady_clock::now() < deadline) {
    ++connections;
    int this_time = 0;
    SseParser parser([&](const SseEvent& e) {
      EXPECT_EQ(e.event, "message");
      seqs.push_back(std::stoll(e.id));
      EXPECT_EQ(e.data["seq"].get<int64_t>(), std::stoll(e.id));
      texts.insert(e.data["message"]["parts"][0]["text"].get<std::string>());
      last = std::stoll(e.id);
      // Hang up after a few events, mid-stream, as a flaky network would.
      return ++this_time < 7 && last < kTotal;
    });
    auto c = server.Client();
    auto r = c->Get("/v1/sessions/live/events", StreamHeaders(last),
                    [&](const char* data, size_t size) { return parser.Feed(data, size); });
    if (r && r->status == 503) {
      // Every --max-streams place is still held by a stream whose client hung
      // up and that the server has not woken to notice yet (within poll_ms,
      // sooner when an append wakes it; slow under a sanitizer): a client
      // waits and tries again, as the 503 asks. Not a connection that counts.
      --connections;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(connections, 10);
  ASSERT_EQ(seqs.size(), static_cast<size_t>(kTotal));
  for (int i = 0; i < kTotal; ++i) EXPECT_EQ(seqs[i], i + 1);
  EXPECT_EQ(texts.size(), static_cast<size_t>(kTotal));
}

TEST(EventStream, SinceStartsAfterTheGivenSeqAndDraftsArriveWithoutIds) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  auto c = server.Client();
  c->Post("/v1/sessions", R"({"id":"s"})", "application/json");
  for (int i = 1; i <= 3; ++i)
    c->Post("/v1/sessions/s/messages", TextMessage("m" + std::to_string(i)).dump(),
            "application/json");

  std::mutex mu;
  std::vector<SseEvent> got;
  std::atomic<bool> connected{false};
  bool message_arrived = false, draft_finished = false;  // the reader's
  std::thread reader([&] {
    SseParser parser([&](const SseEvent& e) {
      std::lock_guard lock(mu);
      got.push_back(e);
      connected = true;
      message_arrived = message_arrived || (e.event == "message" && e.id == "4");
      draft_finished = draft_finished || (e.event == "draft" && e.data["done"] == true);
      return !(message_arrived && draft_finished);
    });
    server.Client()->Get("/v1/sessions/s/events?since=2", {{"Accept", "text/event-stream"}},
                         [&](const char* d, size_t n) { return parser.Feed(d, n); });
  });
  while (!connected) std::this_thread::sleep_for(std::chrono::milliseconds(10));  // seq 3 arrived
  const std::string draft = Body(c->Post("/v1/sessions/s/drafts", "{}", "application/json"))["id"];
  c->Post("/v1/drafts/" + draft + "/delta", R"({"text":"Hel"})", "application/json");
  c->Post("/v1/drafts/" + draft + "/delta", R"({"text":"lo"})", "application/json");
  ASSERT_EQ(c->Post("/v1/drafts/" + draft + "/finish", "{}", "application/json")->status, 201);
  reader.join();

  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(got.front().id, "3");  // since=2: seq 3 first
  EXPECT_EQ(got.front().data["message"]["parts"][0]["text"], "m3");
  std::vector<std::string> draft_texts;
  for (const SseEvent& e : got) {
    if (e.event != "draft") continue;
    EXPECT_TRUE(e.id.empty());
    EXPECT_EQ(e.data["draft_id"], draft);
    draft_texts.push_back(e.data["text"]);
  }
  ASSERT_GE(draft_texts.size(), 3u);  // Hel, Hello, and the finished one
  EXPECT_EQ(draft_texts[0], "Hel");
  EXPECT_EQ(draft_texts.back(), "Hello");
  // The message and the draft's last event both arrive, in either order.
  json last_draft;
  bool message_seen = false;
  for (const SseEvent& e : got) {
    if (e.event == "draft") last_draft = e.data;
    if (e.event == "message" && e.id == "4") {
      message_seen = true;
      EXPECT_EQ(e.data["message"]["parts"][0]["text"], "Hello");
    }
  }
  EXPECT_TRUE(message_seen);
  EXPECT_EQ(last_draft["done"], true);
  EXPECT_EQ(last_draft["discarded"], false);
  EXPECT_EQ(last_draft["seq"], 4);
}

TEST(EventStream, AppendsByAnotherProcessArrive) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  server.Client()->Post("/v1/sessions", R"({"id":"shared"})", "application/json");
  std::atomic<bool> connected{false};
  std::string text;
  std::thread reader([&] {
    SseParser parser([&](const SseEvent& e) {
      text = e.data["message"]["parts"][0]["text"];
      return false;
    });
    auto c = server.Client();
    connected = true;
    c->Get("/v1/sessions/shared/events", {{"Accept", "text/event-stream"}},
           [&](const char* d, size_t n) { return parser.Feed(d, n); });
  });
  while (!connected) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  {
    auto store = Store::Open(dir.Sub("store"));
    ASSERT_TRUE(store);
    Message m;
    m.parts = {Part::Text("written by the CLI")};
    ASSERT_TRUE((*store)->Append("shared", m));
  }
  reader.join();
  EXPECT_EQ(text, "written by the CLI");
}

TEST(EventStream, TooManyStreamsAre503AndAMissingSessionIs404) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {"--max-streams", "1"});
  ASSERT_TRUE(server.listening()) << server.log();
  server.Client()->Post("/v1/sessions", R"({"id":"s"})", "application/json");
  server.Client()->Post("/v1/sessions/s/messages", TextMessage("one").dump(), "application/json");
  std::atomic<bool> first_open{false}, release{false};
  std::thread holder([&] {
    server.Client()->Get("/v1/sessions/s/events", {{"Accept", "text/event-stream"}},
                         [&](const char*, size_t) {
                           first_open = true;
                           return !release.load();
                         });
  });
  while (!first_open) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto second = server.Client()->Get("/v1/sessions/s/events", {{"Accept", "text/event-stream"}});
  EXPECT_EQ(second->status, 503);
  EXPECT_EQ(ErrorCode(second), "busy");
  release = true;
  // Wake the holder's stream so it notices the hang-up.
  server.Client()->Post("/v1/sessions/s/messages", TextMessage("two").dump(), "application/json");
  holder.join();
  EXPECT_EQ(
      server.Client()->Get("/v1/sessions/nope/events", {{"Accept", "text/event-stream"}})->status,
      404);
  // Seqs that would overflow or go backwards are refused, not read.
  auto c = server.Client();
  EXPECT_EQ(c->Get("/v1/sessions/s/events?since=9223372036854775807")->status, 400);
  EXPECT_EQ(c->Get("/v1/sessions/s/events", {{"Last-Event-ID", "-5"}})->status, 400);
  EXPECT_EQ(c->Get("/v1/sessions/s/events", {{"Last-Event-ID", "9223372036854775807"}})->status,
            400);
  EXPECT_EQ(c->Get("/v1/sessions/s/events", {{"Last-Event-ID", "1"}})->status, 200);
}

}  // namespace
}  // namespace sessiondb::testing
