// A small history to look at in the web browser the first time: a coding
// conversation with Markdown, code and a tool call, a fork of it, one with a
// picture, a compacted one and an archived one. `sessiondb serve --demo`
// seeds it into a store that has no sessions at all; every session it makes
// carries `"demo": true` in its metadata, so `sessiondb demo --remove` can
// take exactly those out again once real history is there.
// Thread-safety: like the Store.
#pragma once

#include <string>
#include <vector>

#include "sessiondb/store.h"

namespace sessiondb::server {

// The metadata key that marks a demo session (its value is JSON `true`).
inline constexpr char kDemoMetadataKey[] = "demo";

// Seeds the demo sessions when the store holds none (archived included);
// returns how many it created (0 when the store was not empty).
Result<int> SeedDemoHistory(Store& store);

// True when the session's metadata marks it as a demo session.
bool IsDemoSession(const Session& session);

// Every demo session in the store (archived included), forks before the
// sessions they were forked from, so they can be deleted in this order.
Result<std::vector<Session>> ListDemoSessions(Store& store);

// Deletes every demo session and nothing else; returns how many it deleted.
// On an error, the sessions deleted before it stay deleted.
Result<int> RemoveDemoHistory(Store& store);

}  // namespace sessiondb::server
