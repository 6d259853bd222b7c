// Starts and stops the benchmark's own PostgreSQL cluster (see the header).
#include "throwaway_cluster.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "shell_quote.h"

#ifndef SESSIONDB_PG_CLUSTER_SCRIPT
#error "SESSIONDB_PG_CLUSTER_SCRIPT must name scripts/pg_cluster.sh (set in bench/CMakeLists.txt)"
#endif

namespace sessiondb::bench {
namespace {

// The directory of the running cluster; empty when none was started.
std::string& RunningDir() {
  static std::string dir;
  return dir;
}

}  // namespace

const char* ThrowawayCluster::Script() { return SESSIONDB_PG_CLUSTER_SCRIPT; }

Result<std::string> ThrowawayCluster::Start(const std::string& dir) {
  const std::string command =
      "bash " + ShellQuote(Script()) + " start " + ShellQuote(dir) + " </dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Err(Status::Io("cannot run " + command));
  std::string output;
  std::array<char, 512> buffer;
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
    output += buffer.data();
  }
  const int status = pclose(pipe);
  // Whatever happened, the script may have left a directory (or a server) behind.
  RunningDir() = dir;
  static const bool registered = [] { return std::atexit([] { Stop(); }) == 0; }();
  (void)registered;
  if (status != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return Err(Status::Io("`" + command + "` failed with exit status " + std::to_string(code) +
                          " (its messages are above)"));
  }
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  const size_t last_line = output.rfind('\n');
  std::string uri = last_line == std::string::npos ? output : output.substr(last_line + 1);
  if (uri.rfind("postgresql://", 0) != 0) {
    return Err(Status::Io("`" + command + "` printed '" + output + "', not a postgresql:// URI"));
  }
  return uri;
}

void ThrowawayCluster::Stop() {
  std::string& dir = RunningDir();
  if (dir.empty()) return;
  const std::string command =
      "bash " + ShellQuote(Script()) + " stop " + ShellQuote(dir) + " </dev/null >/dev/null";
  if (std::system(command.c_str()) != 0) {
    std::cerr << "sessiondb_pg_bench: `" << command << "` failed; the cluster in " << dir
              << " may still be running\n";
  }
  dir.clear();
}

}  // namespace sessiondb::bench
