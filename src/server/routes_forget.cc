// Forgetting on purpose (docs/http-api.md, docs/retention.md): a session to
// the trash or erased at once, the trash, erasure and its check, the ledger,
// the retention policy and a run of it.
#include <string>

#include "core/json_parse.h"
#include "core/uuid.h"
#include "server/api_state.h"
#include "server/http_reply.h"

namespace sessiondb::server {

namespace {

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;
// Days beyond this reach before the epoch; the trash holds nothing that old.
constexpr int64_t kMaxDays = int64_t{1000} * 365;

// The receipt as the client gets it: ErasureReceiptToJson's text, as a value.
void ReplyReceipt(HttpResponse& res, const ErasureReceipt& receipt) {
  auto json = ParseOrderedJson(ErasureReceiptToJson(receipt));
  if (!json) return ReplyError(res, json.error());
  ReplyJson(res, 200, *json);
}

void DeleteSession(ApiState& api, const std::string& id, const HttpRequest& req,
                   HttpResponse& res) {
  auto erase = BoolParam(req, "erase");
  if (!erase) return ReplyError(res, erase.error());
  if (*erase) {
    auto receipt = api.store.Erase({.session_ids = {id}, .reason = "DELETE /v1/sessions"});
    if (!receipt) return ReplyError(res, receipt.error());
    for (const std::string& gone : receipt->sessions) api.hub.NotifySessionChanged(gone);
    return ReplyReceipt(res, *receipt);
  }
  if (Status s = api.store.TrashSession(id); !s.ok()) return ReplyError(res, s);
  api.hub.NotifySessionChanged(id);
  ReplyJson(res, 200, {{"trashed", id}});
}

void ListTrash(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto limit = IntParam(req, "limit", 50, 1, 1000);
  if (!limit) return ReplyError(res, limit.error());
  auto page = api.store.ListSessions(
      {.limit = static_cast<int>(*limit), .cursor = Param(req, "cursor"), .trash = true});
  if (!page) return ReplyError(res, page.error());
  Json sessions = Json::array();
  for (const Session& s : page->sessions) sessions.push_back(TrashedSessionToJson(s));
  ReplyJson(res, 200, {{"sessions", std::move(sessions)}, {"next_cursor", page->next_cursor}});
}

// The id of a session in the trash, or 404.
bool InTrash(ApiState& api, const std::string& id, HttpResponse& res) {
  ListOptions o{.limit = 1000, .trash = true};
  while (true) {
    auto page = api.store.ListSessions(o);
    if (!page) {
      ReplyError(res, page.error());
      return false;
    }
    for (const Session& s : page->sessions) {
      if (s.id == id) return true;
    }
    if (page->next_cursor.empty()) break;
    o.cursor = page->next_cursor;
  }
  ReplyError(res, Status::NotFound("session " + id + " is not in the trash"));
  return false;
}

void EmptyTrash(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  for (const auto& item : body->items()) {
    if (item.key() != "older_than_days") {
      return ReplyError(res, Status::InvalidArgument("unknown member \"" + item.key() +
                                                     "\"; the body takes \"older_than_days\""));
    }
  }
  int64_t days = 0;
  if (auto given = body->find("older_than_days"); given != body->end()) {
    if (!given->is_number_integer() || given->get<int64_t>() < 0 ||
        given->get<int64_t>() > kMaxDays) {
      return ReplyError(res, Status::InvalidArgument("\"older_than_days\" must be a whole number "
                                                     "from 0 to " +
                                                     std::to_string(kMaxDays)));
    }
    days = given->get<int64_t>();
  } else {
    auto policy = api.store.GetRetentionPolicy();
    if (!policy) return ReplyError(res, policy.error());
    days = policy->trash_grace_days;
  }
  // 0 days: everything in the trash, what went there this millisecond too.
  const int64_t now = SystemNowMs();
  auto receipt = api.store.EmptyTrash(days == 0 ? now + 1 : now - days * kDayMs);
  if (!receipt) return ReplyError(res, receipt.error());
  ReplyReceipt(res, *receipt);
}

void EraseRoute(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  auto request = EraseRequestFromJson(*body);
  if (!request) return ReplyError(res, request.error());
  auto receipt = api.store.Erase(*request);
  if (!receipt) return ReplyError(res, receipt.error());
  for (const std::string& gone : receipt->sessions) api.hub.NotifySessionChanged(gone);
  for (const MessageRef& m : receipt->messages) api.hub.NotifySessionChanged(m.session_id);
  ReplyReceipt(res, *receipt);
}

void VerifyRoute(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto receipt = ParseErasureReceipt(req.body);
  if (!receipt) return ReplyError(res, receipt.error());
  auto check = api.store.VerifyErased(*receipt);
  if (!check) return ReplyError(res, check.error());
  ReplyJson(res, 200, ToJson(*check));
}

void ReadLedger(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto limit = IntParam(req, "limit", 100, 1, 1000);
  if (!limit) return ReplyError(res, limit.error());
  auto before = IntParam(req, "before_id", 0, 0, INT64_MAX);
  if (!before) return ReplyError(res, before.error());
  auto entries = api.store.ReadLedger({.limit = *limit, .before_id = *before});
  if (!entries) return ReplyError(res, entries.error());
  Json list = Json::array();
  for (const LedgerEntry& e : *entries) list.push_back(ToJson(e));
  ReplyJson(res, 200, {{"entries", std::move(list)}});
}

void PutRetention(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  auto policy = RetentionPolicyFromJson(*body);
  if (!policy) return ReplyError(res, policy.error());
  if (Status s = api.store.SetRetentionPolicy(*policy); !s.ok()) return ReplyError(res, s);
  auto stored = api.store.GetRetentionPolicy();
  if (!stored) return ReplyError(res, stored.error());
  ReplyJson(res, 200, ToJson(*stored));
}

void RunRetention(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  bool dry_run = true;
  for (const auto& item : body->items()) {
    if (item.key() != "dry_run") {
      return ReplyError(res, Status::InvalidArgument("unknown member \"" + item.key() +
                                                     "\"; the body takes \"dry_run\""));
    }
    if (!item.value().is_boolean()) {
      return ReplyError(res, Status::InvalidArgument("\"dry_run\" must be true or false"));
    }
    dry_run = item.value().get<bool>();
  }
  auto run = api.store.ApplyRetention(dry_run);
  if (!run) return ReplyError(res, run.error());
  if (!dry_run) {
    for (const auto* ids : {&run->archived, &run->trashed, &run->erased}) {
      for (const std::string& id : *ids) api.hub.NotifySessionChanged(id);
    }
  }
  ReplyJson(res, 200, ToJson(*run));
}

}  // namespace

void AddForgetRoutes(Router& router, ApiState& api) {
  router.Add("DELETE", R"(/v1/sessions/([^/]+))",
             [&api](auto& req, auto& res, auto& path) { DeleteSession(api, path[0], req, res); });
  router.Add("GET", "/v1/trash", [&api](auto& req, auto& res, auto&) { ListTrash(api, req, res); });
  router.Add("POST", "/v1/trash/empty",
             [&api](auto& req, auto& res, auto&) { EmptyTrash(api, req, res); });
  router.Add("POST", R"(/v1/trash/([^/]+)/restore)", [&api](auto&, auto& res, auto& path) {
    auto session = api.store.RestoreFromTrash(path[0]);
    if (!session) return ReplyError(res, session.error());
    api.hub.NotifySessionChanged(path[0]);
    ReplyJson(res, 200, ToJson(*session));
  });
  router.Add("DELETE", R"(/v1/trash/([^/]+))", [&api](auto&, auto& res, auto& path) {
    if (!InTrash(api, path[0], res)) return;
    auto receipt = api.store.Erase({.session_ids = {path[0]}, .reason = "DELETE /v1/trash"});
    if (!receipt) return ReplyError(res, receipt.error());
    ReplyReceipt(res, *receipt);
  });
  router.Add("POST", "/v1/erase",
             [&api](auto& req, auto& res, auto&) { EraseRoute(api, req, res); });
  router.Add("POST", "/v1/erase/verify",
             [&api](auto& req, auto& res, auto&) { VerifyRoute(api, req, res); });
  router.Add("GET", "/v1/ledger",
             [&api](auto& req, auto& res, auto&) { ReadLedger(api, req, res); });
  router.Add("GET", "/v1/retention", [&api](auto&, auto& res, auto&) {
    auto policy = api.store.GetRetentionPolicy();
    if (!policy) return ReplyError(res, policy.error());
    ReplyJson(res, 200, ToJson(*policy));
  });
  router.Add("PUT", "/v1/retention",
             [&api](auto& req, auto& res, auto&) { PutRetention(api, req, res); });
  router.Add("POST", "/v1/retention/run",
             [&api](auto& req, auto& res, auto&) { RunRetention(api, req, res); });
}

}  // namespace sessiondb::server
