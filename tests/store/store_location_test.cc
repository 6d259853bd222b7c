// What a store's location says: which backend Store::Open picks for it.
#include <string>

#include "gtest/gtest.h"
#include "sessiondb/store.h"

namespace sessiondb {
namespace {

TEST(StoreKindOf, PostgresUrisAreThePostgresBackend) {
  EXPECT_EQ(StoreKindOf("postgresql://me@db/chats"), StoreKind::kPostgres);
  EXPECT_EQ(StoreKindOf("postgres://me@db/chats?namespace=team-a"), StoreKind::kPostgres);
  EXPECT_EQ(StoreKindName(StoreKindOf("postgresql:///chats")), "postgresql");
}

TEST(StoreKindOf, EverythingElseIsADirectoryOfTheEmbeddedBackend) {
  for (const std::string location :
       {"/home/me/.local/share/sessiondb", "chats", "postgres", "postgres_backup/store",
        "./postgresql://not-a-uri", "POSTGRESQL://upper", "", "sqlite:///x"}) {
    EXPECT_EQ(StoreKindOf(location), StoreKind::kEmbedded) << location;
  }
  EXPECT_EQ(StoreKindName(StoreKind::kEmbedded), "embedded");
}

TEST(StoreKindOf, TheEmbeddedDatabaseFileKeepsItsName) {
  // Existing stores are found by this name; changing it orphans them.
  EXPECT_EQ(kEmbeddedDatabaseFile, "sessiondb.db");
}

}  // namespace
}  // namespace sessiondb
