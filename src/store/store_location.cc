// What a store's location says about it: StoreKindOf and StoreKindName
// (include/sessiondb/store.h).
#include "sessiondb/store.h"

namespace sessiondb {

StoreKind StoreKindOf(std::string_view location) {
  if (location.starts_with("postgres://") || location.starts_with("postgresql://")) {
    return StoreKind::kPostgres;
  }
  return StoreKind::kEmbedded;
}

std::string_view StoreKindName(StoreKind kind) {
  switch (kind) {
    case StoreKind::kEmbedded:
      return "embedded";
    case StoreKind::kPostgres:
      return "postgresql";
  }
  return "embedded";
}

}  // namespace sessiondb
