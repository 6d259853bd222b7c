// The HTTP API against the real `sessiondb serve` process on a loopback port:
// every route group, every error status, and proof that refused requests
// change nothing.
#include <filesystem>
#include <string>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "server/server_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

std::string DataUri(const std::string& png) {
  return "data:image/png;base64," + blob::Base64Encode(png);
}

json TextMessage(const std::string& text, const std::string& role = "user") {
  return {{"role", role}, {"parts", json::array({{{"type", "text"}, {"text", text}}})}};
}

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"), std::vector<std::string>{});
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
  }

  // Creates a session and returns its id.
  std::string NewSession(const json& body = json::object()) {
    auto r = client_->Post("/v1/sessions", body.dump(), "application/json");
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    return Body(r).value("id", "");
  }
  httplib::Result Append(const std::string& id, const json& message) {
    return client_->Post("/v1/sessions/" + id + "/messages", message.dump(), "application/json");
  }
  int64_t MessageCount(const std::string& id) {
    return Body(client_->Get("/v1/sessions/" + id)).value("message_count", int64_t{-1});
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpApiTest, SessionsAreCreatedListedRenamedArchivedAndDeleted) {
  const std::string id = NewSession({{"title", "First"}, {"metadata", {{"project", "/src/a"}}}});
  ASSERT_FALSE(id.empty());
  json got = Body(client_->Get("/v1/sessions/" + id));
  EXPECT_EQ(got["title"], "First");
  EXPECT_EQ(got["metadata"]["project"], "/src/a");

  auto patched = client_->Patch("/v1/sessions/" + id, R"({"title":"Renamed","archived":true})",
                                "application/json");
  ASSERT_EQ(patched->status, 200);
  EXPECT_EQ(Body(patched)["title"], "Renamed");
  EXPECT_EQ(Body(patched)["archived"], true);

  EXPECT_TRUE(Body(client_->Get("/v1/sessions"))["sessions"].empty());
  json archived = Body(client_->Get("/v1/sessions?archived=archived"));
  ASSERT_EQ(archived["sessions"].size(), 1u);
  EXPECT_EQ(archived["sessions"][0]["id"], id);
  EXPECT_TRUE(archived["next_cursor"].is_null());

  EXPECT_EQ(client_->Put("/v1/active", json{{"session_id", id}}.dump(), "application/json")->status,
            200);
  EXPECT_EQ(Body(client_->Get("/v1/active"))["session_id"], id);

  auto trashed = client_->Delete("/v1/sessions/" + id);
  EXPECT_EQ(trashed->status, 200);
  EXPECT_EQ(Body(trashed), (json{{"trashed", id}}));
  auto gone = client_->Get("/v1/sessions/" + id);
  EXPECT_EQ(gone->status, 404);
  EXPECT_EQ(ErrorCode(gone), "not_found");
}

TEST_F(HttpApiTest, SessionErrorsHaveTheirStatusAndChangeNothing) {
  NewSession({{"id", "taken"}});
  auto again = client_->Post("/v1/sessions", R"({"id":"taken"})", "application/json");
  EXPECT_EQ(again->status, 409);
  EXPECT_EQ(ErrorCode(again), "already_exists");
  auto bad_id = client_->Post("/v1/sessions", R"({"id":"../etc"})", "application/json");
  EXPECT_EQ(bad_id->status, 400);
  auto not_json = client_->Post("/v1/sessions", "{oops", "application/json");
  EXPECT_EQ(not_json->status, 400);
  EXPECT_EQ(ErrorCode(not_json), "invalid_argument");
  auto wrong_type = client_->Post("/v1/sessions", R"({"title":5})", "application/json");
  EXPECT_EQ(wrong_type->status, 400);
  auto media = client_->Post("/v1/sessions", "GIF89a", "image/gif");
  EXPECT_EQ(media->status, 415);
  EXPECT_EQ(ErrorCode(media), "unsupported_media_type");
  auto bad_limit = client_->Get("/v1/sessions?limit=0");
  EXPECT_EQ(bad_limit->status, 400);
  auto bad_patch =
      client_->Patch("/v1/sessions/taken", R"({"archived":"yes"})", "application/json");
  EXPECT_EQ(bad_patch->status, 400);
  auto method = client_->Put("/v1/sessions", "{}", "application/json");
  EXPECT_EQ(method->status, 405);
  EXPECT_EQ(ErrorCode(method), "method_not_allowed");
  EXPECT_EQ(method->get_header_value("Allow"), "GET, POST");
  auto route = client_->Get("/v1/nothing-here");
  EXPECT_EQ(route->status, 404);
  EXPECT_EQ(ErrorCode(route), "not_found");

  json list = Body(client_->Get("/v1/sessions?archived=all"));
  ASSERT_EQ(list["sessions"].size(), 1u);
  EXPECT_EQ(list["sessions"][0]["id"], "taken");
  EXPECT_EQ(list["sessions"][0]["archived"], false);
}

