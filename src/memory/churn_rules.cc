#include "memory/churn_rules.h"

#include <array>
#include <utility>

#include "core/enum_names.h"

namespace sessiondb {
namespace {

constexpr std::array<std::pair<ChurnTier, std::string_view>, 4> kTiers{{
    {ChurnTier::kGold, "gold"},
    {ChurnTier::kSilver, "silver"},
    {ChurnTier::kBronze, "bronze"},
    {ChurnTier::kRed, "red"},
}};

}  // namespace

std::string_view ChurnTierName(ChurnTier tier) { return NameOf(tier, kTiers); }
Result<ChurnTier> ParseChurnTier(std::string_view name) {
  return ParseName(name, kTiers, "churn tier");
}

namespace memory {

ChurnTier ClassifyChurn(int64_t edits_30d, int64_t edits_24h) {
  if (edits_24h >= 5 || edits_30d > 20) return ChurnTier::kRed;
  if (edits_30d >= 11) return ChurnTier::kBronze;
  if (edits_30d >= 3) return ChurnTier::kSilver;
  return ChurnTier::kGold;
}

std::string PreviewCode(std::string_view code, size_t max_chars) {
  if (code.size() <= max_chars) return std::string(code);
  // A line break at index max_chars still leaves max_chars whole bytes before it.
  size_t cut = code.rfind('\n', max_chars);
  if (cut == std::string_view::npos || cut == 0) {
    cut = max_chars;
    // Back off while code[cut] continues the character that started before it.
    while (cut > 0 && (static_cast<unsigned char>(code[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out(code.substr(0, cut));
  out += kTruncatedMarker;
  return out;
}

}  // namespace memory
}  // namespace sessiondb
