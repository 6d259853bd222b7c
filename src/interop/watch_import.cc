// WatchImport (interop.h): `sessiondb import --watch DIR`. A catch-up import
// of every transcript under DIR that changed since the saved state
// (watch_import.h), then an inotify watch of DIR and of every folder under
// it, added as they appear, that imports each transcript once it has been
// quiet for a moment.
//
// Each import is the ordinary import of one file (ImportPath), which is
// idempotent and adds what a grown file gained (ImportSink matches records
// by identity and continues the session through RestoreEvents; Claude Code's
// response split across two imports continues through StoredEvent), so the
// watch needs no offsets of its own: what it keeps is which files changed.
// A last line still being written is "cut short" to the importer, which
// leaves it out; the file changes again when the writer ends the line, and
// the next import takes it. The watch does not report those skips.
//
// Only regular files named *.jsonl inside DIR are read: a symbolic link (even
// to a file inside DIR), a FIFO, a socket or a device is left out with a
// reason, folders are followed without following links (IN_DONT_FOLLOW), and
// the imports are confined to DIR (read_confinement.h) against a file
// swapped for a link between the check and the open.
//
// Thread-safety: runs on the caller's thread; callbacks are called there.
#include "interop/watch_import.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "blob/sha256.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "sessiondb/interop.h"