TEST_F(HttpApiTest, MessagesWithImagesRoundTripAndBlobsAreCacheable) {
  const std::string id = NewSession();
  const std::string png = MakePng(3, 2, "http");
  json message = TextMessage("What is in this picture?");
  message["parts"].push_back({{"type", "image"}, {"data_uri", DataUri(png)}});
  message["model"] = "gpt-test";
  message["usage"] = {{"input_tokens", 10}, {"output_tokens", 2}};
  auto appended = Append(id, message);
  ASSERT_EQ(appended->status, 201) << appended->body;
  json result = Body(appended);
  EXPECT_EQ(result["seq"], 1);
  ASSERT_EQ(result["resources"].size(), 1u);
  const std::string sha = result["resources"][0]["content_sha256"];
  EXPECT_EQ(sha, blob::Sha256Hex(png));
  EXPECT_EQ(result["resources"][0]["width"], 3);

  json read = Body(client_->Get("/v1/sessions/" + id + "/messages?data_uris=1"));
  ASSERT_EQ(read["messages"].size(), 1u);
  json m = read["messages"][0];
  EXPECT_EQ(m["parts"][0]["text"], "What is in this picture?");
  EXPECT_EQ(m["parts"][1]["data_uri"], DataUri(png));
  EXPECT_EQ(m["model"], "gpt-test");
  EXPECT_EQ(m["usage"]["input_tokens"], 10);

  auto blob = client_->Get("/v1/blobs/" + sha);
  ASSERT_EQ(blob->status, 200);
  EXPECT_EQ(blob->body, png);
  EXPECT_EQ(blob->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(blob->get_header_value("ETag"), "\"" + sha + "\"");
  EXPECT_EQ(blob->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  auto cached = client_->Get("/v1/blobs/" + sha, {{"If-None-Match", "\"" + sha + "\""}});
  EXPECT_EQ(cached->status, 304);
  EXPECT_TRUE(cached->body.empty());
  EXPECT_EQ(client_->Get("/v1/blobs/" + std::string(64, 'a'))->status, 404);

  // Several in one transaction, and the last N.
  json batch = {{"messages", {TextMessage("two"), TextMessage("three", "assistant")}}};
  auto many = Append(id, batch);
  ASSERT_EQ(many->status, 201) << many->body;
  EXPECT_EQ(Body(many)["results"][1]["seq"], 3);
  json last = Body(client_->Get("/v1/sessions/" + id + "/messages?last=2"));
  ASSERT_EQ(last["messages"].size(), 2u);
  EXPECT_EQ(last["messages"][0]["seq"], 2);
  EXPECT_EQ(last["messages"][1]["role"], "assistant");
}

TEST_F(HttpApiTest, MultipartUploadsBecomeAttachments) {
  const std::string id = NewSession();
  const std::string png = MakePng(5, 4, "multipart");
  json message = TextMessage("uploaded");
  message["parts"].push_back({{"type", "image"}, {"upload", "shot"}});
  httplib::MultipartFormDataItems items = {
      {"message", message.dump(), "", "application/json"},
      {"shot", png, "shot.png", "image/png"},
  };
  // A multipart body is one a web page can send cross-site: it needs the header.
  EXPECT_EQ(client_->Post("/v1/sessions/" + id + "/messages", items)->status, 415);
  const httplib::Headers kUpload = {{"X-Sessiondb-Request", "1"}};
  auto r = client_->Post("/v1/sessions/" + id + "/messages", kUpload, items);
  ASSERT_EQ(r->status, 201) << r->body;
  json resource = Body(r)["resources"][0];
  EXPECT_EQ(resource["content_sha256"], blob::Sha256Hex(png));
  EXPECT_EQ(resource["name"], "shot.png");
  EXPECT_EQ(client_->Get("/v1/blobs/" + resource["content_sha256"].get<std::string>())->body, png);

  // A part naming a field that was not sent: refused, nothing stored.
  json missing = TextMessage("no file");
  missing["parts"].push_back({{"type", "image"}, {"upload", "absent"}});
  httplib::MultipartFormDataItems bad = {{"message", missing.dump(), "", "application/json"}};
  auto refused = client_->Post("/v1/sessions/" + id + "/messages", kUpload, bad);
  EXPECT_EQ(refused->status, 400);
  EXPECT_NE(Body(refused)["error"]["message"].get<std::string>().find("absent"), std::string::npos);
  EXPECT_EQ(MessageCount(id), 1);
}

TEST_F(HttpApiTest, BadMessagesAreRefusedAndNothingIsWritten) {
  const std::string id = NewSession();
  ASSERT_EQ(Append(id, TextMessage("kept"))->status, 201);
  json lying = TextMessage("not an image");
  lying["parts"].push_back(
      {{"type", "image"}, {"data_uri", "data:image/png;base64," + blob::Base64Encode("not png")}});
  const std::vector<std::pair<json, std::string>> bad = {
      {lying, "image"},
      {json{{"role", "wizard"}, {"parts", json::array({{{"type", "text"}, {"text", "x"}}})}},
       "role"},
      {json{{"role", "user"}}, "parts"},
      {json{{"role", "user"}, {"parts", json::array({{{"type", "hologram"}}})}}, "parts[0]"},
      {json{{"role", "user"}, {"parts", json::array({{{"type", "image"}}})}}, "data_uri"},
      {json{{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", 5}}})}}, "text"},
      {json{{"messages", {TextMessage("ok"), json{{"role", "user"}}}}}, "messages[1]"},
  };
  for (const auto& [body, mentions] : bad) {
    auto r = Append(id, body);
    EXPECT_EQ(r->status, 400) << body.dump();
    EXPECT_EQ(ErrorCode(r), "invalid_argument");
    EXPECT_NE(Body(r)["error"]["message"].get<std::string>().find(mentions), std::string::npos)
        << Body(r).dump();
  }
  EXPECT_EQ(Append("no-such-session", TextMessage("x"))->status, 404);
  EXPECT_EQ(MessageCount(id), 1);
  json read = Body(client_->Get("/v1/sessions/" + id + "/messages"));
  ASSERT_EQ(read["messages"].size(), 1u);
  EXPECT_EQ(read["messages"][0]["parts"][0]["text"], "kept");
}

TEST_F(HttpApiTest, ForksCompactionsViewsProjectionsAndUsage) {
  const std::string id = NewSession();
  json with_image = TextMessage("look");
  with_image["parts"].push_back({{"type", "image"}, {"data_uri", DataUri(MakePng(2, 2, "view"))}});
  const std::string resource = Body(Append(id, with_image))["resources"][0]["resource_id"];
  json answer = TextMessage("a square", "assistant");
  answer["model"] = "m1";
  answer["provider"] = "openai";
  answer["usage"] = {{"input_tokens", 7}, {"output_tokens", 3}};
  Append(id, answer);
  Append(id, TextMessage("thanks"));

  auto fork = client_->Post("/v1/sessions/" + id + "/fork", R"({"at_seq":2,"title":"Alt"})",
                            "application/json");
  ASSERT_EQ(fork->status, 201) << fork->body;
  EXPECT_EQ(Body(fork)["parent_id"], id);
  EXPECT_EQ(Body(fork)["fork_seq"], 2);
  EXPECT_EQ(Body(fork)["message_count"], 2);
  EXPECT_EQ(
      client_->Post("/v1/sessions/" + id + "/fork", R"({"at_seq":99})", "application/json")->status,
      400);
  EXPECT_EQ(client_->Post("/v1/sessions/" + id + "/fork", R"({})", "application/json")->status,
            400);

  auto view =
      client_->Post("/v1/sessions/" + id + "/views",
                    json{{"resource_id", resource}, {"reason", "zoom"}}.dump(), "application/json");
  ASSERT_EQ(view->status, 201) << view->body;
  EXPECT_EQ(Body(view)["type"], "resource_view");
  EXPECT_EQ(client_
                ->Post("/v1/sessions/" + id + "/views", R"({"resource_id":"res_nope"})",
                       "application/json")
                ->status,
            404);

  auto compaction = client_->Post(
      "/v1/sessions/" + id + "/compactions",
      R"({"from_seq":1,"to_seq":2,"summary":"They looked at a square."})", "application/json");
  ASSERT_EQ(compaction->status, 201) << compaction->body;
  const int64_t compaction_seq = Body(compaction)["seq"];
  EXPECT_EQ(Body(compaction)["compaction"]["summary"], "They looked at a square.");
  EXPECT_EQ(client_
                ->Post("/v1/sessions/" + id + "/compactions", R"({"from_seq":1,"to_seq":2})",
                       "application/json")
                ->status,
            400);

  auto projection = client_->Get("/v1/sessions/" + id + "/projection?format=anthropic");
  ASSERT_EQ(projection->status, 200);
  json request = Body(projection);
  ASSERT_TRUE(request.contains("messages"));
  EXPECT_NE(request.dump().find("They looked at a square."), std::string::npos);
  EXPECT_EQ(client_->Get("/v1/sessions/" + id + "/projection?format=cobol")->status, 400);

  json usage = Body(client_->Get("/v1/sessions/" + id + "/usage"));
  EXPECT_EQ(usage["turns"], 1);
  EXPECT_EQ(usage["total"]["input_tokens"], 7);

  auto pruned = client_->Post(
      "/v1/sessions/" + id + "/compactions/" + std::to_string(compaction_seq) + "/prune", "",
      "application/json");
  ASSERT_EQ(pruned->status, 200) << pruned->body;
  EXPECT_EQ(Body(pruned)["events_pruned"], 2);
  EXPECT_EQ(
      client_->Post("/v1/sessions/" + id + "/compactions/1/prune", "", "application/json")->status,
      400);

  json events = Body(client_->Get("/v1/sessions/" + id + "/events?since=3"));
  ASSERT_EQ(events["events"].size(), 2u);
  EXPECT_EQ(events["events"][0]["seq"], 4);
  EXPECT_EQ(events["events"][1]["type"], "compaction");
}

TEST_F(HttpApiTest, DraftsStreamAndFinishIntoAMessage) {
  const std::string id = NewSession();
  auto opened =
      client_->Post("/v1/sessions/" + id + "/drafts", R"({"model":"m"})", "application/json");
  ASSERT_EQ(opened->status, 201) << opened->body;
  const std::string draft = Body(opened)["id"];
  EXPECT_EQ(client_->Post("/v1/drafts/" + draft + "/delta", R"({"text":"Hel"})", "application/json")
                ->status,
            204);
  EXPECT_EQ(client_->Post("/v1/drafts/" + draft + "/delta", R"({"text":"lo"})", "application/json")
                ->status,
            204);
  EXPECT_EQ(Body(client_->Get("/v1/sessions/" + id + "/drafts"))["drafts"].size(), 1u);
  auto finished = client_->Post("/v1/drafts/" + draft + "/finish", "{}", "application/json");
  ASSERT_EQ(finished->status, 201) << finished->body;
  json messages = Body(client_->Get("/v1/sessions/" + id + "/messages"));
  ASSERT_EQ(messages["messages"].size(), 1u);
  EXPECT_EQ(messages["messages"][0]["parts"][0]["text"], "Hello");
  EXPECT_EQ(messages["messages"][0]["model"], "m");
  EXPECT_TRUE(Body(client_->Get("/v1/sessions/" + id + "/drafts"))["drafts"].empty());
  EXPECT_EQ(
      client_->Post("/v1/drafts/" + draft + "/delta", R"({"text":"late"})", "application/json")
          ->status,
      404);
  EXPECT_EQ(client_->Post("/v1/drafts/draft_nope/finish", "{}", "application/json")->status, 404);

  const std::string discarded =
      Body(client_->Post("/v1/sessions/" + id + "/drafts", "", "application/json"))["id"];
  EXPECT_EQ(client_->Delete("/v1/drafts/" + discarded)->status, 204);
  EXPECT_TRUE(Body(client_->Get("/v1/sessions/" + id + "/drafts"))["drafts"].empty());
  EXPECT_EQ(MessageCount(id), 1);
}

TEST_F(HttpApiTest, SearchFindsWithHighlightsAndRefusesBadParameters) {
  const std::string id = NewSession();
  Append(id, TextMessage("the zanzibar configuration parser"));
  Append(id, TextMessage("nothing to see", "assistant"));
  json found = Body(client_->Get("/v1/search?q=zanzibar&mode=keyword"));
  ASSERT_EQ(found["hits"].size(), 1u) << found.dump();
  json hit = found["hits"][0];
  EXPECT_EQ(hit["session_id"], id);
  EXPECT_EQ(hit["seq"], 1);
  const std::string snippet = hit["snippet"];
  const size_t b = hit["highlights"][0][0], e = hit["highlights"][0][1];
  EXPECT_EQ(snippet.substr(b, e - b), "zanzibar");
  json hybrid = Body(client_->Get("/v1/search?q=zanzibar"));
  EXPECT_EQ(hybrid["mode"], "hybrid");
  EXPECT_EQ(hybrid["hits"][0]["seq"], 1);
  EXPECT_TRUE(
      Body(client_->Get("/v1/search?q=zanzibar&role=assistant&mode=keyword"))["hits"].empty());

  EXPECT_EQ(client_->Get("/v1/search")->status, 400);
  EXPECT_EQ(client_->Get("/v1/search?q=x&mode=psychic")->status, 400);
  EXPECT_EQ(client_->Get("/v1/search?q=x&limit=5000")->status, 400);
  EXPECT_EQ(client_->Get("/v1/search?q=x&since=yesterday")->status, 400);
  auto hostile = client_->Get("/v1/search?q=%22unbalanced%20NEAR(%20col:x%20*&mode=keyword");
  EXPECT_EQ(hostile->status, 200) << hostile->body;

  auto recall = client_->Post("/v1/memory/recall", R"({"path":"a.py","code":"def f(): pass"})",
                              "application/json");
  EXPECT_EQ(recall->status, 200);
  EXPECT_TRUE(Body(recall)["results"].is_array());
  EXPECT_EQ(client_->Post("/v1/memory/recall", R"({"code":"x"})", "application/json")->status, 400);
  EXPECT_EQ(client_->Get("/v1/memory/churn")->status, 200);
}

TEST_F(HttpApiTest, SnippetsAreTextWithoutMarkdownAndHighlightsStillFitThem) {
  const std::string id = NewSession();
  Append(
      id,
      TextMessage(
          "## Plan\nthe **zanzibar** parser, see [the zanzibar docs](https://z.example/zanzibar)"));
  json found = Body(client_->Get("/v1/search?q=zanzibar&mode=keyword"));
  ASSERT_EQ(found["hits"].size(), 1u) << found.dump();
  const json& hit = found["hits"][0];
  const std::string snippet = hit["snippet"];
  EXPECT_EQ(snippet.find_first_of("*#[]()"), std::string::npos) << snippet;
  EXPECT_EQ(snippet.find("https://"), std::string::npos) << snippet;
  ASSERT_GE(hit["highlights"].size(), 1u);
  for (const json& range : hit["highlights"]) {
    const size_t b = range[0], e = range[1];
    ASSERT_LE(e, snippet.size());
    EXPECT_EQ(snippet.substr(b, e - b), "zanzibar") << snippet;
  }
}

TEST_F(HttpApiTest, ExportThenImportIntoAnotherServerAddsOnce) {
  const std::string id = NewSession({{"title", "Exported"}});
  json with_image = TextMessage("picture");
  with_image["parts"].push_back(
      {{"type", "image"}, {"data_uri", DataUri(MakePng(4, 4, "export"))}});
  Append(id, with_image);
  Append(id, TextMessage("reply", "assistant"));

  auto snapshot = client_->Get("/v1/sessions/" + id + "/export");
  ASSERT_EQ(snapshot->status, 200) << snapshot->body;
  EXPECT_EQ(snapshot->get_header_value("Content-Type"), "application/json");
  EXPECT_NE(snapshot->get_header_value("Content-Disposition").find(id + ".json"),
            std::string::npos);
  EXPECT_FALSE(Body(snapshot).is_discarded());

  auto markdown = client_->Get("/v1/sessions/" + id + "/export?format=markdown");
  ASSERT_EQ(markdown->status, 200);
  EXPECT_EQ(markdown->get_header_value("Content-Type"), "application/zip");
  EXPECT_EQ(markdown->body.rfind("PK\x03\x04", 0), 0u);
  auto jsonl = client_->Get("/v1/sessions/" + id + "/export?format=jsonl");
  EXPECT_EQ(std::count(jsonl->body.begin(), jsonl->body.end(), '\n'), 2);
  EXPECT_EQ(client_->Get("/v1/sessions/" + id + "/export?format=pdf")->status, 400);
  EXPECT_EQ(client_->Get("/v1/sessions/nope/export")->status, 404);

  TempDir other_dir;
  ServerProcess other(other_dir.Sub("store"), {});
  ASSERT_TRUE(other.listening()) << other.log();
  auto other_client = other.Client();
  auto imported = other_client->Post("/v1/import", snapshot->body, "application/json");
  ASSERT_EQ(imported->status, 200) << imported->body;
  EXPECT_EQ(Body(imported)["format"], "snapshot");
  EXPECT_EQ(Body(imported)["sessions_added"], 1);
  EXPECT_EQ(Body(imported)["images_added"], 1);
  auto again = other_client->Post("/v1/import", snapshot->body, "application/json");
  EXPECT_EQ(Body(again)["sessions_added"], 0);
  EXPECT_EQ(Body(again)["sessions_unchanged"], 1);
  auto copy = other_client->Get("/v1/sessions/" + id + "/export");
  EXPECT_EQ(copy->body, snapshot->body);

  auto garbage = other_client->Post("/v1/import", {{"X-Sessiondb-Request", "1"}},
                                    "this is not any format", "text/plain");
  EXPECT_EQ(garbage->status, 400);
  EXPECT_EQ(Body(other_client->Get("/v1/sessions?archived=all"))["sessions"].size(), 1u);
}

TEST_F(HttpApiTest, FilePathsAreRefusedWithoutAllowedFolders) {
  const std::string id = NewSession();
  Append(id, TextMessage("x"));
  auto import = client_->Post("/v1/import/path", json{{"path", dir_.Sub("store")}}.dump(),
                              "application/json");
  EXPECT_EQ(import->status, 403);
  EXPECT_EQ(ErrorCode(import), "permission_denied");
  auto out =
      client_->Post("/v1/export", json{{"format", "markdown"}, {"out", dir_.Sub("md")}}.dump(),
                    "application/json");
  EXPECT_EQ(out->status, 403);
  EXPECT_FALSE(fs::exists(dir_.Sub("md")));
}

TEST_F(HttpApiTest, TheWebPageIsServedFromTheBinaryWithAStrictPolicy) {
  auto page = client_->Get("/");
  ASSERT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("<script type=\"module\" src=\"/app.js\">"), std::string::npos);
  const std::string policy = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(policy.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(policy.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  auto again = client_->Get("/", {{"If-None-Match", page->get_header_value("ETag")}});
  EXPECT_EQ(again->status, 304);
  for (const char* asset : {"/app.js", "/api.js", "/markdown.js", "/app.css"}) {
    auto r = client_->Get(asset);
    EXPECT_EQ(r->status, 200) << asset;
    EXPECT_FALSE(r->body.empty()) << asset;
  }
  EXPECT_EQ(client_->Get("/app.js")->get_header_value("Content-Type"),
            "text/javascript; charset=utf-8");
  auto missing = client_->Get("/nothing.js");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(ErrorCode(missing), "not_found");
  EXPECT_EQ(client_->Get("/../CMakeLists.txt")->status, 404);
}

TEST_F(HttpApiTest, HousekeepingStatsGcVerifyAndPurge) {
  const std::string kept = NewSession();
  json with_image = TextMessage("picture");
  with_image["parts"].push_back({{"type", "image"}, {"data_uri", DataUri(MakePng(2, 3, "gc"))}});
  Append(kept, with_image);
  const std::string old = NewSession();
  Append(old, TextMessage("old news"));
  client_->Patch("/v1/sessions/" + old, R"({"archived":true})", "application/json");

  json stats = Body(client_->Get("/v1/stats"));
  EXPECT_EQ(stats["sessions"], 2);
  EXPECT_EQ(stats["blobs"], 1);
  json verify = Body(client_->Post("/v1/verify", "", "application/json"));
  EXPECT_EQ(verify["clean"], true);
  EXPECT_EQ(verify["blobs_checked"], 1);
  json gc = Body(client_->Post("/v1/gc?dry_run=1", "", "application/json"));
  EXPECT_EQ(gc["blobs_deleted"], 0);  // the image is referenced

  EXPECT_EQ(client_->Post("/v1/purge", "", "application/json")->status, 400);
  EXPECT_EQ(client_->Post("/v1/purge?older_than_days=soon", "", "application/json")->status, 400);
  // Updated just now: not older than a day, so kept.
  EXPECT_EQ(Body(client_->Post("/v1/purge?older_than_days=1", "",
                               "application/json"))["sessions_deleted"],
            0);
  EXPECT_EQ(Body(client_->Post("/v1/purge?older_than_days=0", "",
                               "application/json"))["sessions_deleted"],
            1);
  EXPECT_EQ(client_->Get("/v1/sessions/" + old)->status, 404);
  EXPECT_EQ(client_->Get("/v1/sessions/" + kept)->status, 200);
}

TEST(HttpAllowedFolders, PathsInsideWorkAndEscapesAreRefused) {
  TempDir dir;
  fs::create_directories(dir.Sub("allowed/in"));
  fs::create_directories(dir.Sub("secret"));
  // A snapshot to import from inside, and one outside reachable by a link.
  {
    auto store = Store::Open(dir.Sub("source"));
    ASSERT_TRUE(store);
    auto s = (*store)->CreateSession({.id = "from-disk"});
    Message m;
    m.parts = {Part::Text("on disk")};
    ASSERT_TRUE((*store)->Append(s->id, m));
  }
  ServerProcess source(dir.Sub("source"), {});
  ASSERT_TRUE(source.listening());
  const std::string snapshot = source.Client()->Get("/v1/sessions/from-disk/export")->body;
  source.Stop();
  std::ofstream(dir.Sub("allowed/in/chat.json")) << snapshot;
  std::ofstream(dir.Sub("secret/chat.json")) << snapshot;
  fs::create_directory_symlink(dir.Sub("secret"), dir.Sub("allowed/link"));

  ServerProcess server(dir.Sub("store"), {"--allow-dir", dir.Sub("allowed")});
  ASSERT_TRUE(server.listening()) << server.log();
  auto c = server.Client();
  auto post = [&](const char* route, const json& body) {
    return c->Post(route, body.dump(), "application/json");
  };
  for (const std::string& escape :
       {dir.Sub("allowed/../secret/chat.json"), dir.Sub("allowed/link/chat.json"),
        dir.Sub("secret/chat.json"), std::string("allowed/in/chat.json")}) {
    auto r = post("/v1/import/path", {{"path", escape}});
    EXPECT_EQ(r->status, 403) << escape << ": " << r->body;
  }
  EXPECT_TRUE(Body(c->Get("/v1/sessions?archived=all"))["sessions"].empty());

  auto inside = post("/v1/import/path", {{"path", dir.Sub("allowed/in/chat.json")}});
  ASSERT_EQ(inside->status, 200) << inside->body;
  EXPECT_EQ(Body(inside)["sessions_added"], 1);

  auto out_ok = post("/v1/export", {{"format", "markdown"}, {"out", dir.Sub("allowed/md")}});
  ASSERT_EQ(out_ok->status, 200) << out_ok->body;
  EXPECT_TRUE(fs::exists(dir.Sub("allowed/md")));
  for (const std::string& escape :
       {dir.Sub("allowed/../md"), dir.Sub("allowed/link/md"), dir.Sub("allowed/new/../../md")}) {
    auto r = post("/v1/export", {{"format", "markdown"}, {"out", escape}});
    EXPECT_EQ(r->status, 403) << escape;
  }
  EXPECT_FALSE(fs::exists(dir.Sub("md")));
  EXPECT_FALSE(fs::exists(dir.Sub("secret/md")));
}

TEST(HttpAuth, TokenIsRequiredWhenSetAndForOtherAddresses) {
  TempDir dir;
  ServerProcess open_wide(dir.Sub("a"), {"--host", "0.0.0.0"});
  EXPECT_FALSE(open_wide.listening());
  EXPECT_EQ(open_wide.exit_code(), 2);
  EXPECT_NE(open_wide.log().find("without a token"), std::string::npos) << open_wide.log();

  ServerProcess server(dir.Sub("b"), {"--host", "0.0.0.0"}, {"SESSIONDB_TOKEN=s3cret-token"});
  ASSERT_TRUE(server.listening()) << server.log();
  auto anonymous = server.Client();
  auto refused = anonymous->Get("/v1/sessions");
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(ErrorCode(refused), "unauthenticated");
  EXPECT_EQ(refused->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(server.Client("s3cret-tokeN")->Get("/v1/sessions")->status, 401);
  EXPECT_EQ(server.Client("s3cret")->Get("/v1/sessions")->status, 401);
  EXPECT_EQ(anonymous->Post("/v1/sessions", R"({"id":"sneaky"})", "application/json")->status, 401);
  // The query token is only for what a browser fetches without headers:
  // the event stream, blobs and exports; never for other routes or writes.
  EXPECT_EQ(anonymous->Get("/v1/sessions?token=s3cret-token")->status, 401);
  EXPECT_EQ(anonymous->Post("/v1/sessions?token=s3cret-token", R"({"id":"q"})", "application/json")
                ->status,
            401);

  auto allowed = server.Client("s3cret-token");
  EXPECT_EQ(allowed->Post("/v1/sessions", R"({"id":"mine"})", "application/json")->status, 201);
  ASSERT_EQ(Body(allowed->Get("/v1/sessions"))["sessions"].size(), 1u);
  EXPECT_EQ(anonymous->Get("/v1/sessions/mine/events?token=s3cret-token")->status, 200);
  EXPECT_EQ(anonymous->Get("/v1/sessions/mine/events?token=wrong")->status, 401);
  const std::string png = MakePng(2, 2, "token");
  auto appended = allowed->Post(
      "/v1/sessions/mine/messages",
      json{{"role", "user"}, {"parts", {{{"type", "image"}, {"data_uri", DataUri(png)}}}}}.dump(),
      "application/json");
  ASSERT_EQ(appended->status, 201) << appended->body;
  const std::string blob =
      "/v1/blobs/" + Body(appended)["resources"][0]["content_sha256"].get<std::string>();
  EXPECT_EQ(anonymous->Get(blob)->status, 401);
  EXPECT_EQ(anonymous->Get(blob + "?token=s3cret-token")->body, png);
  EXPECT_EQ(anonymous->Get("/v1/sessions/mine/export?token=s3cret-token")->status, 200);
  EXPECT_EQ(anonymous->Get("/v1/sessions/mine/export?token=nope")->status, 401);
}

TEST(HttpLimits, BodiesOverTheCapAre413AndStoreNothing) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {"--max-body", "64KiB"});
  ASSERT_TRUE(server.listening()) << server.log();
  auto c = server.Client();
  ASSERT_EQ(c->Post("/v1/sessions", R"({"id":"s"})", "application/json")->status, 201);
  json big = TextMessage(std::string(100 * 1024, 'x'));
  auto r = c->Post("/v1/sessions/s/messages", big.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(ErrorCode(r), "payload_too_large");
  EXPECT_EQ(Body(c->Get("/v1/sessions/s"))["message_count"], 0);
  EXPECT_EQ(
      c->Post("/v1/sessions/s/messages", TextMessage("small").dump(), "application/json")->status,
      201);
}

TEST(HttpCors, OffByDefaultAndOnlyForNamedOrigins) {
  TempDir dir;
  ServerProcess closed(dir.Sub("a"), {});
  ASSERT_TRUE(closed.listening());
  auto plain = closed.Client()->Get("/v1/sessions", {{"Origin", "https://evil.example"}});
  EXPECT_FALSE(plain->has_header("Access-Control-Allow-Origin"));

  ServerProcess open(dir.Sub("b"), {"--cors-origin", "https://app.example"});
  ASSERT_TRUE(open.listening());
  auto c = open.Client();
  auto named = c->Get("/v1/sessions", {{"Origin", "https://app.example"}});
  EXPECT_EQ(named->get_header_value("Access-Control-Allow-Origin"), "https://app.example");
  auto other = c->Get("/v1/sessions", {{"Origin", "https://evil.example"}});
  EXPECT_FALSE(other->has_header("Access-Control-Allow-Origin"));
  auto preflight = c->Options("/v1/sessions", {{"Origin", "https://app.example"},
                                               {"Access-Control-Request-Method", "POST"}});
  EXPECT_EQ(preflight->status, 204);
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Headers").find("Authorization"),
            std::string::npos);
}

TEST(HttpServe, DemoSeedsOnceAndHealthSaysEmbedded) {
  TempDir dir;
  // A home with no agent history: with some, the page offers it instead.
  const std::string home = "HOME=" + dir.Sub("home");
  {
    ServerProcess server(dir.Sub("store"), {"--demo"}, {home});
    ASSERT_TRUE(server.listening()) << server.log();
    auto c = server.Client();
    json health = Body(c->Get("/v1/health"));
    EXPECT_EQ(health["ok"], true);
    EXPECT_EQ(health["store"], "embedded");
    json all = Body(c->Get("/v1/sessions?archived=all"));
    EXPECT_EQ(all["sessions"].size(), 5u);  // one of them a fork, one archived
    EXPECT_EQ(server.Stop(), 0);
  }
  ServerProcess again(dir.Sub("store"), {"--demo"}, {home});
  ASSERT_TRUE(again.listening());
  EXPECT_EQ(Body(again.Client()->Get("/v1/sessions?archived=all"))["sessions"].size(), 5u);
}

}  // namespace
}  // namespace sessiondb::testing
