// The searchable text of an event: what every backend's full-text index holds
// for it (SQLite's sessiondb_search_text function, PostgreSQL's search_docs),
// so a query finds the same events on both.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "sessiondb/types.h"

namespace sessiondb {

// `text`, then each tool call's name and arguments and each tool result's
// output found in the message body JSON `body`, one per line. A body that is
// not JSON adds nothing.
std::string SearchText(std::string_view text, std::string_view body);

// The same as SearchText(text, body) for the row a message is stored as
// (`text` its text column, its body EncodeMessageBody's), without parsing the
// body: for writers that still hold the Message.
std::string MessageSearchText(std::string_view text, const Message& message);

}  // namespace sessiondb
