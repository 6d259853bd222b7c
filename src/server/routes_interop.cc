// Import, export, and the store's housekeeping: health, stats, gc, verify,
// purge (docs/http-api.md, "Import and export" and "The store").
// Imports and exports go through a temporary folder: the importers and
// exporters read and write files, and a folder export is sent as a zip.
#include <zip.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "server/api_state.h"
#include "server/http_reply.h"
#include "server/path_guard.h"
#include "sessiondb/interop.h"

namespace sessiondb::server {

namespace {

namespace fs = std::filesystem;

// Export formats that are one file; the others are folders, sent zipped.
bool IsFileFormat(ExportFormat format) {
  return format == ExportFormat::kSnapshot || format == ExportFormat::kJsonl;
}

// The import format a request names; unset (detected) when it names none.
Result<std::optional<ImportFormat>> ImportFormatParam(const std::string& name) {
  if (name.empty()) return std::optional<ImportFormat>();
  ASSIGN_OR_RETURN(ImportFormat format, ParseImportFormat(name));
  return std::optional<ImportFormat>(format);
}

// The export format a request names; a snapshot when it names none.
Result<ExportFormat> ExportFormatParam(const std::string& name) {
  if (name.empty()) return ExportFormat::kSnapshot;
  return ParseExportFormat(name);
}

// Zips every file under `folder` into `zip_path`, names relative to `folder`.
Status ZipFolder(const fs::path& folder, const fs::path& zip_path) {
  int error = 0;
  zip_t* zip = zip_open(zip_path.c_str(), ZIP_CREATE | ZIP_EXCL, &error);
  if (!zip) return Status::Io("cannot create " + zip_path.string());
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string name = fs::relative(it->path(), folder).generic_string();
    zip_source_t* source = zip_source_file(zip, it->path().c_str(), 0, -1);
    if (!source || zip_file_add(zip, name.c_str(), source, ZIP_FL_ENC_UTF_8) < 0) {
      if (source) zip_source_free(source);
      zip_discard(zip);
      return Status::Io("cannot add " + name + " to the zip");
    }
  }
  if (zip_close(zip) != 0) {
    zip_discard(zip);
    return Status::Io("cannot write " + zip_path.string());
  }
  return Status::Ok();
}

// Sends the file at `path` (kept alive by `owner`) in chunks, so an export of
// the whole store is never held in memory.
void SendFile(HttpResponse& res, std::shared_ptr<TempFolder> owner, const fs::path& path,
              const std::string& type, const std::string& download_name) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return ReplyError(res, Status::Io("cannot read the export: " + ec.message()));
  auto in = std::make_shared<std::ifstream>(path, std::ios::binary);
  if (!*in) return ReplyError(res, Status::Io("cannot read the export " + path.string()));
  res.status = 200;
  res.SetHeader("Content-Disposition", "attachment; filename=\"" + download_name + "\"");
  res.SetSource(
      [in, owner = std::move(owner)](ContentSink& sink) {
        char buffer[64 * 1024];
        in->read(buffer, sizeof(buffer));
        const std::streamsize got = in->gcount();
        if (got > 0 && !sink.Write(std::string_view(buffer, static_cast<size_t>(got))))
          return false;
        if (got < static_cast<std::streamsize>(sizeof(buffer))) {
          if (in->bad()) return false;  // cut short: the client sees the length unmet
          sink.Done();
        }
        return true;
      },
      type, static_cast<int64_t>(size));
}

// Exports `sessions` (empty: all) in `format` and sends the result.
void SendExport(ApiState& api, std::vector<std::string> sessions, ExportFormat format,
                const std::string& download_stem, HttpResponse& res) {
  auto temp = std::make_shared<TempFolder>();
  if (!temp->ok()) return ReplyError(res, Status::Io("cannot create a temporary folder"));
  const bool file = IsFileFormat(format);
  const fs::path out = temp->path() / (file ? "export" : "folder");
  auto report =
      ExportTo(api.store, out.string(), {.format = format, .sessions = std::move(sessions)});
  if (!report) return ReplyError(res, report.error());
  if (file) {
    const bool jsonl = format == ExportFormat::kJsonl;
    return SendFile(res, temp, out, jsonl ? "application/jsonl" : "application/json",
                    download_stem + (jsonl ? ".jsonl" : ".json"));
  }
  const fs::path zip = temp->path() / "export.zip";
  if (Status s = ZipFolder(out, zip); !s.ok()) return ReplyError(res, s);
  SendFile(res, temp, zip, "application/zip",
           download_stem + "-" + std::string(ExportFormatName(format)) + ".zip");
}

