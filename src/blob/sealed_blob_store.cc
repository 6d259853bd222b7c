#include "blob/sealed_blob_store.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "blob/sha256.h"

namespace sessiondb::blob {
namespace {

constexpr std::string_view kMagic = "SDBB";
constexpr uint8_t kVersion = 1;
// magic | version | 3 zero bytes | u64 size | u32 chunk bytes | sha256
constexpr size_t kHeaderBytes = 4 + 1 + 3 + 8 + 4 + 32;
constexpr size_t kHeaderRecordBytes = kHeaderBytes + cipher::kSealOverhead;
// A header may name another chunk size (a later writer's); beyond this it
// is not ours, and a reader would have to hold it whole.
constexpr uint32_t kMaxChunkBytes = 16 * 1024 * 1024;

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(std::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(in[i])} << (8 * i);
  return v;
}

std::string HeaderAssociated(std::string_view inner_name) {
  std::string ad("sdb-blob-header");
  ad.push_back('\0');
  ad += inner_name;
  return ad;
}

std::string ChunkAssociated(std::string_view inner_name, uint64_t index, bool last) {
  std::string ad("sdb-blob-chunk");
  ad.push_back('\0');
  ad += inner_name;
  PutLe(&ad, index, 8);
  ad.push_back(last ? '\1' : '\0');
  return ad;
}

// What a blob's header says.
struct Header {
  std::string sha256;  // hex
  uint64_t size = 0;
  uint32_t chunk_bytes = 0;

  uint64_t chunks() const { return std::max<uint64_t>(1, (size + chunk_bytes - 1) / chunk_bytes); }
  // The length of the sealed file this header starts.
  uint64_t file_bytes() const {
    return kHeaderRecordBytes + size + chunks() * cipher::kSealOverhead;
  }
  // The sealed length of chunk `i`.
  uint64_t record_bytes(uint64_t i) const {
    return std::min<uint64_t>(chunk_bytes, size - i * chunk_bytes) + cipher::kSealOverhead;
  }
};

Status DoesNotDecrypt(std::string_view sha256, std::string_view why) {
  return Status::Corruption("blob " + std::string(sha256) +
                            " does not decrypt: " + std::string(why));
}

// The inner store names files by keyed names; its errors must name the blob
// the caller asked for.
Status Renamed(Status s, std::string_view sha256) {
  if (s.code() == StatusCode::kNotFound) {
    return Status::NotFound("blob " + std::string(sha256) + " is missing");
  }
  return s;
}

// The header of the blob in inner file `inner_name`, from its first
// kHeaderRecordBytes; `what` names the blob in errors (its sha256, or the
// inner name when listing).
Result<Header> OpenHeader(const cipher::SecretKey& data_key, std::string_view inner_name,
                          std::string_view record, std::string_view what) {
  if (record.size() < kHeaderRecordBytes) {
    return Err(DoesNotDecrypt(what, "its file is shorter than a header"));
  }
  Result<std::string> plain = cipher::Open(data_key, record.substr(0, kHeaderRecordBytes),
                                           HeaderAssociated(inner_name), "header");
  if (!plain) {
    return Err(
        DoesNotDecrypt(what,
                       "its header fails authentication (another key, a changed byte, or a file "
                       "copied from another blob)"));
  }
  std::string_view h = *plain;
  if (h.substr(0, 4) != kMagic || static_cast<uint8_t>(h[4]) != kVersion) {
    return Err(DoesNotDecrypt(what, "its header is of an unknown format version"));
  }
  Header header;
  header.size = GetLe(h.substr(8), 8);
  header.chunk_bytes = static_cast<uint32_t>(GetLe(h.substr(16), 4));
  header.sha256 = cipher::ToHex(h.substr(20, 32));
  if (header.chunk_bytes == 0 || header.chunk_bytes > kMaxChunkBytes ||
      header.size > (uint64_t{1} << 50)) {
    return Err(DoesNotDecrypt(what, "its header names an impossible size"));
  }
  return header;
}

// Why chunk `i` of the blob did not open.
Status ChunkDoesNotOpen(const Header& header, uint64_t i) {
  return DoesNotDecrypt(header.sha256, "chunk " + std::to_string(i) + " of " +
                                           std::to_string(header.chunks()) +
                                           " fails authentication (a changed byte, or a chunk "
                                           "moved)");
}

// The plaintext of chunk `i` from its sealed record.
Result<std::string> OpenChunk(const cipher::SecretKey& data_key, std::string_view inner_name,
                              const Header& header, uint64_t i, std::string_view record) {
  Result<std::string> plain = cipher::Open(
      data_key, record, ChunkAssociated(inner_name, i, i + 1 == header.chunks()), "chunk");
  if (!plain) return Err(ChunkDoesNotOpen(header, i));
  return plain;
}

// Reads exactly `n` bytes from `reader`.
Result<std::string> ReadExactly(BlobReader* reader, size_t n, std::string_view sha256) {
  std::string out;
  out.reserve(n);
  while (out.size() < n) {
    ASSIGN_OR_RETURN(std::string piece, reader->Read(n - out.size()));
    if (piece.empty()) return Err(DoesNotDecrypt(sha256, "its file ends early"));
    out += piece;
  }
  return out;
}

// Decrypts a sealed blob a chunk at a time from the inner store's reader.
class SealedBlobReader final : public BlobReader {
 public:
  SealedBlobReader(std::unique_ptr<BlobReader> inner, const cipher::SecretKey& data_key,
                   std::string inner_name, Header header)
      : inner_(std::move(inner)),
        data_key_(data_key),
        inner_name_(std::move(inner_name)),
        header_(std::move(header)) {}

