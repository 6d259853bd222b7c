// What the HTTP API tells a client when the store fails: a blob damaged on
// disk is never served under its name (500 "corruption", no ETag), and
// internal, I/O and corruption errors carry a generic message, never SQL.
#include <filesystem>
#include <fstream>
#include <string>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "server/http_reply.h"
#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

TEST(AttackErrorsTest, ABlobCorruptedOnDiskIsNotServed) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  auto c = server.Client();
  const std::string png = MakePng(16, 16, "corrupt");
  const std::string sha = blob::Sha256Hex(png);
  ASSERT_EQ(c->Post("/v1/sessions", R"({"id":"s"})", "application/json")->status, 201);
  json m = {
      {"role", "user"},
      {"parts", json::array({{{"type", "image"},
                              {"data_uri", "data:image/png;base64," + blob::Base64Encode(png)}}})}};
  ASSERT_EQ(c->Post("/v1/sessions/s/messages", m.dump(), "application/json")->status, 201);
  ASSERT_EQ(c->Get("/v1/blobs/" + sha)->body, png);

  int damaged = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir.Sub("store"))) {
    if (!entry.is_regular_file() || entry.path().string().find(sha.substr(4)) == std::string::npos)
      continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.write("XXXX", 4);
    ++damaged;
  }
  ASSERT_EQ(damaged, 1);

  auto r = c->Get("/v1/blobs/" + sha);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(ErrorCode(r), "corruption");
  EXPECT_FALSE(r->has_header("ETag"));
  EXPECT_EQ(r->get_header_value("Cache-Control").find("immutable"), std::string::npos);
  EXPECT_EQ(r->body.find("XXXX"), std::string::npos);
  EXPECT_EQ(c->Get("/v1/health")->status, 200);
}

TEST(AttackErrorsTest, InternalErrorsAnswerAGenericMessageWithoutSql) {
  const std::string sql =
      "SELECT seq, payload FROM events WHERE session_id = ?: database disk image is malformed";
  for (const Status& s : {Status::Internal(sql), Status::Io(sql), Status::Corruption(sql)}) {
    server::HttpResponse res;
    server::ReplyError(res, s);
    EXPECT_EQ(res.status, 500);
    const json body = json::parse(res.body);
    EXPECT_EQ(body["error"]["code"], StatusCodeName(s.code()));
    EXPECT_EQ(res.body.find("SELECT"), std::string::npos) << res.body;
    EXPECT_EQ(res.body.find("events"), std::string::npos) << res.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find("log"), std::string::npos);
  }
  // Errors the client can act on keep their message.
  server::HttpResponse res;
  server::ReplyError(res, Status::NotFound("no session 'x'"));
  EXPECT_EQ(res.status, 404);
  EXPECT_NE(res.body.find("no session 'x'"), std::string::npos);
}

TEST(AttackErrorsTest, AStoreDamagedUnderTheServerAnswersWithoutSql) {
  TempDir dir;
  const std::string store = dir.Sub("store");
  ServerProcess server(store, {});
  ASSERT_TRUE(server.listening()) << server.log();
  auto c = server.Client();
  ASSERT_EQ(c->Post("/v1/sessions", R"({"id":"s"})", "application/json")->status, 201);
  const json m = {{"role", "user"},
                  {"parts", json::array({{{"type", "text"}, {"text", std::string(300, 'h')}}})}};
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(c->Post("/v1/sessions/s/messages", m.dump(), "application/json")->status, 201);
  }
  // Another process writes, so the server's cached pages are stale; then
  // every page of the database and its log is damaged after its first bytes,
  // half of each 512 (an eighth let a read through once the schema grew).
  ASSERT_EQ(
      std::system(
          (std::string(SESSIONDB_CLI_PATH) + " --store " + store + " new >/dev/null").c_str()),
      0);
  for (const auto& entry : fs::directory_iterator(store)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.find(".db") == std::string::npos || name.ends_with("-shm"))
      continue;
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    const auto size = fs::file_size(entry.path());
    for (uintmax_t at = 200; at + 256 < size; at += 512) {
      f.seekp(static_cast<std::streamoff>(at));
      f.write(std::string(256, '\xff').data(), 256);
    }
  }
  for (const char* path :
       {"/v1/sessions?archived=all", "/v1/sessions/s", "/v1/stats", "/v1/sessions/s/messages"}) {
    auto r = c->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 500) << path << ": " << r->body;
    EXPECT_NE(Body(r)["error"]["message"].get<std::string>().find("log"), std::string::npos);
    for (const char* leak : {"SELECT", "FROM ", "sqlite", "malformed", "not a database"}) {
      EXPECT_EQ(r->body.find(leak), std::string::npos) << path << ": " << r->body;
    }
  }
  // The operator's log has the detail: SQLite's own words, which depend on
  // where the damage fell ("malformed", "not a database").
  const std::string log = server.log();
  EXPECT_TRUE(log.find("malformed") != std::string::npos ||
              log.find("not a database") != std::string::npos)
      << log;
  EXPECT_EQ(c->Get("/v1/health")->status, 200);
}

}  // namespace
}  // namespace sessiondb::testing
