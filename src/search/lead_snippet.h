// The snippet of a hit that the keyword index did not find (a vector hit):
// the start of its text, with the query's words highlighted where they occur.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "store/index_backend.h"

namespace sessiondb::search {

// The first `max_bytes` of `text` on one line (whitespace collapsed, cut on a
// character boundary and followed by " …" when cut), with `terms` (as
// SplitWords makes them) highlighted where they occur as whole words.
store::Snippet LeadSnippet(std::string_view text, const std::vector<std::string>& terms,
                           size_t max_bytes = 200);

}  // namespace sessiondb::search