namespace sessiondb {
namespace interop {

namespace fs = std::filesystem;
using nlohmann::json;

std::string WatchStatePath(const std::string& state_dir, const std::string& key,
                           const std::string& dir) {
  return (fs::path(state_dir) /
          ("sessiondb.db-watch-" +
           blob::Sha256Hex({key, std::string_view("\n", 1), dir}).substr(0, 16)))
      .string();
}

Result<WatchMarks> LoadWatchMarks(const std::string& path, const std::string& dir) {
  WatchMarks marks;
  std::error_code ec;
  if (!fs::exists(path, ec)) return marks;
  const std::string bad = "the watch state " + path + " ";
  // A state names each transcript of the folder once, in about 100 bytes:
  // 64 MiB is far past any real one, and is read before it is allocated.
  constexpr uintmax_t kMaxStateBytes = uintmax_t{64} << 20;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Err(Status::Io(bad + "cannot be read: " + ec.message()));
  if (size > kMaxStateBytes) {
    return Err(Status::Corruption(bad + "is " + std::to_string(size) +
                                  " bytes, past the 64 MiB a state can be; remove it and the "
                                  "watch reads the folder again (nothing is imported twice)"));
  }
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  auto parsed = ParseJson(text);
  if (!parsed || !parsed->is_object()) return Err(Status::Corruption(bad + "is not JSON"));
  const json& j = *parsed;
  if (MemberOr(j, "version", int64_t{0}) != 1 || MemberOr(j, "dir", std::string()) != dir ||
      !j.contains("files") || !j["files"].is_object()) {
    return Err(Status::Corruption(bad + "is not a version 1 state of " + dir));
  }
  for (const auto& [name, m] : j["files"].items()) {
    if (!m.is_array() || m.size() != 3 || !m[0].is_number_unsigned() || !m[1].is_number_integer() ||
        !m[2].is_number_integer()) {
      return Err(Status::Corruption(bad + "has a bad entry for " + name));
    }
    marks[name] = {m[0].get<uint64_t>(), m[1].get<int64_t>(), m[2].get<int64_t>()};
  }
  return marks;
}

Status SaveWatchMarks(const std::string& path, const std::string& dir, const WatchMarks& marks) {
  json files = json::object();
  for (const auto& [name, m] : marks) files[name] = json::array({m.inode, m.size, m.mtime_ns});
  const std::string text =
      json{{"version", 1}, {"dir", dir}, {"files", std::move(files)}}.dump() + "\n";
  const std::string tmp = path + ".tmp";
  auto failed = [&](const std::string& what) {
    return Status::Io("cannot " + what + " the watch state " + path + ": " + std::strerror(errno));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return failed("write");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = failed("write");
      ::close(fd);
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    Status s = failed("sync");
    ::close(fd);
    return s;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return failed("rename");
  const int dfd = ::open(fs::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace interop

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using interop::FileMark;
using interop::WatchMarks;

// What each watched folder reports. IN_DONT_FOLLOW: a folder that is a link is
// not entered; IN_EXCL_UNLINK: nothing from files already deleted.
constexpr uint32_t kFolderEvents = IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_CREATE |
                                   IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR | IN_DONT_FOLLOW |
                                   IN_EXCL_UNLINK;
// Files imported during the catch-up between two saves of the state.
constexpr int kFilesPerSave = 100;
constexpr std::string_view kCutShort = "the last line is cut short";

bool IsTranscriptName(std::string_view name) {
  return name.size() > 6 && name.substr(name.size() - 6) == ".jsonl";
}

std::string Join(const std::string& folder, std::string_view name) {
  return folder.empty() ? std::string(name) : folder + "/" + std::string(name);
}

bool IsAgentFile(const std::string& rel) {
  return fs::path(rel).filename().string().rfind("agent-", 0) == 0;
}

class Watch {
 public:
  Watch(Store& store, std::string dir, const WatchOptions& options)
      : store_(store), dir_(std::move(dir)), options_(options) {}
  ~Watch() {
    if (fd_ >= 0) ::close(fd_);
  }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  Status Run() {
    RETURN_IF_ERROR(Start());
    RETURN_IF_ERROR(ImportDue(/*everything=*/true));
    while (!StopRequested()) {
      std::array<pollfd, 2> fds{{{fd_, POLLIN, 0}, {options_.stop_fd, POLLIN, 0}}};
      const int n = ::poll(fds.data(), options_.stop_fd >= 0 ? 2 : 1, PollTimeoutMs());
      if (n < 0 && errno != EINTR) return Status::Io(std::string("poll: ") + std::strerror(errno));
      if (n > 0 && (fds[0].revents & POLLIN) != 0) {
        bool overflow = false;
        RETURN_IF_ERROR(ReadEvents(&overflow));
        if (overflow) RETURN_IF_ERROR(Rescan());
      }
      RETURN_IF_ERROR(ImportDue(/*everything=*/false));
    }
    return SaveIfChanged();
  }

 private:
  struct Pending {
    Clock::time_point first, last;
  };

  Status Start() {
    if (options_.import.format && *options_.import.format != ImportFormat::kClaudeCode &&
        *options_.import.format != ImportFormat::kCodex) {
      return Status::InvalidArgument("a watch imports claude-code or codex transcripts, not " +
                                     std::string(ImportFormatName(*options_.import.format)));
    }
    format_ = options_.import.format;
    if (!format_) {
      // The folder's own format when it has one (a projects tree, a sessions
      // tree); else (empty, or both) each file's.
      auto detected = DetectImportFormat(dir_);
      if (detected &&
          (*detected == ImportFormat::kClaudeCode || *detected == ImportFormat::kCodex)) {
        format_ = *detected;
      }
    }
    if (!options_.state_dir.empty()) {
      state_path_ = interop::WatchStatePath(options_.state_dir, options_.state_key, dir_);
      auto loaded = interop::LoadWatchMarks(state_path_, dir_);
      if (loaded) {
        marks_ = std::move(*loaded);
      } else {
        Report({.file = state_path_,
                .error = loaded.error().message() + "; every transcript is read again"});
      }
    }
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) {
      return Status::FailedPrecondition(std::string("cannot start an inotify watch: ") +
                                        std::strerror(errno) +
                                        " (see /proc/sys/fs/inotify/max_user_instances)");
    }
    return Rescan();
  }

  // Watches every folder of the tree, queues every transcript that differs
  // from its mark, and forgets the marks of transcripts that are gone.
  Status Rescan() {
    std::set<std::string> seen;
    RETURN_IF_ERROR(AddTree("", &seen));
    for (auto it = marks_.begin(); it != marks_.end();) {
      if (seen.count(it->first) == 0) {
        it = marks_.erase(it);
        dirty_ = true;
      } else {
        ++it;
      }
    }
    return Status::Ok();
  }

  // Watches `rel` and the folders under it, queueing (as due now) the
  // transcripts that differ from their marks; their names go to `seen`.
  Status AddTree(const std::string& rel, std::set<std::string>* seen) {
    std::vector<std::string> folders{rel};
    while (!folders.empty()) {
      const std::string folder = std::move(folders.back());
      folders.pop_back();
      RETURN_IF_ERROR(AddWatch(folder));
      std::error_code ec;
      for (fs::directory_iterator it(Abs(folder), ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const std::string child = Join(folder, name);
        std::error_code type_ec;
        const fs::file_status st = it->symlink_status(type_ec);
        if (type_ec) continue;
        if (fs::is_directory(st)) {
          folders.push_back(child);
        } else if (IsTranscriptName(name)) {
          if (seen) seen->insert(child);
          auto mark = MarkOf(child);
          auto known = marks_.find(child);
          if (mark && known != marks_.end() && known->second == *mark) continue;
          auto& p = pending_[child];
          p.first = p.last = Clock::time_point::min();  // due now
        }
      }
    }
    return Status::Ok();
  }

  Status AddWatch(const std::string& rel) {
    const int wd = ::inotify_add_watch(fd_, Abs(rel).c_str(), kFolderEvents);
    if (wd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();  // gone meanwhile
      if (errno == ENOSPC) {
        return Status::FailedPrecondition(
            "the system allows no more inotify watches (at " + Abs(rel) +
            "); raise /proc/sys/fs/inotify/max_user_watches or watch a smaller folder");
      }
      return Status::Io("cannot watch " + Abs(rel) + ": " + std::strerror(errno));
    }
    if (folders_.count(wd) == 0 && std::ssize(folders_) >= options_.max_watched_dirs) {
      (void)::inotify_rm_watch(fd_, wd);
      return Status::FailedPrecondition(
          dir_ + " holds more than " + std::to_string(options_.max_watched_dirs) +
          " folders; a watch follows at most " + std::to_string(options_.max_watched_dirs) +
          " (--max-watched-dirs): watch a folder further down, or raise the limit");
    }
    folders_[wd] = rel;
    return Status::Ok();
  }

  Status ReadEvents(bool* overflow) {
    alignas(inotify_event) std::array<char, size_t{64} * 1024> buf;
    while (true) {
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return Status::Ok();
      if (n <= 0) return Status::Io(std::string("reading inotify events: ") + std::strerror(errno));
      for (ssize_t at = 0; at < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf.data() + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
        RETURN_IF_ERROR(OnEvent(*ev, overflow));
      }
    }
  }

  Status OnEvent(const inotify_event& ev, bool* overflow) {
    if ((ev.mask & IN_Q_OVERFLOW) != 0) {
      *overflow = true;  // events were lost: the tree is compared with the marks again
      return Status::Ok();
    }
    if ((ev.mask & IN_IGNORED) != 0) {
      folders_.erase(ev.wd);  // the folder went
      return Status::Ok();
    }
    auto folder = folders_.find(ev.wd);
    if (folder == folders_.end() || ev.len == 0) return Status::Ok();
    const std::string child = Join(folder->second, ev.name);
    if ((ev.mask & IN_ISDIR) != 0) {
      if ((ev.mask & IN_MOVED_TO) != 0 || (ev.mask & IN_MOVED_FROM) != 0) {
        *overflow = true;  // the paths of the folders under it changed
      } else if ((ev.mask & IN_CREATE) != 0) {
        return AddTree(child, nullptr);  // and what was written in it before its watch
      }
      return Status::Ok();
    }
    if (!IsTranscriptName(ev.name)) return Status::Ok();
    if ((ev.mask & (IN_DELETE | IN_MOVED_FROM)) != 0) {
      // The other tool's sweep: the store keeps what it holds.
      pending_.erase(child);
      if (marks_.erase(child) > 0) dirty_ = true;
      return Status::Ok();
    }
    const Clock::time_point now = Clock::now();
    auto [it, inserted] = pending_.try_emplace(child, Pending{now, now});
    if (!inserted && it->second.first != Clock::time_point::min()) it->second.last = now;
    return Status::Ok();
  }

  bool Due(const Pending& p, Clock::time_point now) const {
    const auto quiet = std::chrono::milliseconds(options_.quiet_ms);
    return p.first == Clock::time_point::min() || now - p.last >= quiet ||
           now - p.first >= 10 * quiet;
  }

  int PollTimeoutMs() const {
    if (pending_.empty()) return -1;
    const auto quiet = std::chrono::milliseconds(options_.quiet_ms);
    Clock::time_point next = Clock::time_point::max();
    for (const auto& [rel, p] : pending_) {
      if (p.first == Clock::time_point::min()) return 0;
      next = std::min({next, p.last + quiet, p.first + 10 * quiet});
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
    return static_cast<int>(std::clamp<int64_t>(left + 1, 0, 60'000));
  }

  // Imports the pending transcripts that are due (all of them: the
  // catch-up), main sessions before sub-agents so that "subagent_of" names a
  // session already there; saves the marks and calls on_settled after.
  Status ImportDue(bool everything) {
    const Clock::time_point now = Clock::now();
    std::vector<std::string> due;
    for (const auto& [rel, p] : pending_) {
      if (everything || Due(p, now)) due.push_back(rel);
    }
    if (due.empty()) return SaveIfChanged();
    std::stable_sort(due.begin(), due.end(), [](const std::string& a, const std::string& b) {
      return IsAgentFile(a) < IsAgentFile(b);
    });
    bool imported = false;
    int since_save = 0;
    for (const std::string& rel : due) {
      if (StopRequested()) break;
      pending_.erase(rel);
      ASSIGN_OR_RETURN(bool added, ImportFile(rel));
      imported = imported || added;
      if (++since_save >= kFilesPerSave) {
        RETURN_IF_ERROR(SaveIfChanged());
        since_save = 0;
      }
    }
    RETURN_IF_ERROR(SaveIfChanged());
    if (imported && options_.on_settled) return options_.on_settled();
    return Status::Ok();
  }

  // Imports one transcript; true when something came in. An error of the
  // store ends the watch; anything wrong with the file is reported.
  Result<bool> ImportFile(const std::string& rel) {
    const std::string abs = Abs(rel);
    struct stat st {};
    if (::lstat(abs.c_str(), &st) != 0) {
      if (marks_.erase(rel) > 0) dirty_ = true;  // gone before its turn
      return false;
    }
    if (S_ISLNK(st.st_mode)) {
      Report({.file = rel,
              .error = "it is a symbolic link; a watch reads only the files inside " + dir_ +
                       ", never where a link leads"});
      return false;
    }
    if (!S_ISREG(st.st_mode)) {
      Report({.file = rel, .error = "it is not a regular file (a FIFO, socket or device)"});
      return false;
    }
    const FileMark mark = MarkOf(st);
    auto known = marks_.find(rel);
    if (known != marks_.end() && known->second == mark) return false;
    std::optional<ImportFormat> format = format_;
    if (!format) {
      auto detected = DetectImportFormat(abs);
      // Not (yet) a transcript of either tool: the next change tries again.
      if (!detected ||
          (*detected != ImportFormat::kClaudeCode && *detected != ImportFormat::kCodex)) {
        return false;
      }
      format = *detected;
    }
    ImportOptions o;
    o.format = format;
    o.max_attachment_bytes = options_.import.max_attachment_bytes;
    o.allowed_roots = {dir_};
    auto report = ImportPath(store_, abs, o);
    if (!report) {
      const StatusCode code = report.error().code();
      if (code == StatusCode::kBusy) {
        // Another writer held the store past its busy timeout: once more later.
        const Clock::time_point now = Clock::now();
        pending_[rel] = {now, now};
        Report({.file = rel, .error = report.error().message() + "; it is tried again"});
        return false;
      }
      if (code != StatusCode::kInvalidArgument && code != StatusCode::kNotFound) {
        return Err(report.error());
      }
      Report({.file = rel, .error = report.error().message()});
      marks_[rel] = mark;  // the same bytes would fail the same way
      dirty_ = true;
      return false;
    }
    marks_[rel] = mark;
    dirty_ = true;
    DropCutShortLine(&*report);
    const bool added = !report->sessions_written.empty() || report->messages_added > 0;
    Report({.file = rel, .report = std::move(*report)});
    return added;
  }

  // The last line a writer is still writing is no bad record: the next
  // import, once the line is whole, takes it.
  static void DropCutShortLine(ImportReport* r) {
    const auto before = std::ssize(r->skipped);
    std::erase_if(r->skipped,
                  [](const SkippedRecord& s) { return s.reason.starts_with(kCutShort); });
    r->records_skipped -= before - std::ssize(r->skipped);
  }

  void Report(const WatchedImport& w) {
    if (options_.on_import) options_.on_import(w);
  }

  Status SaveIfChanged() {
    if (!dirty_ || state_path_.empty()) return Status::Ok();
    RETURN_IF_ERROR(interop::SaveWatchMarks(state_path_, dir_, marks_));
    dirty_ = false;
    return Status::Ok();
  }

  bool StopRequested() const {
    if (options_.stop_fd < 0) return false;
    pollfd p{options_.stop_fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
  }

  static FileMark MarkOf(const struct stat& st) {
    return {static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_size),
            static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  }
  std::optional<FileMark> MarkOf(const std::string& rel) const {
    struct stat st {};
    if (::lstat(Abs(rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return MarkOf(st);
  }

  std::string Abs(const std::string& rel) const { return rel.empty() ? dir_ : dir_ + "/" + rel; }

  Store& store_;
  const std::string dir_;  // absolute and normal
  const WatchOptions& options_;
  std::optional<ImportFormat> format_;
  std::string state_path_;
  int fd_ = -1;
  std::unordered_map<int, std::string> folders_;  // watch descriptor -> folder (relative)
  std::map<std::string, Pending> pending_;        // transcripts changed, not yet imported
  WatchMarks marks_;
  bool dirty_ = false;  // marks_ differs from the saved state
};

}  // namespace

Status WatchImport(Store& store, const std::string& dir, const WatchOptions& options) {
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec || !fs::exists(abs, ec)) return Status::NotFound("nothing at " + dir + " to watch");
  if (!fs::is_directory(abs, ec)) {
    return Status::InvalidArgument(dir +
                                   " is not a folder; a watch follows a folder of transcripts");
  }
  if (options.quiet_ms <= 0 || options.max_watched_dirs <= 0) {
    return Status::InvalidArgument("a watch needs a quiet time and a folder limit of at least 1");
  }
  Watch watch(store, abs.string(), options);
  return watch.Run();
}

}  // namespace sessiondb
