// A 201 from POST /v1/sessions/{id}/messages means the message is durable:
// the server killed with SIGKILL while many clients append loses none of the
// messages it acknowledged, and the log it leaves is whole (dense seqs, no
// half-written message).
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "server/server_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

TEST(HttpCrash, KilledServerLosesNoAcknowledgedAppend) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  constexpr int kClients = 16;
  for (int c = 0; c < kClients; ++c) {
    ASSERT_EQ(
        server.Client()
            ->Post("/v1/sessions", json{{"id", "s" + std::to_string(c)}}.dump(), "application/json")
            ->status,
        201);
  }

  std::mutex mu;
  std::map<std::string, std::map<int64_t, std::string>> acknowledged;  // session -> seq -> text
  std::atomic<bool> stop{false};
  std::atomic<int> total{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto http = server.Client();
      const std::string session = "s" + std::to_string(c);
      for (int i = 0; !stop; ++i) {
        const std::string text = session + " message " + std::to_string(i);
        json m = {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", text}}})}};
        auto r = http->Post("/v1/sessions/" + session + "/messages", m.dump(), "application/json");
        if (!r) return;  // the server is gone
        if (r->status != 201) continue;
        std::lock_guard lock(mu);
        acknowledged[session][Body(r)["seq"].get<int64_t>()] = text;
        ++total;
      }
    });
  }
  while (total < 400) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server.Kill();
  stop = true;
  for (std::thread& t : clients) t.join();

  auto store = Store::Open(dir.Sub("store"), {.create_if_missing = false});
  ASSERT_TRUE(store) << store.error().ToString();
  int64_t checked = 0;
  for (const auto& [session, by_seq] : acknowledged) {
    auto messages = (*store)->ReadMessages(session);
    ASSERT_TRUE(messages) << messages.error().ToString();
    for (size_t i = 0; i < messages->size(); ++i) {
      EXPECT_EQ((*messages)[i].seq, static_cast<int64_t>(i + 1)) << session;
    }
    for (const auto& [seq, text] : by_seq) {
      ASSERT_LE(seq, static_cast<int64_t>(messages->size())) << session << " lost #" << seq;
      EXPECT_EQ((*messages)[seq - 1].Text(), text);
      ++checked;
    }
  }
  EXPECT_GE(checked, 400);
}

}  // namespace
}  // namespace sessiondb::testing
