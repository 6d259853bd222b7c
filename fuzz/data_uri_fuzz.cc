// Fuzz target: data URIs (src/blob/data_uri), as message parts carry images
// and files in the HTTP API, MCP and agents-kt / ac-dc imports. Properties: a
// refusal says why; what parses is made again (MakeDataUri) and parses to the
// same type and bytes; the decoded bytes go through the sniffer too.

#include "blob/data_uri.h"
#include "blob/media_type.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  const std::string_view input = fuzz::AsView(data, size);
  Result<blob::DataUri> parsed = blob::ParseDataUri(input);
  if (!parsed) {
    FUZZ_CHECK(parsed.error().code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(!parsed.error().message().empty());
    return 0;
  }
  const std::string again = blob::MakeDataUri(parsed->mime, parsed->bytes);
  Result<blob::DataUri> reparsed = blob::ParseDataUri(again);
  FUZZ_CHECK(reparsed.has_value());
  FUZZ_CHECK(reparsed->bytes == parsed->bytes);
  FUZZ_CHECK(reparsed->mime == parsed->mime);
  (void)blob::SniffMedia(parsed->bytes);
  return 0;
}
