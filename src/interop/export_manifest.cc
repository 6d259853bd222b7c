#include "interop/export_manifest.h"

#include <openssl/evp.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "core/json_access.h"
#include "core/json_parse.h"
#include "interop/output_file.h"

namespace sessiondb::interop {
namespace {

// A manifest lists each file an export wrote with its SHA-256 (~100 bytes a
// file): 64 MiB is more than the largest export's and bounds what is read.
constexpr uintmax_t kMaxManifestBytes = uintmax_t{64} << 20;

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kManifestName[] = ".sessiondb-export.json";  // after ".NAME"
constexpr char kManifestMarker[] = "sessiondb_export_manifest";
constexpr int kManifestVersion = 1;

// SHA-256 fed piece by piece (files can be larger than memory should hold).
class Sha256Stream {
 public:
  Sha256Stream() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Sha256Stream() { EVP_MD_CTX_free(ctx_); }
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void Update(std::string_view bytes) { EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()); }
  std::string HexDigest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(ctx_, digest, &size);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < size; ++i) {
      hex += kHex[digest[i] >> 4];
      hex += kHex[digest[i] & 0xF];
    }
    return hex;
  }

 private:
  EVP_MD_CTX* ctx_;
};

// `path` absolute and normal, so that "md/a.md" and "/home/me/md/a.md" are
// one file to the manifest.
fs::path Absolute(const fs::path& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return (ec ? path : absolute).lexically_normal();
}

// The SHA-256 of the file at `path`; empty if it cannot be read.
std::string HashOfFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Sha256Stream hash;
  char buf[64 * 1024];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    hash.Update(std::string_view(buf, static_cast<size_t>(in.gcount())));
  }
  return in.bad() ? "" : hash.HexDigest();
}

// A file being written: hashes what passes and hands the digest over on Close.
class HashingFile : public WritableFile {
 public:
  HashingFile(std::unique_ptr<WritableFile> file, std::string* digest)
      : file_(std::move(file)), digest_(digest) {}
  Status Append(std::string_view bytes) override {
    RETURN_IF_ERROR(file_->Append(bytes));
    hash_.Update(bytes);
    return Status::Ok();
  }
  Status Sync() override { return file_->Sync(); }
  Status Close() override {
    RETURN_IF_ERROR(file_->Close());
    *digest_ = hash_.HexDigest();
    return Status::Ok();
  }

 private:
  std::unique_ptr<WritableFile> file_;
  std::string* digest_;
  Sha256Stream hash_;
};

}  // namespace

fs::path ManifestPathFor(const fs::path& out) {
  // "md/", "." and "a/../md" name the folder they end in.
  fs::path named = Absolute(out);
  if (!named.has_filename()) named = named.parent_path();
  if (!named.has_filename()) return named / kManifestName;  // the root itself
  return named.parent_path() / ("." + named.filename().string() + kManifestName);
}

Result<std::unique_ptr<ExportFileSystem>> ExportFileSystem::Open(FileSystem& base,
                                                                 fs::path manifest, bool replace) {
  manifest = Absolute(manifest);
  std::unique_ptr<ExportFileSystem> files(new ExportFileSystem(base, manifest, replace));
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return files;
  // A manifest is a file anyone could have written: read within a cap, and
  // parsed by ParseJson, which caps nesting.
  const uintmax_t size = fs::file_size(manifest, ec);
  if (ec || size > kMaxManifestBytes) {
    return Err(Status::AlreadyExists(manifest.string() +
                                     (ec ? " cannot be read" : " is larger than any manifest") +
                                     "; exports never overwrite what they did not write"));
  }
  std::string text(static_cast<size_t>(size), '\0');
  {
    std::ifstream in(manifest, std::ios::binary);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
  }
  const json doc = ParseJson(text).value_or(json());
  if (!doc.is_object() || !doc.contains(kManifestMarker)) {
    return Err(Status::AlreadyExists(manifest.string() +
                                     " exists and is not a sessiondb export manifest; exports "
                                     "never overwrite what they did not write"));
  }
  const json& listed = MemberOf(doc, "files");
  if (doc[kManifestMarker] != kManifestVersion || !listed.is_object()) {
    return Err(Status::Corruption(manifest.string() + " is not a version " +
                                  std::to_string(kManifestVersion) +
                                  " export manifest this sessiondb can read"));
  }
  files->had_manifest_ = true;
  for (const auto& [name, sha256] : listed.items()) {
    // Only what lies under the manifest's folder: a manifest is a file
    // anyone could have written, and it must not lend us other paths.
    const fs::path relative(name);
    const bool inside = !relative.empty() && relative.is_relative() &&
                        relative.lexically_normal().string().rfind("..", 0) != 0;
    if (sha256.is_string() && inside) files->earlier_[name] = sha256.get<std::string>();
  }
  return files;
}

std::string ExportFileSystem::Key(const fs::path& path) const {
  return Absolute(path).lexically_relative(manifest_.parent_path()).generic_string();
}

InTheWay ExportFileSystem::Classify(const fs::path& path) const {
  const std::string key = Key(path);
  std::string recorded;
  if (const auto it = written_.find(key); it != written_.end()) {
    recorded = it->second;
  } else if (const auto earlier = earlier_.find(key); earlier != earlier_.end()) {
    recorded = earlier->second;
  }
  if (recorded.empty()) return InTheWay::kForeign;
  return HashOfFile(path) == recorded ? InTheWay::kEarlierExport : InTheWay::kForeign;
}

bool ExportFileSystem::MayReplace(const fs::path& path) const {
  if (Absolute(path) == manifest_) return true;
  return replace_ && Classify(path) == InTheWay::kEarlierExport;
}

Result<std::unique_ptr<WritableFile>> ExportFileSystem::Create(const std::string& path,
                                                               bool exclusive, int mode) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, base_.Create(path, exclusive, mode));
  return std::unique_ptr<WritableFile>(new HashingFile(std::move(file), &pending_[path]));
}

Status ExportFileSystem::Rename(const std::string& from, const std::string& to) {
  RETURN_IF_ERROR(base_.Rename(from, to));
  const auto hashed = pending_.find(from);
  if (hashed != pending_.end() && Absolute(to) != manifest_) {
    written_[Key(to)] = hashed->second;
  }
  if (hashed != pending_.end()) pending_.erase(hashed);
  return Status::Ok();
}

Status ExportFileSystem::SaveManifest() {
  json listed = json::object();
  const fs::path folder = manifest_.parent_path();
  for (const auto& [name, sha256] : earlier_) {
    if (HashOfFile(folder / name) == sha256) listed[name] = sha256;  // still as written
  }
  for (const auto& [name, sha256] : written_) listed[name] = sha256;
  if (listed.empty()) return Status::Ok();
  const json doc = {{kManifestMarker, kManifestVersion},
                    {"note",
                     "files sessiondb export wrote here; `sessiondb export --force` "
                     "replaces them while they are unchanged"},
                    {"files", std::move(listed)}};
  OutputFile file(*this);
  RETURN_IF_ERROR(file.Open(manifest_));
  file.Write(doc.dump(2) + "\n");
  return file.Commit();
}

const ExportFileSystem* AsExportFileSystem(const FileSystem& fs) {
  return dynamic_cast<const ExportFileSystem*>(&fs);
}

}  // namespace sessiondb::interop