  int64_t size() const override { return static_cast<int64_t>(header_.size); }

  Result<std::string> Read(size_t max) override {
    if (done_ == header_.size) return std::string();
    if (pos_ == chunk_.size()) RETURN_IF_ERROR(LoadNextChunk());
    const size_t n = std::min(max, chunk_.size() - pos_);
    std::string out = chunk_.substr(pos_, n);
    pos_ += n;
    done_ += n;
    return out;
  }

  // Steps over whole chunks without reading them; decrypts only the chunk
  // the new position falls in.
  Status Skip(int64_t n) override {
    if (n < 0 || static_cast<uint64_t>(n) > header_.size - done_) {
      return Status::InvalidArgument("cannot skip past the end of blob " + header_.sha256);
    }
    uint64_t left = static_cast<uint64_t>(n);
    const uint64_t buffered = std::min<uint64_t>(left, chunk_.size() - pos_);
    pos_ += buffered;
    done_ += buffered;
    left -= buffered;
    if (left == 0) return Status::Ok();
    // At a chunk boundary now: every chunk skipped whole is a full one.
    const uint64_t whole = left / header_.chunk_bytes;
    if (whole > 0) {
      RETURN_IF_ERROR(inner_->Skip(
          static_cast<int64_t>(whole * (header_.chunk_bytes + cipher::kSealOverhead))));
      next_ += whole;
      done_ += whole * header_.chunk_bytes;
      left -= whole * header_.chunk_bytes;
      chunk_.clear();
      pos_ = 0;
    }
    if (left == 0) return Status::Ok();
    RETURN_IF_ERROR(LoadNextChunk());
    pos_ = left;
    done_ += left;
    return Status::Ok();
  }

 private:
  Status LoadNextChunk() {
    if (next_ >= header_.chunks()) return DoesNotDecrypt(header_.sha256, "its file ends early");
    ASSIGN_OR_RETURN(std::string record,
                     ReadExactly(inner_.get(), header_.record_bytes(next_), header_.sha256));
    ASSIGN_OR_RETURN(chunk_, OpenChunk(data_key_, inner_name_, header_, next_, record));
    ++next_;
    pos_ = 0;
    return Status::Ok();
  }

  const std::unique_ptr<BlobReader> inner_;
  const cipher::SecretKey data_key_;
  const std::string inner_name_;
  const Header header_;
  std::string chunk_;  // the plaintext of chunk next_ - 1
  size_t pos_ = 0;     // bytes of chunk_ already returned
  uint64_t next_ = 0;  // the chunk the inner reader stands at
  uint64_t done_ = 0;  // plaintext bytes returned or skipped
};

class SealedBlobStore final : public BlobStore {
 public:
  SealedBlobStore(std::unique_ptr<BlobStore> inner, const cipher::SecretKey& key)
      : inner_(std::move(inner)),
        name_key_(key.Derive("blob-name")),
        data_key_(key.Derive("blob-data")) {}

  Status Put(std::string_view sha256, std::string_view bytes) override {
    if (!IsSha256Hex(sha256)) return NotADigest(sha256);
    const std::string name = InnerName(sha256);
    return Renamed(inner_->Put(name, SealBlob(name, sha256, bytes)), sha256);
  }