// The name an uploaded import is saved under, which format detection reads:
// the client's name for it (a multipart field's filename, else the `filename`
// parameter; its last component), else one guessed from the bytes `b`.
std::string UploadName(const HttpRequest& req, const std::string& given, const std::string& b) {
  std::string name = fs::path(given.empty() ? Param(req, "filename") : given).filename().string();
  if (!name.empty() && name != "." && name != "..") return name;
  if (b.rfind("PK\x03\x04", 0) == 0) return "upload.zip";
  const size_t first = b.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && b[first] == '[') return "conversations.json";
  // Several JSON documents, one per line: a JSON Lines log.
  const size_t line = b.find('\n', first);
  if (line != std::string::npos && b.find_first_not_of(" \t\r\n", line) != std::string::npos &&
      b[b.find_first_not_of(" \t\r\n", line)] == '{') {
    return "upload.jsonl";
  }
  return "upload.json";
}

void Import(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  // The file is the body, or a multipart/form-data body's field "file".
  const std::string* bytes = &req.body;
  std::string given_name;
  if (req.IsMultipartFormData()) {
    auto field = req.files.find("file");
    if (field == req.files.end()) {
      return ReplyError(res, Status::InvalidArgument(
                                 "a multipart import needs the file in a form field \"file\""));
    }
    bytes = &field->second.content;
    given_name = field->second.filename;
  }
  if (bytes->empty()) {
    return ReplyError(
        res, Status::InvalidArgument("send the file to import as the request body (a snapshot, a "
                                     "conversations.json or export zip, a .jsonl log), or use "
                                     "POST /v1/import/path"));
  }
  auto format = ImportFormatParam(Param(req, "format"));
  if (!format) return ReplyError(res, format.error());
  TempFolder temp;
  if (!temp.ok()) return ReplyError(res, Status::Io("cannot create a temporary folder"));
  const fs::path file = temp.path() / UploadName(req, given_name, *bytes);
  {
    std::ofstream out(file, std::ios::binary);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    if (!out) return ReplyError(res, Status::Io("cannot save the upload"));
  }
  auto report = ImportPath(api.store, file.string(),
                           {.format = *format, .allowed_roots = {temp.path().string()}});
  if (!report) return ReplyError(res, report.error());
  api.hub.NotifySessionChanged("");  // the sessions it added or grew
  ReplyJson(res, 200, ToJson(*report));
}

void ImportPathRoute(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  auto path = StringField(*body, "path");
  auto format = StringField(*body, "format");
  if (!path) return ReplyError(res, path.error());
  if (!format) return ReplyError(res, format.error());
  auto resolved = ResolveAllowedPath(*path, api.options.allowed_dirs, /*must_exist=*/true);
  if (!resolved) return ReplyError(res, 403, "permission_denied", resolved.error());
  auto chosen = ImportFormatParam(*format);
  if (!chosen) return ReplyError(res, chosen.error());
  auto report = ImportPath(api.store, resolved->string(),
                           {.format = *chosen, .allowed_roots = api.options.allowed_dirs});
  if (!report) return ReplyError(res, report.error());
  api.hub.NotifySessionChanged("");  // the sessions it added or grew
  ReplyJson(res, 200, ToJson(*report));
}

void ExportRoute(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  std::vector<std::string> sessions;
  if (auto list = body->find("sessions"); list != body->end() && !list->is_null()) {
    if (!list->is_array()) {
      return ReplyError(res, Status::InvalidArgument("\"sessions\" must be a list of ids"));
    }
    for (const Json& id : *list) {
      if (!id.is_string())
        return ReplyError(res, Status::InvalidArgument("\"sessions\" must be a list of ids"));
      sessions.push_back(id.get<std::string>());
    }
  }
  auto format = StringField(*body, "format");
  auto out = StringField(*body, "out");
  if (!format) return ReplyError(res, format.error());
  if (!out) return ReplyError(res, out.error());
  if (out->empty()) {
    auto chosen = ExportFormatParam(*format);
    if (!chosen) return ReplyError(res, chosen.error());
    return SendExport(api, std::move(sessions), *chosen, "sessiondb-export", res);
  }
  auto resolved = ResolveAllowedPath(*out, api.options.allowed_dirs, /*must_exist=*/false);
  if (!resolved) return ReplyError(res, 403, "permission_denied", resolved.error());
  auto chosen = ExportFormatParam(*format);
  if (!chosen) return ReplyError(res, chosen.error());
  auto report =
      ExportTo(api.store, resolved->string(), {.format = *chosen, .sessions = std::move(sessions)});
  if (!report) return ReplyError(res, report.error());
  ReplyJson(res, 200,
            {{"sessions", report->sessions},
             {"messages", report->messages},
             {"images", report->images},
             {"files", report->files}});
}

}  // namespace

