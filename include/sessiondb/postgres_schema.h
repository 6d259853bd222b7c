// The schema version of a PostgreSQL store: what Store::Open brings a
// `postgresql://` store to and reads (docs/formats.md). The embedded
// store's is kSchemaVersion (store.h); each backend migrates on its own.
#pragma once

namespace sessiondb {

inline constexpr int kPostgresSchemaVersion = 10;

}  // namespace sessiondb
