#include "server/history_imports.h"

#include <utility>

#include "sessiondb/interop.h"

namespace sessiondb::server {

HistoryImports::HistoryImports(Store& store, EventHub& hub, std::vector<HistorySource> sources)
    : store_(store), hub_(hub), sources_(std::move(sources)), progress_(sources_.size()) {}

HistoryImports::~HistoryImports() {
  if (worker_.joinable()) worker_.join();
}

Json HistoryImports::Describe() const {
  MutexLock lock(&mu_);
  Json out = Json::array();
  for (size_t id = 0; id < sources_.size(); ++id) {
    const Progress& p = progress_[id];
    Json source = {
        {"id", id},         {"agent", sources_[id].agent}, {"folder", sources_[id].folder},
        {"state", p.state}, {"done_bytes", p.done_bytes},  {"total_bytes", p.total_bytes}};
    if (p.report) source["report"] = *p.report;
    if (!p.error.empty()) source["error"] = p.error;
    out.push_back(std::move(source));
  }
  return {{"sources", std::move(out)}};
}

Status HistoryImports::Start(size_t id) {
  MutexLock lock(&mu_);
  if (id >= sources_.size()) {
    return Status::NotFound("no history source " + std::to_string(id) + "; GET /v1/import/sources");
  }
  if (running_) {
    return Status::FailedPrecondition("an import is running; wait for it to finish");
  }
  // The last import's thread has said it is done; it only returns now.
  if (worker_.joinable()) worker_.join();
  running_ = true;
  progress_[id] = Progress{.state = "running"};
  worker_ = std::thread([this, id] { Run(id); });
  return Status::Ok();
}

void HistoryImports::Run(size_t id) {
  ImportOptions options;
  if (auto format = ParseImportFormat(sources_[id].format)) options.format = *format;
  options.progress = [this, id](int64_t done, int64_t total) {
    MutexLock lock(&mu_);
    progress_[id].done_bytes = done;
    progress_[id].total_bytes = total;
  };
  Result<ImportReport> report = ImportPath(store_, sources_[id].folder, options);
  hub_.NotifySessionChanged("");  // the sessions it added or grew
  MutexLock lock(&mu_);
  Progress& p = progress_[id];
  if (report) {
    p.state = "done";
    p.report = ToJson(*report);
  } else {
    p.state = "failed";
    p.error = report.error().ToString();
  }
  running_ = false;
}

}  // namespace sessiondb::server