  // Seals every blob (each digest once), then hands them to the inner store
  // together, so its syncs stay batched.
  Status PutAll(std::span<const BlobToPut> blobs) override {
    std::vector<std::string> names;
    std::vector<std::string> sealed;
    names.reserve(blobs.size());
    sealed.reserve(blobs.size());
    for (const BlobToPut& b : blobs) {
      if (!IsSha256Hex(b.sha256)) return NotADigest(b.sha256);
      if (b.staged != nullptr) {
        return Status::Internal("a staged blob reached a sealed blob store, which never stages");
      }
      std::string name = InnerName(b.sha256);
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      sealed.push_back(SealBlob(name, b.sha256, b.bytes));
      names.push_back(std::move(name));
    }
    std::vector<BlobToPut> inner;
    inner.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) inner.push_back({names[i], sealed[i]});
    return inner_->PutAll(inner);
  }

  // No staging: it writes the caller's plaintext to a temp file as it comes.
  std::unique_ptr<StagedBlob> Stage(std::string_view, size_t) override { return nullptr; }

  Result<std::string> Get(std::string_view sha256, bool verify) override {
    if (!IsSha256Hex(sha256)) return Err(NotADigest(sha256));
    const std::string name = InnerName(sha256);
    Result<std::string> file = inner_->Get(name, /*verify=*/false);
    if (!file) return Err(Renamed(file.error(), sha256));
    ASSIGN_OR_RETURN(Header header, OpenHeader(data_key_, name, *file, sha256));
    RETURN_IF_ERROR(CheckHeader(header, sha256, file->size()));
    // Each chunk is decrypted where it lies in the file's bytes and moved
    // down over what came before it: no second buffer of the blob's size
    // (its allocation and page faults were a third of an encrypted read).
    std::string bytes = std::move(*file);
    size_t from = kHeaderRecordBytes;
    size_t to = 0;
    for (uint64_t i = 0; i < header.chunks(); ++i) {
      const size_t n = header.record_bytes(i);
      if (!cipher::OpenSealedInPlace(data_key_, bytes.data() + from, n,
                                     ChunkAssociated(name, i, i + 1 == header.chunks()))) {
        return Err(ChunkDoesNotOpen(header, i));
      }
      std::memmove(bytes.data() + to, bytes.data() + from + cipher::kNonceBytes,
                   n - cipher::kSealOverhead);
      to += n - cipher::kSealOverhead;
      from += n;
    }
    bytes.resize(to);
    if (verify && Sha256Hex(bytes) != sha256) {
      return Err(Status::Corruption("blob " + std::string(sha256) +
                                    " is corrupt: its bytes no longer hash to its name"));
    }
    return bytes;
  }

  // The plaintext size follows from the file's size (no decryption): the
  // header is checked when the blob is read.
  Result<BlobInfo> Stat(std::string_view sha256) override {
    if (!IsSha256Hex(sha256)) return Err(NotADigest(sha256));
    Result<BlobInfo> info = inner_->Stat(InnerName(sha256));
    if (!info) return Err(Renamed(info.error(), sha256));
    const Result<int64_t> size = PlainSize(info->size);
    if (!size) return Err(DoesNotDecrypt(sha256, size.error().message()));
    return BlobInfo{std::string(sha256), *size, info->mtime_ms};
  }

  Result<std::unique_ptr<BlobReader>> OpenReader(std::string_view sha256) override {
    if (!IsSha256Hex(sha256)) return Err(NotADigest(sha256));
    std::string name = InnerName(sha256);
    Result<std::unique_ptr<BlobReader>> inner = inner_->OpenReader(name);
    if (!inner) return Err(Renamed(inner.error(), sha256));
    ASSIGN_OR_RETURN(std::string record, ReadExactly(inner->get(), kHeaderRecordBytes, sha256));
    ASSIGN_OR_RETURN(Header header, OpenHeader(data_key_, name, record, sha256));
    RETURN_IF_ERROR(CheckHeader(header, sha256, static_cast<uint64_t>((*inner)->size())));
    return std::unique_ptr<BlobReader>(
        new SealedBlobReader(std::move(*inner), data_key_, std::move(name), std::move(header)));
  }

  Status Remove(std::string_view sha256) override {
    if (!IsSha256Hex(sha256)) return NotADigest(sha256);
    return inner_->Remove(InnerName(sha256));
  }

