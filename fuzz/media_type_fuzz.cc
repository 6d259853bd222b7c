// Fuzz target: MIME sniffing and image headers (src/blob/media_type), which
// read every attachment's bytes (HTTP uploads, imports) before they are
// stored. Properties: an image has a supported image type and dimensions
// that are not negative; a refusal is kInvalidArgument with a reason; the
// declared-type helpers take any text.

#include "blob/media_type.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  const std::string_view input = fuzz::AsView(data, size);
  Result<blob::MediaInfo> info = blob::SniffMedia(input);
  if (info) {
    FUZZ_CHECK(!info->mime.empty());
    FUZZ_CHECK(info->is_image == blob::IsSupportedImageMime(info->mime));
    FUZZ_CHECK(info->width >= 0 && info->height >= 0);
  } else {
    FUZZ_CHECK(info.error().code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(!info.error().message().empty());
  }
  // The same bytes as a declared Content-Type or part "mime" field.
  const std::string normal = blob::NormalizeMime(input);
  FUZZ_CHECK(blob::IsSupportedImageMime(normal) == blob::IsSupportedImageMime(input));
  FUZZ_CHECK(!blob::ExtensionForMime(input).empty());
  return 0;
}
