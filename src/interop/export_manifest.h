// ExportManifest: what an export wrote, so that a later export may replace
// it (ExportOptions::replace_earlier_export, `sessiondb export --force`) and
// still never anything else. Every export to DIR/NAME (a file or a folder)
// leaves a manifest beside it, DIR/.NAME.sessiondb-export.json, listing the
// files it wrote with their SHA-256. Beside, not inside: an export folder is
// read back by other programs (ac-dc, Agents.KT's FileSnapshotStore, our own
// importers) that should find only what they wrote there. A file in
// an export's way is replaced only when a manifest lists it and its bytes
// still hash as they did when written: a file the export never wrote, or one
// edited since, is refused. See docs/interop.md, "Writing over an earlier
// export".
//
// ExportFileSystem is the FileSystem every export writes through: it hashes
// what passes, records each file renamed into place, and answers
// MayReplace for OutputFile::Open.
//
// Example:
//   ASSIGN_OR_RETURN(auto files, ExportFileSystem::Open(base, manifest, replace));
//   RETURN_IF_ERROR(run(store, sessions, out, *files, &report));
//   RETURN_IF_ERROR(files->SaveManifest());
//
// Thread-safety: one export at a time per instance.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "sessiondb/file_system.h"
#include "sessiondb/status.h"

namespace sessiondb::interop {

// Where the manifest of an export to `out` (a file or a folder) goes.
std::filesystem::path ManifestPathFor(const std::filesystem::path& out);

// Whether a file in an export's way may be replaced.
enum class InTheWay {
  kForeign,        // no manifest lists it with these bytes: never replaced
  kEarlierExport,  // an earlier export wrote it and it is unchanged
};

class ExportFileSystem : public FileSystem {
 public:
  // Reads the manifest at `manifest` (none yet is fine). kAlreadyExists when
  // something else has its name; kCorruption when it cannot be read as one.
  // `replace`: files of an earlier export may be replaced.
  static Result<std::unique_ptr<ExportFileSystem>> Open(FileSystem& base,
                                                        std::filesystem::path manifest,
                                                        bool replace);

  // What the file at `path` is to this export (it exists).
  InTheWay Classify(const std::filesystem::path& path) const;
  // True if the export may rename a new file over `path`: the manifest itself,
  // or with `replace` a file of an earlier export.
  bool MayReplace(const std::filesystem::path& path) const;
  bool replacing() const { return replace_; }
  // True if a manifest of an earlier export was read.
  bool had_manifest() const { return had_manifest_; }

  // Writes the manifest: the earlier one's files still on disk and unchanged,
  // and every file this export put in place.
  Status SaveManifest();

  Result<std::unique_ptr<WritableFile>> Create(const std::string& path, bool exclusive,
                                               int mode) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status Remove(const std::string& path) override { return base_.Remove(path); }
  Status CreateDirectory(const std::string& path, int mode) override {
    return base_.CreateDirectory(path, mode);
  }
  Status SyncDirectory(const std::string& path) override { return base_.SyncDirectory(path); }

 private:
  ExportFileSystem(FileSystem& base, std::filesystem::path manifest, bool replace)
      : base_(base), manifest_(std::move(manifest)), replace_(replace) {}
  std::string Key(const std::filesystem::path& path) const;  // relative to the manifest's folder

  FileSystem& base_;
  std::filesystem::path manifest_;
  bool replace_;
  bool had_manifest_ = false;
  std::map<std::string, std::string> earlier_;  // file -> sha256, as the manifest says
  std::map<std::string, std::string> written_;  // file -> sha256, put in place by this export
  std::map<std::string, std::string> pending_;  // temporary file -> sha256 of what it holds
};

// The ExportFileSystem `fs` is, or nullptr (an export run outside ExportTo).
const ExportFileSystem* AsExportFileSystem(const FileSystem& fs);

}  // namespace sessiondb::interop
