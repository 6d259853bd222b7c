#include "store/store_encryption.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "core/file_io.h"
#include "core/key_file.h"
#include "store/key_envelope.h"
#include "store/store_common.h"

namespace sessiondb {
namespace store {
namespace {

namespace fs = std::filesystem;

}  // namespace

Result<std::optional<std::string>> ReadSmallFile(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Err(IoError("cannot read " + what, path));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::string text(kMaxEnvelopeBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err(IoError("cannot read " + what, path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxEnvelopeBytes) {
    return Err(
        Status::InvalidArgument(what + " " + path + " is longer than 64 KiB; it is not one"));
  }
  text.resize(got);
  return std::optional<std::string>(std::move(text));
}

namespace {

// The envelope's text; nullopt when there is none. Capped while reading.
Result<std::optional<std::string>> ReadEnvelope(const std::string& path) {
  return ReadSmallFile(path, "the key envelope");
}

// Creates `path` holding `text` only if it does not exist: written to a temp
// file, synced, then linked into place (link fails when the name is taken,
// unlike rename), so a crash or a racing creator leaves one whole envelope.
// False when another got there first.
Result<bool> CreateEnvelopeExclusively(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Err(IoError("cannot write the key envelope", tmp));
  Status wrote = WriteAll(fd, text, tmp);
  if (wrote.ok() && ::fsync(fd) != 0) wrote = IoError("cannot sync the key envelope", tmp);
  ::close(fd);
  if (!wrote.ok()) {
    ::unlink(tmp.c_str());
    return Err(wrote);
  }
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (linked != 0) {
    if (link_errno == EEXIST) return false;
    errno = link_errno;
    return Err(IoError("cannot create the key envelope", path));
  }
  RETURN_IF_ERROR(FsyncDirectory(fs::path(path).parent_path().string()));
  return true;
}

bool HasPages(const std::string& db_path) {
  struct stat st {};
  return ::stat(db_path.c_str(), &st) == 0 && st.st_size > 0;
}

std::string GiveKeyHint() {
  return "give its key with --key-file FILE or " + std::string(cipher::kKeyFileEnv) + "=FILE";
}

}  // namespace

std::string EnvelopePathFor(const std::string& db_path) { return db_path + "-key"; }

std::filesystem::path StoreFolderOf(const std::string& location) {
  std::filesystem::path path = std::filesystem::absolute(location).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  return path;
}

std::filesystem::path ConvertingFolderOf(const std::string& location) {
  return StoreFolderOf(location).string() + ".converting";
}

Result<std::optional<cipher::SecretKey>> LoadEmbeddedDataKey(const std::string& dir,
                                                             const std::string& db_path,
                                                             const StoreOptions& options,
                                                             bool may_create) {
  const std::string envelope_path = EnvelopePathFor(db_path);
  const std::string where = "the store at " + dir;
  ASSIGN_OR_RETURN(std::optional<std::string> envelope, ReadEnvelope(envelope_path));
  if (options.key_file.empty()) {
    if (envelope) {
      return Err(Status::FailedPrecondition(where + " is encrypted; " + GiveKeyHint()));
    }
    return std::optional<cipher::SecretKey>();
  }
  // The key is read (and its file's permissions checked) before anything of
  // the store is written.
  ASSIGN_OR_RETURN(cipher::MasterKey master, cipher::ReadMasterKey(options.key_file));
  if (!envelope) {
    if (HasPages(db_path)) {
      return Err(Status::FailedPrecondition(
          where + " is not encrypted, and a key was given (--key-file or " +
          std::string(cipher::kKeyFileEnv) + "); open it without a key, or encrypt it with " +
          "`sessiondb encrypt`"));
    }
    if (!may_create) {
      return Err(Status::FailedPrecondition(where + " has no database yet to open read-only"));
    }
    NewEnvelope made = MakeKeyEnvelope(master, kEmbeddedKeyScope, options.clock());
    ASSIGN_OR_RETURN(bool created, CreateEnvelopeExclusively(envelope_path, made.text));
    if (created) return std::optional<cipher::SecretKey>(made.data_key);
    // Another process made this store at the same time: its key wins.
    ASSIGN_OR_RETURN(envelope, ReadEnvelope(envelope_path));
    if (!envelope) return Err(Status::Io("the key envelope " + envelope_path + " vanished"));
  }
  ASSIGN_OR_RETURN(cipher::SecretKey data_key,
                   OpenKeyEnvelope(*envelope, master, kEmbeddedKeyScope, where));
  return std::optional<cipher::SecretKey>(data_key);
}

}  // namespace store

Status NewKeyFile(const std::string& path) {
  Result<cipher::MasterKey> key = cipher::WriteNewKeyFile(path);
  return key ? Status::Ok() : key.error();
}

namespace {

// The envelope path of the store at `location`, after checking it is one.
Result<std::string> EmbeddedEnvelopeOf(const std::string& location) {
  const std::string db_path =
      (std::filesystem::path(location) / std::string(kEmbeddedDatabaseFile)).string();
  std::error_code ec;
  if (!std::filesystem::exists(db_path, ec) &&
      !std::filesystem::exists(store::EnvelopePathFor(db_path), ec)) {
    // A conversion cut short between its two renames (store_conversion.h):
    // the store is whole in its converted folder.
    const std::filesystem::path converted =
        store::ConvertingFolderOf(location) /
        (std::string(kEmbeddedDatabaseFile) + std::string(store::kConvertedMarkSuffix));
    if (std::filesystem::exists(converted, ec)) {
      return Err(Status::FailedPrecondition(
          "a conversion of the store at " + location +
          " was cut short as it put the converted store in place; run any sessiondb command "
          "on the store (or the conversion again) to finish it"));
    }
    return Err(Status::NotFound("no store at " + location));
  }
  return store::EnvelopePathFor(db_path);
}

}  // namespace

Result<EncryptionStatus> store::EmbeddedEncryptionStatus(const std::string& location) {
  ASSIGN_OR_RETURN(std::string envelope_path, EmbeddedEnvelopeOf(location));
  ASSIGN_OR_RETURN(std::optional<std::string> text, store::ReadEnvelope(envelope_path));
  EncryptionStatus status;
  if (!text) return status;
  ASSIGN_OR_RETURN(store::EnvelopeInfo info,
                   store::DescribeKeyEnvelope(*text, "the store at " + location));
  status.encrypted = true;
  status.kdf = info.kdf;
  status.key_id = info.key_id;
  status.created_ms = info.created_ms;
  status.wrapped_ms = info.wrapped_ms;
  status.envelope = envelope_path;
  return status;
}

Status store::RotateEmbeddedKey(const std::string& location, const StoreOptions& given,
                                const std::string& new_key_file) {
  ASSIGN_OR_RETURN(StoreOptions options, WithDefaults(given));
  ASSIGN_OR_RETURN(std::string envelope_path, EmbeddedEnvelopeOf(location));
  const std::string where = "the store at " + location;
  ASSIGN_OR_RETURN(std::optional<std::string> text, store::ReadEnvelope(envelope_path));
  if (!text) {
    return Err(Status::FailedPrecondition(where + " is not encrypted; there is no key to rotate"));
  }
  if (options.key_file.empty()) {
    return Err(Status::FailedPrecondition(where + " is encrypted; " + store::GiveKeyHint() +
                                          " (the current key) to rotate it"));
  }
  ASSIGN_OR_RETURN(cipher::MasterKey old_master, cipher::ReadMasterKey(options.key_file));
  ASSIGN_OR_RETURN(cipher::MasterKey new_master, cipher::ReadMasterKey(new_key_file));
  ASSIGN_OR_RETURN(std::string rewrapped,
                   store::RewrapKeyEnvelope(*text, old_master, new_master, store::kEmbeddedKeyScope,
                                            where, options.clock()));
  return ReplaceFileDurably(envelope_path, rewrapped);
}

}  // namespace sessiondb
