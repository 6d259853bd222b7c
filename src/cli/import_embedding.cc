#include "cli/import_embedding.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string_view>
#include <vector>

#include "cli/output.h"
#include "sessiondb/search.h"

namespace sessiondb::cli {
namespace {

// FNV-1a, 64 bits: a file name per store location.
uint64_t Fnv1a(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// The state directory (as `import --watch` keeps its state for a PostgreSQL
// store): $XDG_STATE_HOME/sessiondb, else ~/.local/state/sessiondb.
std::filesystem::path StateDirectory() {
  const char* state_home = std::getenv("XDG_STATE_HOME");
  if (state_home != nullptr && *state_home != '\0') {
    return std::filesystem::path(state_home) / "sessiondb";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".local" /
         "state" / "sessiondb";
}

// kInlineEmbedSeconds, or $SESSIONDB_INLINE_EMBED_SECONDS when it is a
// number (0: everything in the background).
double InlineEmbedSeconds() {
  const char* set = std::getenv("SESSIONDB_INLINE_EMBED_SECONDS");
  if (set == nullptr || *set == '\0') return kInlineEmbedSeconds;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(set, &end);
  if (errno != 0 || *end != '\0' || !(seconds >= 0)) return kInlineEmbedSeconds;
  return seconds;
}

}  // namespace

Result<pid_t> StartBackgroundReindex(const CliContext& ctx) {
  // Everything the child needs is made before fork: between fork and exec
  // only async-signal-safe calls are made.
  std::string store = ctx.StorePath();
  std::error_code ec;
  if (StoreKindOf(store) == StoreKind::kEmbedded) {
    store = std::filesystem::absolute(store, ec).string();  // the child works from /
  }
  std::vector<std::string> args = {"sessiondb", "--store", store};
  if (!ctx.options.namespace_name.empty()) {
    args.insert(args.end(), {"--namespace", ctx.options.namespace_name});
  }
  if (!ctx.options.key_file.empty()) {
    args.insert(args.end(),
                {"--key-file", std::filesystem::absolute(ctx.options.key_file, ec).string()});
  }
  args.push_back("reindex");
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const char* ns = std::getenv("SESSIONDB_NAMESPACE");
  const std::filesystem::path dir = StateDirectory();
  std::filesystem::create_directories(dir, ec);
  char name[64];
  std::snprintf(name, sizeof(name), "embedding-%016llx.lock",
                static_cast<unsigned long long>(
                    Fnv1a(store + '\n' + ctx.options.namespace_name + '\n' + (ns ? ns : ""))));
  const std::string lock_path = (dir / name).string();
  static const char kSelf[] = "/proc/self/exe";

  int report[2];  // the grandchild's pid, from the child that forks it
  if (pipe2(report, O_CLOEXEC) != 0) {
    return Err(Status::Io(std::string("cannot make a pipe: ") + std::strerror(errno)));
  }
  const pid_t child = fork();
  if (child < 0) {
    close(report[0]);
    close(report[1]);
    return Err(Status::Io(std::string("cannot fork: ") + std::strerror(errno)));
  }
  if (child == 0) {
    // A session of its own, so the terminal's Ctrl-C and hang-up do not
    // reach it; the grandchild is then re-parented to init when we exit.
    setsid();
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      const int null = open("/dev/null", O_RDWR);
      if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
      }
      close_range(3, ~0U, 0);
      if (chdir("/") != 0) _exit(126);
      setpriority(PRIO_PROCESS, 0, 10);
      // Held across exec (no O_CLOEXEC) until the reindex exits.
      const int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
      if (lock >= 0) {
        while (flock(lock, LOCK_EX) != 0 && errno == EINTR) {
        }
      }
      execv(kSelf, argv.data());
      _exit(127);
    }
    (void)!write(report[1], &grandchild, sizeof(grandchild));
    _exit(grandchild > 0 ? 0 : 1);
  }
  close(report[1]);
  pid_t grandchild = 0;
  const ssize_t got = read(report[0], &grandchild, sizeof(grandchild));
  close(report[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof(grandchild)) || grandchild <= 0) {
    return Err(Status::Io("cannot start the background embedding"));
  }
  return grandchild;
}

ImportEmbedding EmbedImported(CliContext& ctx) {
  ImportEmbedding out;
  SearchIndex* index = ctx.OpenSearchIndex();
  if (index == nullptr) {
    out.error = "the search index did not open";
    return out;
  }
  Result<int64_t> pending = index->PendingEmbeddings();
  if (!pending) {
    out.error = pending.error().message();
    return out;
  }
  if (*pending == 0) return out;
  const std::string model = index->EmbeddingModel();
  const double budget = InlineEmbedSeconds();
  // An endpoint's speed is unknown: all of its work goes to the background.
  if (model.rfind("hash-", 0) == 0 && budget > 0) {
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&start] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    Progress progress(isatty(STDERR_FILENO) != 0, "embedding (" + model + ")");
    const int64_t total = *pending;
    int64_t left = total;
    while (left > 0 && elapsed() < budget) {
      const int64_t done = total - left;
      Result<EmbedReport> embedded =
          index->Embed(kInlineEmbedChunk, [&progress, done, total](int64_t d, int64_t) {
            progress(std::min(done + d, total), total);
          });
      if (!embedded) {
        out.error = embedded.error().message();
        return out;
      }
      out.embedded += embedded->embedded;
      if (embedded->embedded == 0) break;  // nothing left that it can reach
      left = embedded->remaining;
    }
    if (left <= 0) return out;
    *pending = left;
  }
  ctx.CloseStore();
  Result<pid_t> started = StartBackgroundReindex(ctx);
  if (!started) {
    out.error = started.error().message();
    return out;
  }
  out.background = *pending;
  out.background_pid = *started;
  return out;
}

}  // namespace sessiondb::cli
