// ImportPath and ExportTo: pick the format, run it, report.
#include <array>
#include <filesystem>
#include <memory>
#include <utility>

#include "core/enum_names.h"
#include "interop/export_manifest.h"
#include "interop/formats.h"
#include "interop/read_confinement.h"
#include "sessiondb/interop.h"

namespace sessiondb {
namespace {

namespace fs = std::filesystem;
using interop::ExportRegistry;
using interop::ImportRegistry;

constexpr std::array<std::pair<ImportFormat, std::string_view>, 9> kImportFormats{{
    {ImportFormat::kSnapshot, "snapshot"},
    {ImportFormat::kAcdc, "ac-dc"},
    {ImportFormat::kExtremis, "extremis"},
    {ImportFormat::kAgentsKt, "agents-kt"},
    {ImportFormat::kPixir, "pixir"},
    {ImportFormat::kClaudeCode, "claude-code"},
    {ImportFormat::kCodex, "codex"},
    {ImportFormat::kChatGpt, "chatgpt"},
    {ImportFormat::kClaudeAi, "claude-ai"},
}};

constexpr std::array<std::pair<ExportFormat, std::string_view>, 5> kExportFormats{{
    {ExportFormat::kSnapshot, "snapshot"},
    {ExportFormat::kAcdc, "ac-dc"},
    {ExportFormat::kAgentsKt, "agents-kt"},
    {ExportFormat::kMarkdown, "markdown"},
    {ExportFormat::kJsonl, "jsonl"},
}};

std::string Names(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace

std::string_view ImportFormatName(ImportFormat format) { return NameOf(format, kImportFormats); }
Result<ImportFormat> ParseImportFormat(std::string_view name) {
  return ParseName(name, kImportFormats, "import format");
}
std::string_view ExportFormatName(ExportFormat format) { return NameOf(format, kExportFormats); }
Result<ExportFormat> ParseExportFormat(std::string_view name) {
  return ParseName(name, kExportFormats, "export format");
}

std::vector<std::string_view> ImportFormats() {
  std::vector<std::string_view> out;
  out.reserve(std::size(kImportFormats));
  for (const auto& [format, name] : kImportFormats) out.push_back(name);
  return out;
}

std::vector<std::string_view> ExportFormats() {
  std::vector<std::string_view> out;
  out.reserve(std::size(kExportFormats));
  for (const auto& [format, name] : kExportFormats) out.push_back(name);
  return out;
}

Result<ImportFormat> DetectImportFormat(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Err(Status::NotFound("nothing at " + path + " to import"));
  int best = 0;
  ImportFormat found = ImportFormat::kSnapshot;
  for (const auto& f : ImportRegistry()) {
    const int score = f.detect(path);
    if (score > best) {
      best = score;
      found = f.format;
    }
  }
  if (best == 0) {
    return Err(Status::InvalidArgument(path + " is not in a format sessiondb recognises (tried " +
                                       Names(ImportFormats()) + "); name it with --format"));
  }
  return found;
}

Result<ImportReport> ImportPath(Store& store, const std::string& path,
                                const ImportOptions& options) {
  // Detection peeks at files too: confined from the first read on.
  interop::ReadConfinement confinement(options.allowed_roots);
  if (!interop::MayRead(path)) {
    return Err(Status::InvalidArgument(interop::OutsideReason(path)));
  }
  ImportFormat format;
  if (!options.format) {
    ASSIGN_OR_RETURN(format, DetectImportFormat(path));
  } else {
    format = *options.format;
    std::error_code ec;
    if (!fs::exists(path, ec)) return Err(Status::NotFound("nothing at " + path + " to import"));
  }
  if (options.max_attachment_bytes <= 0) {
    return Err(Status::InvalidArgument("max_attachment_bytes is " +
                                       std::to_string(options.max_attachment_bytes) +
                                       "; it must be at least 1 byte"));
  }
  for (const auto& f : ImportRegistry()) {
    if (f.format != format) continue;
    ImportReport report;
    report.format = format;
    interop::ImportSink sink(store, &report, options.progress, {}, options.max_attachment_bytes);
    RETURN_IF_ERROR(f.run(path, sink));
    RETURN_IF_ERROR(sink.Finish());
    // A source in which the importer found nothing at all (no session, not
    // even one already here, no record it could not use) is in a shape it
    // does not know: said, rather than "0 added, 0 skipped".
    if (report.sessions_added == 0 && report.sessions_extended == 0 &&
        report.sessions_unchanged == 0 && report.records_skipped == 0 &&
        report.attachments_not_stored == 0 && report.files_skipped.empty()) {
      sink.Skip(path, "nothing here is a " + std::string(ImportFormatName(format)) +
                          " session or record sessiondb can read (an empty export, or a file "
                          "in another shape: name its format with --format); nothing was "
                          "imported");
    }
    return report;
  }
  return Err(Status::Internal("import format '" + std::string(ImportFormatName(format)) +
                              "' is not in the registry"));
}

Result<ExportReport> ExportTo(Store& store, const std::string& out, const ExportOptions& options) {
  const interop::ExportFormatSpec* spec = nullptr;
  for (const auto& f : ExportRegistry()) {
    if (f.format == options.format) spec = &f;
  }
  if (!spec) {
    return Err(Status::Internal("export format '" + std::string(ExportFormatName(options.format)) +
                                "' is not in the registry"));
  }
  std::vector<Session> sessions;
  if (options.sessions.empty()) {
    ListOptions list{.limit = 1000, .archived = ArchiveFilter::kAll};
    while (true) {
      ASSIGN_OR_RETURN(SessionPage page, store.ListSessions(list));
      for (Session& s : page.sessions) sessions.push_back(std::move(s));
      if (page.next_cursor.empty()) break;
      list.cursor = page.next_cursor;
    }
  } else {
    for (const std::string& id : options.sessions) {
      ASSIGN_OR_RETURN(Session s, store.GetSession(id));
      sessions.push_back(std::move(s));
    }
  }
  ExportReport report;
  if (options.file_system == nullptr) {
    return Err(Status::InvalidArgument("ExportOptions::file_system is null"));
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<interop::ExportFileSystem> files,
      interop::ExportFileSystem::Open(*options.file_system, interop::ManifestPathFor(out),
                                      options.replace_earlier_export));
  const Status written = spec->run(store, sessions, out, *files, &report);
  // A failed export to a place with a manifest still updates it, so that
  // the manifest never names bytes that are no longer there; a failed first
  // export leaves none (its files are not listed, and --force leaves them).
  if (!written.ok()) {
    if (files->had_manifest()) (void)files->SaveManifest();  // the run's error is the news
    return Err(written);
  }
  RETURN_IF_ERROR(files->SaveManifest());
  return report;
}

}  // namespace sessiondb
