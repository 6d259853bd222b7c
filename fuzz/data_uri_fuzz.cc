// Fuzz target: data URIs (src/blob/data_uri), as message parts carry images
// and files in the HTTP API, MCP and agents-kt / ac-dc imports. Properties: a
// refusal says why; what parses is made again (MakeDataUri) and parses to the
// same type and bytes; the decoded bytes go through the sniffer too; the
// payload decoded in pieces (a staged image) gives the same bytes or refusal.

#include "blob/base64.h"
#include "blob/data_uri.h"
#include "blob/media_type.h"
#include "fuzz_support.h"

namespace {

using namespace sessiondb;

// The payload decoded in pieces, as a staged image is (Base64DecodeInto):
// the same bytes as Base64Decode or its very refusal, and every prefix it
// reports final is final.
void CheckDecodedInPieces(std::string_view base64) {
  const Result<std::string> whole = blob::Base64Decode(base64);
  const Result<size_t> size = blob::Base64DecodedSize(base64);
  if (!size) {
    FUZZ_CHECK(!whole);
    FUZZ_CHECK(size.error().message() == whole.error().message());
    return;
  }
  std::string out(*size, '\0');
  size_t last = 0;
  const Status s = blob::Base64DecodeInto(base64, out.data(), 7, [&](size_t n) {
    FUZZ_CHECK(n > last && n <= *size);
    if (whole) FUZZ_CHECK(out.compare(0, n, *whole, 0, n) == 0);
    last = n;
  });
  FUZZ_CHECK(s.ok() == whole.has_value());
  if (whole) {
    FUZZ_CHECK(out == *whole);
    FUZZ_CHECK(last == *size);
  } else {
    FUZZ_CHECK(s.message() == whole.error().message());
    FUZZ_CHECK(last < *size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  const std::string_view input = fuzz::AsView(data, size);
  if (Result<blob::DataUriParts> parts = blob::SplitDataUri(input)) {
    CheckDecodedInPieces(parts->base64);
  }
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
