// GET /v1/search never waits for a writer. Found from outside (issue 33):
// while another process held the store's write lock, /v1/search took 62 s
// (one handler held throughout), then answered 0 hits with an empty note.
// It answers at once as of the index, says what it did not see, the server
// goes on serving others, and a search after the lock is free finds it.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "held_write_lock.h"
#include "server_fixture.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

TEST(SearchBesideWriterHttp, SearchAnswersAtOnceWhileAnotherProcessHoldsTheWriteLock) {
  TempDir tmp;
  const std::string dir = tmp.Sub("store");
  {
    auto store = Store::Open(dir);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s1"}));
    Message m;
    m.parts = {Part::Text("the first quokka")};
    ASSERT_TRUE((*store)->Append("s1", m));
  }  // indexed as it closes
  ServerProcess server(dir, {"--no-embed"});
  ASSERT_TRUE(server.listening()) << server.log();
  auto client = server.Client();

  HeldWriteLock writer(dir, "s1", "the second quokka");
  ASSERT_TRUE(writer.holding());
  const auto start = std::chrono::steady_clock::now();
  auto r = client->Get("/v1/search?q=quokka&mode=keyword");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = Body(r);
  ASSERT_EQ(j["hits"].size(), 1u) << r->body;
  EXPECT_EQ(j["pending_documents"], 1);
  const std::string note = j["note"].get<std::string>();
  EXPECT_NE(note.find("1 document not yet indexed"), std::string::npos) << note;
  EXPECT_NE(note.find("write lock"), std::string::npos) << note;
  // The server goes on serving others meanwhile.
  auto sessions = client->Get("/v1/sessions");
  ASSERT_TRUE(sessions);
  EXPECT_EQ(sessions->status, 200);

  EXPECT_EQ(writer.Release(), 0);
  // The server's own indexer, which waited for the lock, may be catching up
  // at this moment (then a search answers as of the index again): a few
  // tries, well within the bound.
  json a;
  for (int i = 0; i < 50; ++i) {
    auto after = client->Get("/v1/search?q=quokka&mode=keyword");
    ASSERT_TRUE(after);
    a = Body(after);
    if (a["hits"].size() == 2u) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(a["hits"].size(), 2u) << a.dump();
  EXPECT_EQ(a["pending_documents"], 0);
}

}  // namespace
}  // namespace sessiondb::testing
