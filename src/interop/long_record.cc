#include "interop/long_record.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "interop/source_scan.h"

namespace sessiondb::interop {

Result<LongRecord> ParseLongRecord(std::string_view text) {
  Result<LeanDocument> lean = ParseLean(text, kLongStringBytes, kMaxLeanBytes);
  LongRecord out;
  Status inflated =
      lean ? InflateLongStrings(&*lean, kMaxRecordTextBytes, kCutNote, &out.cut) : lean.error();
  if (!inflated.ok()) return Err(std::move(inflated));
  out.tree = std::move(lean->tree);
  return out;
}

std::string CutReason(size_t cut_strings) {
  return "the record holds more than the " + std::to_string(kMaxRecordTextBytes >> 20) +
         " MiB of text the import keeps of one record: " + std::to_string(cut_strings) +
         " of its strings are cut there, each ending in a note";
}

void WaitForWriter(ImportSink& sink) {
  (void)sink.store();
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace sessiondb::interop
