#include "blob/verified_blob.h"

#include "blob/sha256.h"

namespace sessiondb::blob {

namespace {

class VerifyingBlobReader final : public BlobReader {
 public:
  VerifyingBlobReader(std::unique_ptr<BlobReader> inner, std::string sha256)
      : inner_(std::move(inner)), sha256_(std::move(sha256)) {}

  int64_t size() const override { return inner_->size(); }

  Result<std::string> Read(size_t max) override {
    ASSIGN_OR_RETURN(std::string piece, inner_->Read(max));
    if (!hashing_) return piece;
    hash_.Update(piece);
    done_ += static_cast<int64_t>(piece.size());
    if (done_ == inner_->size() && !finished_) {
      finished_ = true;
      if (hash_.FinishHex() != sha256_) return Err(CorruptBlob(sha256_));
    }
    return piece;
  }

  Status Skip(int64_t n) override {
    hashing_ = false;
    return inner_->Skip(n);
  }

 private:
  const std::unique_ptr<BlobReader> inner_;
  const std::string sha256_;
  Sha256Stream hash_;
  int64_t done_ = 0;
  bool hashing_ = true;
  bool finished_ = false;
};

}  // namespace

Status CorruptBlob(std::string_view sha256) {
  return Status::Corruption("blob " + std::string(sha256) +
                            " is damaged: its bytes no longer hash to its name, so they are not "
                            "given out; run `sessiondb verify`");
}

Status CheckBlobBytes(BlobReader& reader, std::string_view sha256) {
  Sha256Stream hash;
  for (;;) {
    ASSIGN_OR_RETURN(std::string piece, reader.Read(kBlobPieceBytes));
    if (piece.empty()) break;
    hash.Update(piece);
  }
  if (hash.FinishHex() != sha256) return CorruptBlob(sha256);
  return Status::Ok();
}

std::unique_ptr<BlobReader> VerifyingReader(std::unique_ptr<BlobReader> inner, std::string sha256) {
  return std::make_unique<VerifyingBlobReader>(std::move(inner), std::move(sha256));
}

}  // namespace sessiondb::blob
