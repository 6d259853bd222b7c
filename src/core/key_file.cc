#include "core/key_file.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace sessiondb::cipher {
namespace {

std::string OctalMode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace

MasterKey::~MasterKey() {
  if (!passphrase.empty()) OPENSSL_cleanse(passphrase.data(), passphrase.size());
}

Result<MasterKey> ReadMasterKey(const std::string& path) {
  if (path.empty()) return Err(Status::InvalidArgument("the key file's path is empty"));
  // O_NOFOLLOW: a link planted where the key file should be is refused, so
  // the checks below are about the file actually read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return Err(Status::NotFound("no key file at " + path + "; make one with `sessiondb key new " +
                                  path + "`"));
    }
    if (err == ELOOP) {
      return Err(Status::FailedPrecondition("the key file " + path +
                                            " is a symbolic link; name the file itself"));
    }
    return Err(Status::Io("cannot read the key file " + path + ": " + std::strerror(err)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Err(Status::Io("cannot stat the key file " + path));
  if (!S_ISREG(st.st_mode)) {
    return Err(Status::FailedPrecondition("the key file " + path + " is not a regular file"));
  }
  if (st.st_uid != ::geteuid()) {
    return Err(Status::FailedPrecondition("the key file " + path + " belongs to uid " +
                                          std::to_string(st.st_uid) + ", not to this user (uid " +
                                          std::to_string(::geteuid()) +
                                          "); a key must be its user's own file"));
  }
  if ((st.st_mode & 077) != 0) {
    return Err(Status::FailedPrecondition(
        "the key file " + path + " may be read or written by others (mode " +
        OctalMode(st.st_mode) + "); run `chmod 600 " + path + "` and keep it private"));
  }
  // Read at most one byte past the cap: a longer file is refused before
  // anything of it is kept.
  std::string text(kMaxKeyFileBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err(Status::Io("cannot read the key file " + path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxKeyFileBytes) {
    OPENSSL_cleanse(text.data(), text.size());
    return Err(Status::InvalidArgument("the key file " + path + " is longer than " +
                                       std::to_string(kMaxKeyFileBytes) +
                                       " bytes; is it the right file?"));
  }
  text.resize(got);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();

  MasterKey key;
  key.source = path;
  if (std::string_view(text).starts_with(kKeyFilePrefix)) {
    Result<std::string> raw =
        FromHex(std::string_view(text).substr(kKeyFilePrefix.size()), "the key in " + path);
    OPENSSL_cleanse(text.data(), text.size());
    if (!raw || raw->size() != kKeyBytes) {
      return Err(Status::InvalidArgument("the key file " + path + " is damaged: after '" +
                                         std::string(kKeyFilePrefix) +
                                         "' it must hold 64 hex digits"));
    }
    ASSIGN_OR_RETURN(key.raw, SecretKey::FromBytes(*raw));
    OPENSSL_cleanse(raw->data(), raw->size());
    return key;
  }
  if (text.size() < kMinPassphraseBytes) {
    OPENSSL_cleanse(text.data(), text.size());
    return Err(Status::InvalidArgument(
        "the passphrase in " + path + " is shorter than " + std::to_string(kMinPassphraseBytes) +
        " bytes; use a longer one, or a generated key (`sessiondb key new FILE`)"));
  }
  key.is_passphrase = true;
  key.passphrase = std::move(text);
  return key;
}

Result<MasterKey> WriteNewKeyFile(const std::string& path) {
  // A missing folder (~/.config/sessiondb) is made, private to its user.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return Err(Status::Io("cannot create " + parent.string() + ": " + ec.message()));
    std::filesystem::permissions(parent, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      return Err(Status::AlreadyExists(path + " exists; a key file is never overwritten (a lost "
                                              "key loses the data it protects)"));
    }
    return Err(Status::Io("cannot create the key file " + path + ": " + std::strerror(errno)));
  }
  MasterKey key;
  key.source = path;
  key.raw = SecretKey::Random();
  std::string text = std::string(kKeyFilePrefix) + ToHex(key.raw.view()) + "\n";
  size_t done = 0;
  bool ok = true;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  OPENSSL_cleanse(text.data(), text.size());
  if (!ok) {
    ::unlink(path.c_str());
    return Err(Status::Io("cannot write the key file " + path));
  }
  return key;
}

}  // namespace sessiondb::cipher
