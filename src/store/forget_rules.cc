#include "store/forget_rules.h"

#include <charconv>

namespace sessiondb::store {

Counts ErasureCounts(const ErasedRows& rows, int64_t blobs, int64_t blob_bytes) {
  return {{"sessions", rows.sessions},
          {"events", rows.events},
          {"messages", rows.messages},
          {"blobs", blobs},
          {"blob_bytes", blob_bytes},
          {"drafts", rows.drafts},
          {"usage_rows", rows.usage_rows},
          {"code_writes", rows.code_writes},
          {"search_documents", rows.search_documents},
          {"embeddings", rows.embeddings},
          {"file_versions", rows.file_versions}};
}

std::string EncodeCounts(const Counts& counts) {
  std::string out;
  for (const auto& [kind, n] : counts) {
    if (!out.empty()) out += ',';
    out += kind + "=" + std::to_string(n);
  }
  return out;
}

Counts DecodeCounts(std::string_view text) {
  Counts counts;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    int64_t n = 0;
    const std::string_view digits = item.substr(eq + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size()) continue;
    counts.emplace_back(std::string(item.substr(0, eq)), n);
  }
  return counts;
}

Status ValidateLedgerQuery(const LedgerQuery& query) {
  if (query.limit < 1 || query.limit > 1000) {
    return Status::InvalidArgument("a ledger read takes 1 to 1000 entries, not " +
                                   std::to_string(query.limit));
  }
  if (query.before_id < 0) return Status::InvalidArgument("before_id must not be negative");
  return Status::Ok();
}

}  // namespace sessiondb::store
