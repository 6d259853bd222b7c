// What the trash, erasure and the ledger of forgetting (forget.h) share
// between the front and the backends: the ledger's form of counts, the
// counts of an erasure in the receipt's order.
// Thread-safety: plain functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/forget.h"
#include "store/write_transaction.h"

namespace sessiondb::store {

using Counts = std::vector<std::pair<std::string, int64_t>>;

// The kinds an erasure counts, in ErasureReceipt::counts' order.
inline constexpr const char* kErasureKinds[] = {
    "sessions",   "events",      "messages",         "blobs",      "blob_bytes",    "drafts",
    "usage_rows", "code_writes", "search_documents", "embeddings", "file_versions",
};

// `rows` with the blobs deleted, every kind present, in the receipt's order.
Counts ErasureCounts(const ErasedRows& rows, int64_t blobs, int64_t blob_bytes);

// Counts as the ledger's column holds them: "kind=n,kind=n" (kinds are words
// without '=' or ','), and back; DecodeCounts skips what it cannot read.
std::string EncodeCounts(const Counts& counts);
Counts DecodeCounts(std::string_view text);

// kInvalidArgument unless 1 <= limit <= 1000 and before_id >= 0.
Status ValidateLedgerQuery(const LedgerQuery& query);

}  // namespace sessiondb::store
