// Runs pgbench for the server floors beside sessiondb_pg_bench's figures (see the header).
#include "pgbench_floor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "shell_quote.h"

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;

// Debian keeps pgbench beside the server, off PATH.
std::string PgbenchPath() {
  std::error_code ec;
  std::string newest;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const fs::path candidate = entry.path() / "bin" / "pgbench";
    if (fs::exists(candidate, ec) && candidate.string() > newest) newest = candidate.string();
  }
  return newest.empty() ? "pgbench" : newest;
}

// The number after `label` in pgbench's report ("tps = 4307.5 (...)").
std::optional<double> NumberAfter(const std::string& output, const std::string& label) {
  const size_t at = output.find(label);
  if (at == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(output.c_str() + at + label.size(), &end);
  if (end == output.c_str() + at + label.size()) return std::nullopt;
  return value;
}

}  // namespace

Result<PgbenchFigure> RunPgbench(const std::string& uri, const std::string& script,
                                 const PgbenchRun& run) {
  char script_path[] = "/tmp/sessiondb-pgbench-XXXXXX";
  const int fd = mkstemp(script_path);
  if (fd < 0) return Err(Status::Io("cannot create a pgbench script in /tmp"));
  close(fd);
  std::ofstream(script_path) << script;
  const int threads = std::clamp(run.clients, 1, 8);
  const std::string command =
      ShellQuote(PgbenchPath()) + " -n -M prepared -c " + std::to_string(run.clients) + " -j " +
      std::to_string(threads) +
      (run.transactions > 0 ? " -t " + std::to_string(run.transactions)
                            : " -T " + std::to_string(std::max(1, static_cast<int>(run.seconds)))) +
      " -f " + ShellQuote(script_path) + " " + ShellQuote(uri) + " 2>&1 </dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  if (pipe != nullptr) {
    std::array<char, 512> buffer;
    while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
      output += buffer.data();
    }
  }
  const int status = pipe == nullptr ? -1 : pclose(pipe);
  std::remove(script_path);
  const std::optional<double> tps = NumberAfter(output, "tps = ");
  const std::optional<double> latency = NumberAfter(output, "latency average = ");
  if (status != 0 || !tps || !latency) {
    return Err(Status::Io("pgbench failed (" + command + "): " + output));
  }
  return PgbenchFigure{.tps = *tps, .latency_ms = *latency};
}

}  // namespace sessiondb::bench