void AddInteropRoutes(Router& router, ApiState& api) {
  router.Add("POST", "/v1/import", [&api](auto& req, auto& res, auto&) { Import(api, req, res); });
  router.Add("POST", "/v1/import/path",
             [&api](auto& req, auto& res, auto&) { ImportPathRoute(api, req, res); });
  // The agents' history folders `serve` found, and their imports (the page's
  // offer); a request names a source by its number, never a path.
  router.Add("GET", "/v1/import/sources",
             [&api](auto&, auto& res, auto&) { ReplyJson(res, 200, api.imports.Describe()); });
  router.Add("POST", R"(/v1/import/sources/([^/]+))", [&api](auto&, auto& res, auto& path) {
    const std::string& id = path[0];
    const bool number =
        !id.empty() && id.size() <= 9 &&
        std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
    Status started = number ? api.imports.Start(static_cast<size_t>(std::stoul(id)))
                            : Status::NotFound("no history source '" + id +
                                               "'; GET /v1/import/sources lists them by number");
    if (!started.ok()) return ReplyError(res, started);
    ReplyJson(res, 202, api.imports.Describe());
  });
  router.Add("GET", R"(/v1/sessions/([^/]+)/export)", [&api](auto& req, auto& res, auto& path) {
    auto format = ExportFormatParam(Param(req, "format"));
    if (!format) return ReplyError(res, format.error());
    SendExport(api, {path[0]}, *format, path[0], res);
  });
  router.Add("POST", "/v1/export",
             [&api](auto& req, auto& res, auto&) { ExportRoute(api, req, res); });
  router.Add("GET", "/v1/health", [&api](auto&, auto& res, auto&) {
    ReplyJson(res, 200,
              {{"ok", true},
               {"version", SESSIONDB_VERSION},
               {"store", std::string(StoreKindName(StoreKindOf(api.store_path)))}});
  });
  router.Add("GET", "/v1/stats", [&api](auto&, auto& res, auto&) {
    auto stats = api.store.Stats();
    if (!stats) return ReplyError(res, stats.error());
    ReplyJson(res, 200, ToJson(*stats));
  });
  router.Add("POST", "/v1/gc", [&api](auto& req, auto& res, auto&) {
    auto dry_run = BoolParam(req, "dry_run");
    auto grace = IntParam(req, "grace_minutes", 10, 0, 525'600);
    if (!dry_run) return ReplyError(res, dry_run.error());
    if (!grace) return ReplyError(res, grace.error());
    auto report = api.store.CollectGarbage({.grace_ms = *grace * 60'000, .dry_run = *dry_run});
    if (!report) return ReplyError(res, report.error());
    ReplyJson(res, 200, ToJson(*report));
  });
  router.Add("POST", "/v1/verify", [&api](auto&, auto& res, auto&) {
    auto report = api.store.Verify();
    if (!report) return ReplyError(res, report.error());
    ReplyJson(res, 200, ToJson(*report));
  });
  router.Add("POST", "/v1/purge", [&api](auto& req, auto& res, auto&) {
    auto days = IntParam(req, "older_than_days", -1, 0, 36'500);
    if (!days) return ReplyError(res, days.error());
    if (*days < 0) {
      return ReplyError(res, Status::InvalidArgument(
                                 "give older_than_days=N: archived sessions last updated more "
                                 "than N days ago are deleted for good"));
    }
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    auto purged = api.store.PurgeArchived(now - *days * 86'400'000);
    if (!purged) return ReplyError(res, purged.error());
    api.hub.NotifySessionChanged("");
    ReplyJson(res, 200, {{"sessions_deleted", *purged}});
  });
}

}  // namespace sessiondb::server