  // Recovers each blob's sha256 from its sealed header; skips files that do
  // not open under this key (see the header comment).
  Status ForEach(const std::function<Status(const BlobInfo&)>& visit) override {
    return inner_->ForEach([&](const BlobInfo& file) -> Status {
      Result<std::unique_ptr<BlobReader>> reader = inner_->OpenReader(file.sha256);
      if (!reader) {
        if (reader.error().code() == StatusCode::kNotFound) return Status::Ok();  // raced a Remove
        return reader.error();
      }
      Result<std::string> record = ReadExactly(reader->get(), kHeaderRecordBytes, file.sha256);
      if (!record) {
        if (record.error().code() == StatusCode::kCorruption) return Status::Ok();  // too short
        return record.error();
      }
      Result<Header> header = OpenHeader(data_key_, file.sha256, *record, file.sha256);
      if (!header || InnerName(header->sha256) != file.sha256) return Status::Ok();
      return visit(BlobInfo{header->sha256, static_cast<int64_t>(header->size), file.mtime_ms});
    });
  }

 private:
  std::string InnerName(std::string_view sha256) const {
    return cipher::HmacHex(name_key_, sha256);
  }

  // The file's bytes for blob `sha256` of `bytes`, stored as `name`.
  std::string SealBlob(std::string_view name, std::string_view sha256,
                       std::string_view bytes) const {
    Header header{std::string(sha256), bytes.size(), kSealedChunkBytes};
    std::string plain(kMagic);
    plain.push_back(static_cast<char>(kVersion));
    plain.append(3, '\0');
    PutLe(&plain, header.size, 8);
    PutLe(&plain, header.chunk_bytes, 4);
    plain += *cipher::FromHex(sha256, "blob name");  // checked by IsSha256Hex
    // Sealed straight into the file's bytes: no chunk is copied twice.
    std::string out(header.file_bytes(), '\0');
    cipher::SealTo(data_key_, plain, HeaderAssociated(name), out.data());
    size_t at = kHeaderRecordBytes;
    const uint64_t chunks = header.chunks();
    for (uint64_t i = 0; i < chunks; ++i) {
      const std::string_view chunk = bytes.substr(i * kSealedChunkBytes, kSealedChunkBytes);
      cipher::SealTo(data_key_, chunk, ChunkAssociated(name, i, i + 1 == chunks), out.data() + at);
      at += chunk.size() + cipher::kSealOverhead;
    }
    return out;
  }

  // A header that opened is this blob's (the inner name is bound in), but
  // the file may have lost or gained bytes since.
  static Status CheckHeader(const Header& header, std::string_view sha256, uint64_t file_bytes) {
    if (header.sha256 != sha256) return DoesNotDecrypt(sha256, "its header names another blob");
    if (header.file_bytes() != file_bytes) {
      return DoesNotDecrypt(sha256, "its file is " + std::to_string(file_bytes) +
                                        " bytes; its header makes it " +
                                        std::to_string(header.file_bytes()));
    }
    return Status::Ok();
  }

  // The plaintext size of a sealed file of `file_bytes` (written with
  // kSealedChunkBytes chunks).
  static Result<int64_t> PlainSize(int64_t file_bytes) {
    const int64_t records = file_bytes - static_cast<int64_t>(kHeaderRecordBytes);
    if (records < static_cast<int64_t>(cipher::kSealOverhead)) {
      return Err(Status::Corruption("its file of " + std::to_string(file_bytes) +
                                    " bytes is too short for a sealed blob"));
    }
    const int64_t record = kSealedChunkBytes + cipher::kSealOverhead;
    const int64_t chunks = (records + record - 1) / record;
    if (records % record != 0 && records % record < static_cast<int64_t>(cipher::kSealOverhead)) {
      return Err(Status::Corruption("its file of " + std::to_string(file_bytes) +
                                    " bytes is no whole number of sealed chunks"));
    }
    return records - chunks * static_cast<int64_t>(cipher::kSealOverhead);
  }

  const std::unique_ptr<BlobStore> inner_;
  const cipher::SecretKey name_key_;
  const cipher::SecretKey data_key_;
};

}  // namespace

std::unique_ptr<BlobStore> SealBlobStore(std::unique_ptr<BlobStore> inner,
                                         const cipher::SecretKey& key) {
  return std::make_unique<SealedBlobStore>(std::move(inner), key);
}

std::string SealedBlobName(const cipher::SecretKey& key, std::string_view sha256) {
  return cipher::HmacHex(key.Derive("blob-name"), sha256);
}

}  // namespace sessiondb::blob
