// RecycledStore: the store the fuzz targets share (see fuzz_support.h). Kept
// apart from fuzz_support.cc so the targets that need no store link only
// sessiondb_base.

#include <cstdio>
#include <system_error>

#include "fuzz_support.h"

namespace sessiondb::fuzz {

namespace fs = std::filesystem;

namespace {

struct StoreSlot {
  std::unique_ptr<Store> store;
  fs::path path;
  int runs = 0;
  int generation = 0;
};

StoreSlot& Slot() {
  static StoreSlot slot;
  return slot;
}

}  // namespace

Store& RecycledStore(int runs_per_store) {
  StoreSlot& slot = Slot();
  if (slot.store && ++slot.runs < runs_per_store) return *slot.store;
  slot.store.reset();
  std::error_code ec;
  if (!slot.path.empty()) fs::remove_all(slot.path, ec);
  slot.path = ScratchRoot() / ("store-" + std::to_string(slot.generation++));
  StoreOptions options{.durability = Durability::kProcessCrashSafe,
                       .warn = [](std::string_view) {}};
  auto store = Store::Open(slot.path.string(), options);
  if (!store) {
    std::fprintf(stderr, "sessiondb fuzz: cannot open a store: %s\n",
                 store.error().ToString().c_str());
    std::abort();
  }
  slot.store = std::move(*store);
  slot.runs = 0;
  return *slot.store;
}

const fs::path& RecycledStorePath() { return Slot().path; }

}  // namespace sessiondb::fuzz
