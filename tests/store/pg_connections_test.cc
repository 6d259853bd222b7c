// Connections to PostgreSQL are a shared resource (docs/postgres.md, "Many
// agents: connections and PgBouncer"): an idle pool gives its connections
// back, a server with a small max_connections serves many more stores than
// it has slots (each waits for a free one rather than failing with "too many
// clients"), the wait has a bound with a message that says what to change,
// and the store works through PgBouncer in transaction mode, where nothing
// of a session outlives a transaction.
//
// The small servers and the PgBouncer are started here, each in a folder of
// its own under /tmp (scripts/pg_cluster.sh start DIR OPTIONS).
#include <libpq-fe.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pg_test_database.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/postgres/pg_pool.h"
#include "test_support.h"

// A namespace of its own: the suite's files share unity batches.
namespace sessiondb::testing::pg_connections {
namespace {

using postgres::PgPool;
using postgres::PgPoolLimits;

// Runs `command` with the shell; its exit status.
int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A PostgreSQL server of the test's own, with server options `options`,
// stopped (and its folder deleted) at the end of the test.
class OwnCluster {
 public:
  explicit OwnCluster(const std::string& options)
      : dir_("/tmp/sdbpgc-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++)) {
    const std::string out = dir_ + ".uri";
    const int rc =
        Shell("bash " SESSIONDB_PG_CLUSTER_SCRIPT " start " + dir_ + " '" + options + "' >" + out);
    std::ifstream in(out);
    std::getline(in, uri_);
    std::filesystem::remove(out);
    if (rc != 0 || uri_.empty()) ADD_FAILURE() << "pg_cluster.sh start " << dir_ << " failed";
  }
  ~OwnCluster() { Shell("bash " SESSIONDB_PG_CLUSTER_SCRIPT " stop " + dir_); }
  const std::string& uri() const { return uri_; }
  const std::string& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  std::string dir_;
  std::string uri_;
};

// The backends connected to database `db` as application `app`, seen from
// another connection (`uri`, the cluster's maintenance database).
int Backends(const std::string& uri, const std::string& db, const std::string& app) {
  return std::stoi(PgQuery(uri, "SELECT count(*) FROM pg_stat_activity WHERE datname = '" + db +
                                    "' AND application_name = '" + app + "'"));
}

std::string DatabaseOf(const std::string& uri) {
  const size_t scheme = uri.find("://");
  const size_t slash = uri.find('/', scheme + 3);
  return uri.substr(slash + 1, uri.find('?', slash) - slash - 1);
}

Message Text(const std::string& text) {
  Message m;
  m.role = Role::kUser;
  m.parts.push_back(Part::Text(text));
  return m;
}

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(PgConnections, AnIdlePoolClosesItsConnection) {
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  PgPool pool(db.uri(), {{"application_name", "sdb-idle-pool"}},
              PgPoolLimits{.max_connections = 4, .idle_timeout = std::chrono::milliseconds(300)});
  {
    Result<postgres::PgLease> conn = pool.Acquire();
    ASSERT_TRUE(conn) << conn.error().ToString();
    ASSERT_TRUE((*conn)->Run("SELECT 1").ok());
  }
  const std::string name = DatabaseOf(db.uri());
  EXPECT_EQ(Backends(db.cluster_uri(), name, "sdb-idle-pool"), 1) << "kept while in use";
  EXPECT_EQ(pool.open_connections(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'200));
  EXPECT_EQ(pool.open_connections(), 0);
  EXPECT_EQ(Backends(db.cluster_uri(), name, "sdb-idle-pool"), 0) << "still held when idle";
  // And it comes back when needed.
  Result<postgres::PgLease> again = pool.Acquire();
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_TRUE((*again)->Run("SELECT 1").ok());
}

TEST(PgConnections, AnIdleStoreEndsUpHoldingNoConnection) {
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  ScopedEnv idle("SESSIONDB_PG_IDLE_SECONDS", "0.3");
  auto store = Store::Open(db.uri(), {.create_if_missing = true});
  ASSERT_TRUE(store) << store.error().ToString();
  Result<Session> s = (*store)->CreateSession({.title = "idle"});
  ASSERT_TRUE(s) << s.error().ToString();
  ASSERT_TRUE((*store)->Append(s->id, Text("hello")));
  const std::string name = DatabaseOf(db.uri());
  EXPECT_GE(Backends(db.cluster_uri(), name, "sessiondb"), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'500));
  EXPECT_EQ(Backends(db.cluster_uri(), name, "sessiondb"), 0)
      << "an open, idle store (an `mcp` between calls) still holds connections";
  Result<std::vector<Message>> read = (*store)->ReadMessages(s->id);
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read->size(), 1u);
}

TEST(PgConnections, SixtyStoresShareAServerOfTenConnections) {
  OwnCluster server("-c max_connections=10");
  ASSERT_FALSE(server.uri().empty());
  {
    auto init = Store::Open(server.uri(), {.create_if_missing = true});
    ASSERT_TRUE(init) << init.error().ToString();
  }
  constexpr int kStores = 60;
  std::atomic<int> ok{0};
  std::vector<std::string> failures(kStores);
  std::vector<std::thread> threads;
  for (int i = 0; i < kStores; ++i) {
    threads.emplace_back([&, i] {
      // A store each, as separate processes would have.
      auto store = Store::Open(server.uri(), {});
      if (!store) {
        failures[i] = store.error().ToString();
        return;
      }
      Result<Session> s = (*store)->CreateSession({.title = "agent " + std::to_string(i)});
      if (!s) {
        failures[i] = s.error().ToString();
        return;
      }
      for (int m = 0; m < 3; ++m) {
        Result<AppendResult> a = (*store)->Append(s->id, Text("message " + std::to_string(m)));
        if (!a) {
          failures[i] = a.error().ToString();
          return;
        }
      }
      Result<SessionPage> page = (*store)->ListSessions({.limit = 5});
      if (!page) {
        failures[i] = page.error().ToString();
        return;
      }
      ++ok;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kStores; ++i) EXPECT_EQ(failures[i], "") << "store " << i;
  EXPECT_EQ(ok.load(), kStores);
  EXPECT_EQ(PgQuery(server.uri(), "SELECT count(*) FROM events"), std::to_string(kStores * 3));
}

TEST(PgConnections, AServerWithNoFreeSlotIsNamedWhenTheWaitRunsOut) {
  OwnCluster server("-c max_connections=4");
  ASSERT_FALSE(server.uri().empty());
  std::vector<PGconn*> held;
  for (int i = 0; i < 4; ++i) {
    PGconn* c = PQconnectdb(server.uri().c_str());
    if (PQstatus(c) == CONNECTION_OK) {
      held.push_back(c);
    } else {
      PQfinish(c);
    }
  }
  ASSERT_EQ(held.size(), 4u) << "the server's slots are all taken";
  PgPool pool(server.uri(), {},
              PgPoolLimits{.max_connections = 1, .slot_wait = std::chrono::milliseconds(400)});
  const auto start = std::chrono::steady_clock::now();
  Result<postgres::PgLease> conn = pool.Acquire();
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(conn);
  EXPECT_EQ(conn.error().code(), StatusCode::kBusy);
  EXPECT_NE(conn.error().message().find("too many clients"), std::string::npos)
      << conn.error().message();
  EXPECT_NE(conn.error().message().find("max_connections"), std::string::npos);
  EXPECT_NE(conn.error().message().find("PgBouncer"), std::string::npos);
  EXPECT_GE(waited, std::chrono::milliseconds(400)) << "gave up before its bound";
  // A slot freed while a pool waits is taken.
  PgPool patient(server.uri(), {}, PgPoolLimits{.max_connections = 1});
  std::thread free_one([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    PQfinish(held.back());
    held.pop_back();
  });
  Result<postgres::PgLease> later = patient.Acquire();
  free_one.join();
  ASSERT_TRUE(later) << later.error().ToString();
  EXPECT_TRUE((*later)->Run("SELECT 1").ok());
  for (PGconn* c : held) PQfinish(c);
}

// PgBouncer in transaction mode in front of the test cluster, started and
// stopped with the test.
class Bouncer {
 public:
  explicit Bouncer(const std::string& cluster_uri) {
    dir_ = "/tmp/sdbpgb-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const size_t host = cluster_uri.find("host=");
    const std::string socket_dir =
        cluster_uri.substr(host + 5, cluster_uri.find('&', host) - host - 5);
    std::ofstream(dir_ + "/userlist.txt") << "\"sessiondb\" \"\"\n";
    std::ofstream(dir_ + "/pgbouncer.ini")
        << "[databases]\n* = host=" << socket_dir << "\n"
        << "[pgbouncer]\nlisten_addr =\nlisten_port = 6432\nunix_socket_dir = " << dir_ << "\n"
        << "auth_type = trust\nauth_file = " << dir_ << "/userlist.txt\n"
        << "pool_mode = transaction\ndefault_pool_size = 2\nmax_client_conn = 500\n"
        << "logfile = " << dir_ << "/pgbouncer.log\npidfile = " << dir_ << "/pgbouncer.pid\n";
    // PgBouncer refuses to run as root; the server's own user runs it then.
    const std::string as =
        ::getuid() == 0 ? "chown -R postgres " + dir_ + " && runuser -u postgres -- " : "";
    ok_ = Shell(as + "/usr/sbin/pgbouncer -d " + dir_ + "/pgbouncer.ini") == 0;
    for (int i = 0; ok_ && i < 100 && !std::filesystem::exists(dir_ + "/.s.PGSQL.6432"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!ok_) ADD_FAILURE() << "pgbouncer did not start (apt install pgbouncer; scripts/setup.sh)";
  }
  ~Bouncer() {
    Shell("kill $(cat " + dir_ + "/pgbouncer.pid 2>/dev/null) 2>/dev/null");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::filesystem::remove_all(dir_);
  }
  bool ok() const { return ok_; }
  // `uri` (a database of the cluster behind) through the bouncer.
  std::string Through(const std::string& uri) const {
    return "postgresql://sessiondb@/" + DatabaseOf(uri) + "?host=" + dir_ + "&port=6432";
  }

 private:
  std::string dir_;
  bool ok_ = false;
};

TEST(PgConnections, TheStoreWorksThroughPgBouncerInTransactionMode) {
  if (!std::filesystem::exists("/usr/sbin/pgbouncer")) GTEST_SKIP() << "no pgbouncer";
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  Bouncer bouncer(db.cluster_uri());
  ASSERT_TRUE(bouncer.ok());
  const std::string uri = bouncer.Through(db.uri());
  // Several stores at once: their transactions share two server connections.
  constexpr int kStores = 6;
  std::vector<std::string> failures(kStores);
  std::vector<std::thread> threads;
  {
    auto init = Store::Open(uri, {.create_if_missing = true});
    ASSERT_TRUE(init) << init.error().ToString();
  }
  for (int i = 0; i < kStores; ++i) {
    threads.emplace_back([&, i] {
      auto fail = [&](const std::string& what, const Status& s) {
        failures[i] = what + ": " + s.ToString();
      };
      auto store = Store::Open(uri, {});
      if (!store) return fail("open", store.error());
      Result<Session> s = (*store)->CreateSession({.title = "bounced " + std::to_string(i)});
      if (!s) return fail("create", s.error());
      for (int m = 0; m < 5; ++m) {
        Message msg = Text("pelican number " + std::to_string(i * 10 + m));
        if (m == 2)
          msg.parts.push_back(
              Part::FileFromBytes("bytes of " + std::to_string(i), "text/plain", "note.txt"));
        Result<AppendResult> a = (*store)->Append(s->id, msg);
        if (!a) return fail("append", a.error());
      }
      Result<std::vector<Message>> read = (*store)->ReadMessages(s->id);
      if (!read) return fail("read", read.error());
      if (read->size() != 5) failures[i] = "read " + std::to_string(read->size()) + " messages";
      Result<Session> fork = (*store)->ForkSession(s->id, 3, {.title = "fork"});
      if (!fork) return fail("fork", fork.error());
      Result<std::vector<Message>> forked = (*store)->ReadMessages(fork->id);
      if (!forked) return fail("read fork", forked.error());
      if (forked->size() != 3) failures[i] = "fork holds " + std::to_string(forked->size());
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kStores; ++i) EXPECT_EQ(failures[i], "") << "store " << i;

  auto store = Store::Open(uri, {});
  ASSERT_TRUE(store) << store.error().ToString();
  auto index = SearchIndex::Open(**store);
  ASSERT_TRUE(index) << index.error().ToString();
  Result<SearchResults> found =
      (*index)->Search({.query = "pelican", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(found) << found.error().ToString();
  EXPECT_EQ(found->hits.size(), 20u);  // the limit; 30 messages hold the word
  Result<SessionPage> page = (*store)->ListSessions({.limit = 100});
  ASSERT_TRUE(page) << page.error().ToString();
  ASSERT_EQ(page->sessions.size(), 2u * kStores);
  Result<ErasureReceipt> erased =
      (*store)->Erase({.session_ids = {page->sessions.back().id}, .reason = "test"});
  ASSERT_TRUE(erased) << erased.error().ToString();
  Result<SessionPage> after = (*store)->ListSessions({.limit = 100});
  ASSERT_TRUE(after);
  EXPECT_LT(after->sessions.size(), page->sessions.size());
}

TEST(PgConnections, StatementsAreNotPreparedWhenTheEnvironmentSaysSo) {
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  ScopedEnv off("SESSIONDB_PG_PREPARE", "0");
  PgPool pool(db.uri(), {}, PgPoolLimits{});
  Result<postgres::PgLease> conn = pool.Acquire();
  ASSERT_TRUE(conn);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*conn)->Run("SELECT 1").ok());
  Result<postgres::PgResult> prepared =
      (*conn)->Exec("SELECT count(*) FROM pg_prepared_statements");
  ASSERT_TRUE(prepared);
  EXPECT_EQ(prepared->Int(0, 0), 0);
}

TEST(PgConnections, AStatementRunTwiceIsPreparedOnce) {
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  PgPool pool(db.uri(), {}, PgPoolLimits{});
  Result<postgres::PgLease> conn = pool.Acquire();
  ASSERT_TRUE(conn);
  ASSERT_TRUE((*conn)->Run("SELECT 2").ok());
  auto count = [&] {
    Result<postgres::PgResult> r =
        (*conn)->Exec("SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT 2'");
    return r ? r->Int(0, 0) : -1;
  };
  EXPECT_EQ(count(), 0) << "a statement run once is sent unnamed";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*conn)->Run("SELECT 2").ok());
  EXPECT_EQ(count(), 1);
  // A prepared statement lost (as a pooler would lose it) is run unnamed.
  ASSERT_TRUE((*conn)->Run("DEALLOCATE ALL").ok());
  EXPECT_TRUE((*conn)->Run("SELECT 2").ok());
  EXPECT_EQ(count(), 0);
}

}  // namespace
}  // namespace sessiondb::testing::pg_connections
