// Where planted words ("canaries") are still stored, for the erasure tests:
// every byte of every file under an embedded store's folder, or every row of
// every table of a PostgreSQL store (as text: bytea reads back as hex) and,
// after a CHECKPOINT, every file of its database's folder in the cluster's
// data directory (base/<oid>). Each file or table is read once for all the
// words. Keep canaries short (< 2 KB rows) on PostgreSQL: a longer value is
// compressed into TOAST and its bytes would not show in the file scan.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pg_test_database.h"

namespace sessiondb::testing {

// Lowercase hex of `bytes`, as PostgreSQL prints a bytea.
inline std::string HexOf(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// For each of `needles`, where it still is (empty: nowhere). `pg` is null
// for an embedded store in `store_dir`.
inline std::map<std::string, std::vector<std::string>> CanaryTraces(
    const std::string& store_dir, const PgTestDatabase* pg,
    const std::vector<std::string>& needles) {
  std::map<std::string, std::vector<std::string>> found;
  for (const std::string& n : needles) found[n];
  auto scan_files = [&](const std::filesystem::path& root) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      const std::string content((std::istreambuf_iterator<char>(in)), {});
      for (const std::string& n : needles) {
        if (content.find(n) != std::string::npos) found[n].push_back(e.path().string());
      }
    }
  };
  if (pg == nullptr) {
    scan_files(store_dir);
    return found;
  }
  std::stringstream names(pg->Query(
      "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = current_schema()"));
  std::string table;
  while (std::getline(names, table, ',')) {
    const std::string rows =
        pg->Query("SELECT coalesce(string_agg(x::text, E'\\n'), '') FROM \"" + table + "\" x");
    for (const std::string& n : needles) {
      if (rows.find(n) != std::string::npos) found[n].push_back("table " + table);
    }
  }
  pg->Query("CHECKPOINT");
  const std::string oid =
      pg->Query("SELECT oid FROM pg_database WHERE datname = current_database()");
  scan_files(std::filesystem::path(pg->Query("SHOW data_directory")) / "base" / oid);
  return found;
}

}  // namespace sessiondb::testing
