// GET /v1/events, the session list followed live, against the real server:
// after `ready`, creates, appends (count, preview, order), renames, archiving
// and deletions arrive as `session` and `session_deleted` events, whether
// this server or another process wrote them; the stream is refused without
// its Accept header and counts against --max-streams.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "server/server_fixture.h"
#include "server/sse_parser.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kJson = "application/json";

json TextMessage(const std::string& text) {
  return {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", text}}})}};
}

// Reads /v1/events on a thread of its own, keeping every event.
class ListWatcher {
 public:
  explicit ListWatcher(const ServerProcess& server) : client_(server.Client()) {
    thread_ = std::thread([this] {
      SseParser parser([this](const SseEvent& e) {
        std::lock_guard lock(mu_);
        events_.push_back(e);
        cv_.notify_all();
        return true;
      });
      client_->Get("/v1/events", {{"Accept", "text/event-stream"}},
                   [&](const char* d, size_t n) { return parser.Feed(d, n); });
      std::lock_guard lock(mu_);
      ended_ = true;
      cv_.notify_all();
    });
  }
  ~ListWatcher() {
    client_->stop();
    thread_.join();
  }

  // The first event after those already taken that `match` accepts, waiting
  // up to 10 s; a null json when none came.
  json Next(const std::string& type, const std::function<bool(const json&)>& match) {
    std::unique_lock lock(mu_);
    json found;
    cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      for (; taken_ < events_.size(); ++taken_) {
        if (events_[taken_].event == type && match(events_[taken_].data)) {
          found = events_[taken_++].data;
          return true;
        }
      }
      return ended_;
    });
    return found;
  }
  json Next(const std::string& type) {
    return Next(type, [](const json&) { return true; });
  }

  // Any event so far, in whatever order it came, that `match` accepts,
  // waiting up to 10 s; takes nothing. For writes whose order on the stream
  // is not theirs to choose (two in the same millisecond list by id).
  json Any(const std::string& type, const std::function<bool(const json&)>& match) {
    std::unique_lock lock(mu_);
    json found;
    cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      for (const SseEvent& e : events_) {
        if (e.event == type && match(e.data)) {
          found = e.data;
          return true;
        }
      }
      return ended_;
    });
    return found;
  }

 private:
  std::unique_ptr<httplib::Client> client_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<SseEvent> events_;  // guarded by mu_
  size_t taken_ = 0;              // guarded by mu_
  bool ended_ = false;            // guarded by mu_
};

auto Id(const std::string& id) {
  return [id](const json& s) { return s.value("id", "") == id; };
}

TEST(SessionListStream, CreatesAppendsRenamesArchivesAndDeletesArriveLive) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  auto c = server.Client();
  ASSERT_EQ(c->Post("/v1/sessions", R"({"id":"before"})", kJson)->status, 201);
  ListWatcher watcher(server);
  ASSERT_TRUE(watcher.Next("ready").is_object());

  ASSERT_EQ(c->Post("/v1/sessions", R"({"id":"a"})", kJson)->status, 201);
  json created = watcher.Next("session", Id("a"));
  ASSERT_TRUE(created.is_object()) << server.log();
  EXPECT_EQ(created["message_count"], 0);

  ASSERT_EQ(
      c->Post("/v1/sessions/a/messages", TextMessage("the **first** words").dump(), kJson)->status,
      201);
  json appended = watcher.Next("session", [](const json& s) {
    return s.value("id", "") == "a" && s.value("message_count", 0) == 1;
  });
  ASSERT_TRUE(appended.is_object());
  EXPECT_EQ(appended["preview"], "the **first** words");

  ASSERT_EQ(c->Patch("/v1/sessions/a", R"({"title":"renamed"})", kJson)->status, 200);
  EXPECT_TRUE(
      watcher.Next("session", [](const json& s) { return s["title"] == "renamed"; }).is_object());
  ASSERT_EQ(c->Patch("/v1/sessions/before", R"({"archived":true})", kJson)->status, 200);
  EXPECT_TRUE(watcher
                  .Next("session",
                        [](const json& s) { return s["id"] == "before" && s["archived"] == true; })
                  .is_object());

  ASSERT_EQ(c->Delete("/v1/sessions/a")->status, 200);  // to the trash: gone from the list
  json deleted = watcher.Next("session_deleted");
  ASSERT_TRUE(deleted.is_object());
  EXPECT_EQ(deleted["id"], "a");
}

TEST(SessionListStream, WritesByAnotherProcessArrive) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  ASSERT_EQ(server.Client()->Post("/v1/sessions", R"({"id":"shared"})", kJson)->status, 201);
  ListWatcher watcher(server);
  ASSERT_TRUE(watcher.Next("ready").is_object());
  {
    auto store = Store::Open(dir.Sub("store"));
    ASSERT_TRUE(store);
    Message m;
    m.parts = {Part::Text("written by the CLI")};
    ASSERT_TRUE((*store)->Append("shared", m));
    ASSERT_TRUE((*store)->CreateSession({.id = "cli-made"}));
  }
  // The append and the new session may land in the same millisecond; the
  // list then orders them by id, so look for each in any order.
  json grown = watcher.Any(
      "session", [](const json& s) { return s["id"] == "shared" && s["message_count"] == 1; });
  ASSERT_TRUE(grown.is_object()) << server.log();
  EXPECT_EQ(grown["preview"], "written by the CLI");
  EXPECT_TRUE(watcher.Any("session", Id("cli-made")).is_object());
}

TEST(SessionListStream, NeedsItsAcceptHeaderAndCountsAgainstMaxStreams) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {"--max-streams", "1"});
  ASSERT_TRUE(server.listening()) << server.log();
  auto plain = server.Client()->Get("/v1/events");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 400);
  EXPECT_EQ(ErrorCode(plain), "invalid_argument");

  ListWatcher watcher(server);
  ASSERT_TRUE(watcher.Next("ready").is_object());
  auto second = server.Client()->Get("/v1/events", {{"Accept", "text/event-stream"}});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 503);
  EXPECT_EQ(ErrorCode(second), "busy");
}

}  // namespace
}  // namespace sessiondb::testing
