// A small history to look at in the web browser the first time: a coding
// conversation with Markdown, code and a tool call, a fork of it, one with a
// picture, a compacted one and an archived one. `sessiondb serve --demo`
// seeds it into a store that has no sessions yet.
// Thread-safety: like the Store.
#pragma once

#include "sessiondb/store.h"

namespace sessiondb::server {

// Seeds the demo sessions when the store holds none (archived included);
// returns how many it created (0 when the store was not empty).
Result<int> SeedDemoHistory(Store& store);

}  // namespace sessiondb::server
