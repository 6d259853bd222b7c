// Encryption at rest for a blob folder (issue 35, docs/encryption.md): a
// BlobStore that seals every blob before its inner store (the FileBlobStore)
// sees a byte, under a name that says nothing without the key.
//
// Callers keep naming blobs by their SHA-256 (the digests live in the
// database, which is encrypted itself). The inner store names the file
//
//   inner name = HmacHex(key.Derive("blob-name"), sha256)
//
// so equal blobs under one key are stored once (the inner store's dedup),
// while another key (another tenant) maps the same bytes to an unrelated
// name: nobody without the key can tell whether given bytes are stored.
//
// File format, version 1 (all integers little-endian; C = 65536):
//
//   file       := header-rec chunk-rec{n}           n = max(1, ceil(size / C))
//   header-rec := Seal(data_key, header, "sdb-blob-header\0" | inner name)   (52 + 28 bytes)
//   header     := "SDBB" | u8 version=1 | 3 zero bytes | u64 size | u32 C | sha256 (32 raw bytes)
//   chunk-rec  := Seal(data_key, chunk_i, "sdb-blob-chunk\0" | inner name | u64 i | u8 last)
//   chunk_i    := plaintext bytes [i*C, min(size, (i+1)*C)); the last chunk may be
//                 short, and an empty blob has one empty chunk
//
// with data_key = key.Derive("blob-data") and Seal = cipher::Seal (random
// 12-byte nonce | ciphertext | 16-byte tag). Binding the inner name, the
// index and the "last" flag into every chunk makes a flipped byte, a
// truncation, reordered chunks, a chunk moved from another blob, or a whole
// file copied under another blob's name fail to open. What stays visible: a
// blob's existence, its size (to within nothing: file size = size + 80 +
// 28 n), its mtime, and that two stores under one key share a blob.
//
// Costs: Put seals the whole blob in memory (the interface hands it whole);
// OpenReader holds one chunk, and Skip steps over whole chunks unread.
// Stage returns null: staging writes the caller's bytes to a temp file as
// they arrive, and no plaintext may reach the disk, not even a temp file.
//
// ForEach reads each file's sealed header to recover the sha256 the
// database refers to (one small read per blob). A file whose header does not
// open under this key (damaged, or another key's) is skipped, not reported:
// it is no blob of this store that anyone could name, and failing the walk
// would stop garbage collection, stats and verify for every other blob. A
// damaged blob that a message refers to still surfaces: verify finds it
// missing from the listing, and Get/OpenReader return kCorruption naming it.
// Such orphans are not collected (their name cannot be mapped back).
//
// Thread-safety: as the inner store (all methods may be called concurrently).
//
// Example:
//   ASSIGN_OR_RETURN(auto files, FileBlobStore::Open(dir + "/blobs", /*sync=*/true));
//   std::unique_ptr<BlobStore> blobs =
//       SealBlobStore(std::move(files), data_key.Derive("blobs"));
//   RETURN_IF_ERROR(blobs->Put(Sha256Hex(bytes), bytes));
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "blob/blob_store.h"
#include "core/cipher.h"

namespace sessiondb::blob {

// Plaintext bytes per sealed chunk.
inline constexpr size_t kSealedChunkBytes = size_t{64} * 1024;

// A BlobStore that seals every blob with `key` (the store's blob key, which
// the caller derives from its data key) and keeps it in `inner` under a
// keyed name. Get and OpenReader return kCorruption, "blob <sha> does not
// decrypt: ...", for a file that does not open under `key`.
std::unique_ptr<BlobStore> SealBlobStore(std::unique_ptr<BlobStore> inner,
                                         const cipher::SecretKey& key);

// The inner store's name of blob `sha256` under `key` (for tools and tests
// that reach the file: BlobFilePath(root, SealedBlobName(key, sha256))).
std::string SealedBlobName(const cipher::SecretKey& key, std::string_view sha256);

}  // namespace sessiondb::blob
