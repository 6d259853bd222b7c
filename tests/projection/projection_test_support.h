// Hand-built events for the projection tests: messages, resource views and
// compactions with fixed ids and seqs, a real 1x1 PNG, and a bytes function
// that serves it from memory (or fails, for the missing-blob cases).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "blob/sha256.h"
#include "sessiondb/projection.h"
#include "sessiondb/types.h"
#include "test_support.h"

namespace sessiondb::testing {

// A valid 1x1 8-bit grayscale PNG (signature, IHDR, one IDAT, IEND) with a
// black pixel: the smallest image every provider decodes.
inline std::string TinyPng() {
  std::string ihdr = U32Be(1) + U32Be(1) + std::string("\x08\x00\x00\x00\x00", 5);
  // zlib stream of the one scanline: filter byte 0, pixel 0.
  std::string idat("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10);
  return std::string("\x89PNG\r\n\x1a\n", 8) + PngChunk("IHDR", ihdr) + PngChunk("IDAT", idat) +
         PngChunk("IEND", "");
}

// The descriptor the store keeps for `bytes` (a 1x1 PNG) attached as `name`.
inline Resource PngResource(const std::string& resource_id, const std::string& name,
                            const std::string& bytes = TinyPng()) {
  Resource r;
  r.resource_id = resource_id;
  r.content_sha256 = blob::Sha256Hex(bytes);
  r.mime = "image/png";
  r.size = static_cast<int64_t>(bytes.size());
  r.width = 1;
  r.height = 1;
  r.name = name;
  return r;
}

inline Part StoredPart(PartType type, const Resource& resource) {
  Part p;
  p.type = type;
  p.resource = resource;
  return p;
}
inline Part ImagePart(const Resource& resource) { return StoredPart(PartType::kImage, resource); }

inline Event MessageEvent(int64_t seq, Role role, std::vector<Part> parts) {
  Event e;
  e.id = "evt_" + std::to_string(seq);
  e.session_id = "ses_test";
  e.seq = seq;
  e.ts_ms = 1'700'000'000'000 + seq * 1000;
  e.type = EventType::kMessage;
  e.message.id = e.id;
  e.message.session_id = e.session_id;
  e.message.seq = seq;
  e.message.ts_ms = e.ts_ms;
  e.message.role = role;
  e.message.parts = std::move(parts);
  return e;
}

inline Event TextEvent(int64_t seq, Role role, const std::string& text) {
  return MessageEvent(seq, role, {Part::Text(text)});
}

inline Event ViewEvent(int64_t seq, const Resource& resource, const std::string& reason,
                       int64_t message_seq) {
  Event e = MessageEvent(seq, Role::kUser, {});
  e.type = EventType::kResourceView;
  e.message = Message();
  e.resource_view.resource_id = resource.resource_id;
  e.resource_view.reason = reason;
  e.resource_view.resource = resource;
  e.resource_view.message_seq = message_seq;
  return e;
}

inline Event CompactionEvent(int64_t seq, int64_t from_seq, int64_t to_seq,
                             const std::string& summary, const std::string& limitations = "",
                             std::vector<Resource> images = {}) {
  Event e = MessageEvent(seq, Role::kUser, {});
  e.type = EventType::kCompaction;
  e.message = Message();
  e.compaction.from_seq = from_seq;
  e.compaction.to_seq = to_seq;
  e.compaction.summary = summary;
  e.compaction.strategy = "llm-summary";
  e.compaction.model = "test-model";
  e.compaction.limitations = limitations;
  e.compaction.images = std::move(images);
  return e;
}

// Serves blobs from memory by sha256; kNotFound for any other, like a store
// whose blob was deleted. Counts its calls.
class FakeBlobs {
 public:
  void Add(const std::string& bytes) { blobs_[blob::Sha256Hex(bytes)] = bytes; }
  int calls() const { return calls_; }
  ResourceBytesFn Fn() {
    return [this](const Resource& r) -> Result<std::string> {
      ++calls_;
      auto it = blobs_.find(r.content_sha256);
      if (it == blobs_.end()) return Err(Status::NotFound("no blob " + r.content_sha256));
      return it->second;
    };
  }

 private:
  std::map<std::string, std::string> blobs_;
  int calls_ = 0;
};

}  // namespace sessiondb::testing
