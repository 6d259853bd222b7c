// A throw-away database in the test PostgreSQL cluster, which CTest starts
// before the tests that need it (scripts/pg_cluster.sh, tests/CMakeLists.txt)
// and names in $SESSIONDB_TEST_POSTGRES. Each PgTestDatabase is a fresh
// database, dropped when it goes out of scope, so tests never see each other.
#pragma once

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace sessiondb::testing {

// The cluster's maintenance URI, or "" (with a test failure saying why).
inline std::string PgTestClusterUri() {
  const char* uri = std::getenv("SESSIONDB_TEST_POSTGRES");
  if (uri == nullptr || *uri == '\0') {
    ADD_FAILURE() << "$SESSIONDB_TEST_POSTGRES is not set: run the tests through ctest, which "
                     "starts the test cluster (scripts/pg_cluster.sh start DIR prints the URI)";
    return "";
  }
  return uri;
}

// `uri` with its database ("/postgres?...") replaced by `database`.
inline std::string PgUriWithDatabase(const std::string& uri, const std::string& database) {
  const size_t scheme = uri.find("://");
  const size_t slash = uri.find('/', scheme + 3);
  const size_t q = uri.find('?', slash);
  return uri.substr(0, slash + 1) + database + (q == std::string::npos ? "" : uri.substr(q));
}

// Runs `sql` on a new connection to `uri`; returns the first column of the
// first row ("" when there is none). Adds a test failure naming the error.
inline std::string PgQuery(const std::string& uri, const std::string& sql) {
  PGconn* conn = PQconnectdb(uri.c_str());
  std::string out;
  if (PQstatus(conn) != CONNECTION_OK) {
    ADD_FAILURE() << "cannot connect to " << uri << ": " << PQerrorMessage(conn);
  } else {
    PQsetNoticeProcessor(
        conn, [](void*, const char*) {}, nullptr);
    PGresult* r = PQexec(conn, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
      ADD_FAILURE() << sql << ": " << PQresultErrorMessage(r);
    } else if (st == PGRES_TUPLES_OK && PQntuples(r) > 0) {
      out = PQgetvalue(r, 0, 0);
    }
    PQclear(r);
  }
  PQfinish(conn);
  return out;
}

class PgTestDatabase {
 public:
  PgTestDatabase() {
    cluster_ = PgTestClusterUri();
    if (cluster_.empty()) return;
    static std::atomic<int> counter{0};
    name_ = "sdbtest_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
            std::to_string(std::random_device{}() % 100000);
    PgQuery(cluster_, "CREATE DATABASE " + name_);
    uri_ = PgUriWithDatabase(cluster_, name_);
  }
  ~PgTestDatabase() {
    if (!name_.empty()) PgQuery(cluster_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  }
  PgTestDatabase(const PgTestDatabase&) = delete;
  PgTestDatabase& operator=(const PgTestDatabase&) = delete;

  bool ok() const { return !uri_.empty(); }
  const std::string& uri() const { return uri_; }
  const std::string& cluster_uri() const { return cluster_; }
  // Runs SQL in this database (see PgQuery).
  std::string Query(const std::string& sql) const { return PgQuery(uri_, sql); }

 private:
  std::string cluster_;
  std::string name_;
  std::string uri_;
};

}  // namespace sessiondb::testing
