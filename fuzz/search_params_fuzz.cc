// Fuzz target: the words of a search request as query parameters spell them
// (src/api/search_args: mode, archived, kind, since/until; the importers'
// ISO-8601 reader behind them). The input is read as a query string,
// "name=value&name=value", and every value goes to every parser, which must
// answer a value or a kInvalidArgument naming the parameter.

#include "api/search_args.h"
#include "core/iso_time.h"
#include "fuzz_support.h"

namespace {

void CheckRefusal(const sessiondb::Status& status) {
  FUZZ_CHECK(status.code() == sessiondb::StatusCode::kInvalidArgument);
  FUZZ_CHECK(status.message().find("since") != std::string::npos ||
             status.message().find("mode") != std::string::npos ||
             status.message().find("archived") != std::string::npos ||
             status.message().find("kind") != std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  std::string_view rest = fuzz::AsView(data, size);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = pair.find('=');
    const std::string value(eq == std::string_view::npos ? pair : pair.substr(eq + 1));

    if (auto r = ParseSearchMode(value, "mode"); !r) CheckRefusal(r.error());
    if (auto r = ParseArchivedFilter(value, "archived"); !r) CheckRefusal(r.error());
    SearchFilter filter;
    if (Status s = ApplySearchKind(value, "kind", filter); !s.ok()) CheckRefusal(s);
    if (auto r = ParseSearchTime(value, "since"); !r) CheckRefusal(r.error());
    (void)ParseIsoTime(value);
  }
  return 0;
}
