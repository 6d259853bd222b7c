// Helpers for the importer tests: an embedded store in a temp dir, writing
// sample files, reading a session's events back.
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sessiondb/interop.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {

inline std::unique_ptr<Store> OpenTestStore(const TempDir& dir) {
  StoreOptions options;
  options.durability = Durability::kProcessCrashSafe;
  auto store = Store::Open(dir.Sub("store"), options);
  EXPECT_TRUE(store.has_value()) << store.error().message();
  return std::move(*store);
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline void AppendFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

inline std::vector<Event> EventsOf(Store& store, const std::string& session_id) {
  auto events = store.ReadEvents(session_id);
  EXPECT_TRUE(events.has_value()) << session_id << ": " << events.error().message();
  return events ? *events : std::vector<Event>{};
}

inline std::vector<Session> AllSessions(Store& store) {
  ListOptions list{.limit = 1000, .archived = ArchiveFilter::kAll};
  auto page = store.ListSessions(list);
  EXPECT_TRUE(page.has_value());
  return page ? page->sessions : std::vector<Session>{};
}

// Imports `path` in the format named `format` ("" detects it).
inline ImportReport MustImport(Store& store, const std::string& path, std::string_view format) {
  ImportOptions options;
  if (!format.empty()) options.format = ParseImportFormat(format).value();
  auto report = ImportPath(store, path, options);
  EXPECT_TRUE(report.has_value()) << report.error().message();
  return report ? *report : ImportReport{};
}

// The progress an import reports across files of `sizes` bytes: one bar for
// them all. Every call is out of the sum of the sizes, never goes back,
// reaches the end of the first file exactly, and ends full.
inline void ExpectOneBarAcrossFiles(const std::vector<std::pair<int64_t, int64_t>>& calls,
                                    const std::vector<int64_t>& sizes) {
  int64_t overall = 0;
  for (int64_t s : sizes) overall += s;
  ASSERT_FALSE(calls.empty());
  bool first_file_ended = false;
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, overall) << "call " << i;
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first) << "call " << i;
    }
    first_file_ended |= calls[i].first == sizes.front();
  }
  EXPECT_TRUE(first_file_ended);
  EXPECT_EQ(calls.back(), std::make_pair(overall, overall));
}

// Whether some skipped record's reason contains `text`.
inline bool SkippedFor(const ImportReport& r, const std::string& text) {
  for (const auto& s : r.skipped) {
    if (s.reason.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace sessiondb::testing
