#include "server/session_facets.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/json_access.h"
#include "core/json_parse.h"

namespace sessiondb::server {
namespace {

// {key, value} -> sessions.
using Counts = std::map<std::pair<std::string, std::string>, int64_t>;

Json MostFirst(const Counts& counts) {
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> sorted(counts.begin(),
                                                                              counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (sorted.size() > kMaxFacetValues) sorted.resize(kMaxFacetValues);
  Json out = Json::array();
  for (const auto& entry : sorted) {
    out.push_back(
        {{"key", entry.first.first}, {"value", entry.first.second}, {"sessions", entry.second}});
  }
  return out;
}

}  // namespace

Result<Json> SessionFacets(Store& store, int64_t max_sessions) {
  Counts sources, projects;
  int64_t read = 0;
  std::string cursor;
  bool partial = false;
  do {
    if (read >= max_sessions) {
      partial = true;
      break;
    }
    ASSIGN_OR_RETURN(
        SessionPage page,
        store.ListSessions({.limit = 1000, .cursor = cursor, .archived = ArchiveFilter::kAll}));
    for (const Session& s : page.sessions) {
      ++read;
      if (s.metadata_json.empty()) continue;
      Result<nlohmann::json> meta = ParseJson(s.metadata_json);
      if (!meta) continue;  // a session's own odd metadata narrows nothing
      const std::string source = MemberOr(*meta, "source", "");
      if (!source.empty()) ++sources[{"source", source}];
      const std::string project = MemberOr(*meta, "project", "");
      const std::string cwd = MemberOr(*meta, "cwd", "");
      if (!project.empty()) {
        ++projects[{"project", project}];
      } else if (!cwd.empty()) {
        ++projects[{"cwd", cwd}];
      }
    }
    cursor = page.next_cursor;
  } while (!cursor.empty());
  return Json{{"sources", MostFirst(sources)},
              {"projects", MostFirst(projects)},
              {"sessions_read", read},
              {"partial", partial}};
}

}  // namespace sessiondb::server
