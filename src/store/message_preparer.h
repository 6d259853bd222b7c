// Turns a Message handed to Append into what a backend stores: validated
// text, attachments decoded, sniffed, measured against the limits and hashed,
// each described by a Resource, with the bytes set aside as pending blobs.
// Shared by every backend so that the rules are the same everywhere. Nothing
// is written here: a refused message leaves no trace.
// Thread-safety: pure functions of their arguments (reads local files named
// by kLocalFile sources).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"

// Named only: search and the CLI see this header but not the blob module
// (docs/ARCHITECTURE.md), hence shared_ptr, which needs no complete type
// where it is destroyed.
namespace sessiondb::blob {
class StagedBlob;
}  // namespace sessiondb::blob

namespace sessiondb {

struct PendingBlob {
  std::string sha256;
  std::string bytes;
  // The bytes already written to a temp file, synced or being synced
  // (Backend::StageBlob), or null. Its writer no longer reads `bytes`.
  std::shared_ptr<blob::StagedBlob> staged;
};

struct PreparedMessage {
  // The message's id: the caller's, or one made for it. Read this rather than
  // message().id, which a borrowed message that came without one leaves empty.
  std::string id;
  std::string text;                            // the text parts joined, for the index columns
  std::vector<PendingBlob> blobs;              // distinct digests only
  std::vector<std::string> referenced_sha256;  // every blob the message refers to, distinct

  // The message as stored: attachment parts carry `resource`, not `source`.
  const Message& message() const { return borrowed_ != nullptr ? *borrowed_ : owned_; }
  // The message is `m` itself, which must outlive this (no copy).
  void Borrow(const Message& m) { borrowed_ = &m; }
  // The message is `m`, a copy preparing may then change.
  Message& Own(Message m) {
    owned_ = std::move(m);
    borrowed_ = nullptr;
    return owned_;
  }
  // The copy, or null when borrowed.
  Message* owned() { return borrowed_ != nullptr ? nullptr : &owned_; }

 private:
  const Message* borrowed_ = nullptr;
  Message owned_;
};

// Answers whether a blob with this digest is already stored, for parts that
// refer to an existing blob by descriptor instead of carrying bytes.
using BlobExistsFn = std::function<bool(std::string_view sha256)>;

// Starts writing an attachment's bytes before they are hashed, the first
// `ready` of them at once and the rest as StagedBlob::Ready announces them
// (the SQLite backend's blob folder, FileBlobStore::Stage); returns null to
// decline. The bytes stay put until the StagedBlob's WaitWritten returns.
using BlobStageFn =
    std::function<std::shared_ptr<blob::StagedBlob>(std::string_view bytes, size_t ready)>;

// Which rules a message is held to.
enum class Admission {
  // A message appended now: every rule and every limit of StoreOptions.
  kAppend,
  // History written elsewhere (RestoreSession, RestoreEvents: copies between
  // stores, imports), kept as it was written. Count limits
  // (max_images_per_message) do not apply: they shape what a user sends now,
  // not what an older app already saved. An image or file part may be a
  // descriptor whose bytes the store never held when it says why
  // (Resource::not_stored). Byte limits still apply to any bytes handed over
  // as a source; importers apply their own, higher ones before that.
  kRestore,
};

// Whether part `p` holds something to show: text or reasoning other than
// whitespace (or reasoning with its provider's signature), or any other
// part. PrepareMessage refuses a message none of whose parts does.
bool PartHasContent(const Part& p);

// Validates `message` and ingests its attachments. kInvalidArgument (naming
// the part and the rule broken) for an empty message, text that is not UTF-8,
// a negative token count in usage, malformed JSON fields, a malformed data URI or base64, bytes
// that are not the image they claim to be, an unsupported image type, or an attachment beyond the
// limits in `options` (for `admission` kAppend, also more images than max_images_per_message);
// kNotFound for a local file that does not exist. `new_id` makes ids for messages and resources.
// With `stage`, a large attachment's bytes are written while they are hashed
// (PendingBlob::staged); a refused message drops what was staged, leaving no file.
// With `may_borrow`, a message none of whose parts preparing changes (no
// attachment, no link) is not copied: the result refers to `message`, which
// must then outlive it (an append's, whose caller waits for it).
Result<PreparedMessage> PrepareMessage(const Message& message, const StoreOptions& options,
                                       Admission admission, const BlobExistsFn& blob_exists,
                                       const std::function<std::string()>& new_id,
                                       const BlobStageFn& stage = nullptr, bool may_borrow = false);

}  // namespace sessiondb
