#include "interop/long_record.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>

#include "blob/base64.h"
#include "core/text_rules.h"

namespace sessiondb::interop {
namespace {

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

}  // namespace

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

std::optional<CutString> TakeCut(std::vector<CutString>* cut, const nlohmann::json* node) {
  auto it =
      std::find_if(cut->begin(), cut->end(), [&](const CutString& c) { return c.node == node; });
  if (it == cut->end()) return std::nullopt;
  CutString taken = std::move(*it);
  cut->erase(it);
  return taken;
}

std::optional<Part> CutImagePart(ImportSink& sink, const CutString& cut, size_t prefix,
                                 std::string_view declared_mime, std::string_view where) {
  const size_t chars = cut.bytes > prefix ? cut.bytes - prefix : 0;
  size_t padding = 0;
  for (auto c = cut.tail.rbegin(); c != cut.tail.rend() && *c == '=' && padding < 2; ++c) {
    ++padding;
  }
  const auto size = static_cast<int64_t>(chars / 4 * 3 + (chars % 4) * 3 / 4 - padding);
  // The head's whole groups of four decode to the image's first bytes.
  std::string_view b64 = std::string_view(cut.head).substr(std::min(prefix, cut.head.size()));
  size_t n = 0;
  while (n < b64.size() && IsBase64Char(b64[n])) ++n;
  std::string head = blob::Base64Decode(b64.substr(0, n / 4 * 4)).value_or("");
  std::string reason =
      "it is " + FormatBytes(size) + " (" + FormatBytes(static_cast<int64_t>(chars)) +
      " of base64 in its record); an import reads at most " +
      std::to_string(kMaxRecordTextBytes >> 20) +
      " MiB of text of one record, a bound that keeps its memory under 256 MiB and that no "
      "option raises (--max-attachment-bytes does not), so only its descriptor is kept";
  return sink.NotStoredPart(PartType::kImage, head, size, declared_mime, "", where,
                            std::move(reason));
}

void WaitForWriter(ImportSink& sink) {
  (void)sink.store();
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace sessiondb::interop
