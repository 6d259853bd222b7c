// What the three provider shapes share: data URIs of images, joined texts.
#include "projection/shapes.h"

namespace sessiondb::projection {

std::string ImageDataUri(const Block& image) {
  return "data:" + image.mime + ";base64," + image.base64;
}

std::string JoinedText(const Turn& turn) {
  std::string out;
  bool first = true;
  for (const Block& b : turn.blocks) {
    if (b.kind != Block::Kind::kText) continue;
    if (!first) out += "\n";
    out += b.text;
    first = false;
  }
  return out;
}

}  // namespace sessiondb::projection
