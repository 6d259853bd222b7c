// Images and files: ingest from data URIs, bytes and paths; sniffing; limits;
// one blob per content; missing and corrupt blobs; garbage collection; verify.
#include <filesystem>
#include <fstream>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "core/uuid.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class Attachments : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(Attachments);
class EmbeddedAttachments : public EmbeddedStoreTest {};

std::string PngDataUri(const std::string& png) {
  return "data:image/png;base64," + blob::Base64Encode(png);
}

Message WithParts(std::vector<Part> parts, Role role = Role::kUser) {
  Message m;
  m.role = role;
  m.parts = std::move(parts);
  return m;
}

TEST_P(Attachments, AnImageFromADataUriRoundTripsByteForByte) {
  std::string id = NewSessionId();
  std::string png = MakePng(640, 480, "round-trip", 5000);
  std::string uri = PngDataUri(png);
  auto r = store_->Append(id, WithParts({Part::Text("look"), Part::ImageFromDataUri(uri)}));
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->resources.size(), 1u);
  const Resource& res = r->resources[0];
  EXPECT_EQ(res.content_sha256, blob::Sha256Hex(png));
  EXPECT_EQ(res.mime, "image/png");
  EXPECT_EQ(res.size, static_cast<int64_t>(png.size()));
  EXPECT_EQ(res.width, 640);
  EXPECT_EQ(res.height, 480);
  EXPECT_EQ(res.origin, Origin::kInline);
  EXPECT_EQ(res.resource_id.rfind("res_", 0), 0u);

  Reopen();
  auto read = store_->ReadMessages(id);
  ASSERT_TRUE(read);
  const Part& part = read->front().parts[1];
  ASSERT_EQ(part.type, PartType::kImage);
  ASSERT_TRUE(part.resource);
  EXPECT_EQ(*part.resource, res);
  EXPECT_EQ(*store_->ReadBlob(res.content_sha256, /*verify=*/true), png);
  EXPECT_EQ(*store_->ReadDataUri(*part.resource), uri);
  // A reader streams exactly the bytes, in pieces of the size asked for.
  auto reader = store_->OpenBlob(res.content_sha256);
  ASSERT_TRUE(reader) << reader.error().ToString();
  EXPECT_EQ((*reader)->size(), static_cast<int64_t>(png.size()));
  std::string streamed;
  size_t pieces = 0;
  while (true) {
    auto piece = (*reader)->Read(1000);
    ASSERT_TRUE(piece) << piece.error().ToString();
    if (piece->empty()) break;
    EXPECT_LE(piece->size(), 1000u);
    streamed += *piece;
    ++pieces;
  }
  EXPECT_EQ(streamed, png);
  EXPECT_EQ(pieces, (png.size() + 999) / 1000);
}

TEST_P(Attachments, OpeningABlobThatIsNotThereSaysWhich) {
  auto absent = store_->OpenBlob(std::string(64, 'a'));
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().code(), StatusCode::kNotFound);
  auto not_a_name = store_->OpenBlob("../../etc/passwd");
  ASSERT_FALSE(not_a_name);
  EXPECT_EQ(not_a_name.error().code(), StatusCode::kInvalidArgument);
}

TEST_P(Attachments, TheLogNeverHoldsBase64) {
  std::string id = NewSessionId();
  std::string png = MakePng(2, 2, "no-base64-in-log", 3000);
  std::string b64 = blob::Base64Encode(png);
  ASSERT_TRUE(
      store_->Append(id, WithParts({Part::ImageFromDataUri("data:image/png;base64," + b64)})));
  store_.reset();
  EXPECT_FALSE(RawLogContains(b64.substr(100, 200)));
  // The probe does see the log: the image's descriptor (its digest) is
  // there, unless the log is sealed.
  EXPECT_EQ(RawLogContains(blob::Sha256Hex(png)), !encrypted());
}

TEST_P(Attachments, ImagesFromBytesAndFromAFileCarryTheirOrigin) {
  std::string id = NewSessionId();
  std::string jpeg = MakeJpeg(1024, 768, "from-file");
  std::string path = dir_.Sub("photo.jpg");
  { std::ofstream(path, std::ios::binary) << jpeg; }
  std::string gif = "GIF89a" + std::string("\x03\x00\x02\x00\x00\x00\x00", 7) +
                    std::string("\x2C\x00\x00\x00\x00\x03\x00\x02\x00\x00", 10) + "rest";
  auto r = store_->Append(id, WithParts({Part::ImageFromFile(path),
                                         Part::ImageFromBytes(gif, "image/gif", "anim.gif")}));
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->resources.size(), 2u);
  EXPECT_EQ(r->resources[0].origin, Origin::kLocalFile);
  EXPECT_EQ(r->resources[0].name, "photo.jpg");
  EXPECT_EQ(r->resources[0].uri, path);
  EXPECT_EQ(r->resources[0].mime, "image/jpeg");
  EXPECT_EQ(r->resources[0].width, 1024);
  EXPECT_EQ(r->resources[0].height, 768);
  EXPECT_EQ(r->resources[1].mime, "image/gif");
  EXPECT_EQ(r->resources[1].width, 3);
  EXPECT_EQ(r->resources[1].height, 2);
  EXPECT_EQ(*store_->ReadBlob(r->resources[0].content_sha256), jpeg);
  EXPECT_EQ(*store_->ReadBlob(r->resources[1].content_sha256), gif);
}

TEST_P(Attachments, TheSameImageInTwoSessionsIsOneBlob) {
  std::string a = NewSessionId();
  std::string b = NewSessionId();
  std::string uri = PngDataUri(MakePng(8, 8, "shared", 10000));
  auto ra = store_->Append(a, WithParts({Part::ImageFromDataUri(uri)}));
  auto rb = store_->Append(b, WithParts({Part::ImageFromDataUri(uri)}));
  auto rb2 = store_->Append(b, WithParts({Part::ImageFromDataUri(uri), Part::Text("again")}));
  ASSERT_TRUE(ra && rb && rb2);
  EXPECT_EQ(ra->resources[0].content_sha256, rb->resources[0].content_sha256);
  EXPECT_NE(ra->resources[0].resource_id, rb->resources[0].resource_id);
  EXPECT_EQ(BlobCount(), 1u);
  EXPECT_EQ(store_->Stats()->blobs, 1);
}

TEST_P(Attachments, AFileThatIsNotAnImageIsKeptAsAFile) {
  std::string id = NewSessionId();
  std::string pdf = "%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n";
  std::string png = MakePng(4, 4, "file-part");
  auto r = store_->Append(id, WithParts({Part::FileFromBytes(pdf, "application/pdf", "doc.pdf"),
                                         Part::FileFromBytes(png, "", "pic")}));
  ASSERT_TRUE(r) << r.error().ToString();
  auto read = store_->ReadMessages(id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->front().parts[0].type, PartType::kFile);
  EXPECT_EQ(read->front().parts[0].resource->mime, "application/pdf");
  EXPECT_EQ(read->front().parts[0].resource->width, 0);
  // Bytes that are a supported image are stored as an image part.
  EXPECT_EQ(read->front().parts[1].type, PartType::kImage);
  EXPECT_EQ(read->front().parts[1].resource->width, 4);
}

TEST_P(Attachments, ADeletedBlobLeavesTheMessageLoadedWithThePartMarkedMissing) {
  std::string id = NewSessionId();
  auto r =
      store_->Append(id, WithParts({Part::Text("with picture"),
                                    Part::ImageFromBytes(MakePng(3, 3, "gone"), "image/png")}));
  ASSERT_TRUE(r);
  std::string sha = r->resources[0].content_sha256;
  RemoveBlob(sha);

  auto read = store_->ReadMessages(id);
  ASSERT_TRUE(read) << read.error().ToString();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->front().Text(), "with picture");
  ASSERT_TRUE(read->front().parts[1].resource);
  EXPECT_TRUE(read->front().parts[1].resource->missing);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find(sha), std::string::npos);
  EXPECT_NE(warnings_[0].find("missing"), std::string::npos);
  EXPECT_EQ(store_->ReadBlob(sha).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadDataUri(*read->front().parts[1].resource).error().code(),
            StatusCode::kNotFound);

  auto report = store_->Verify();
  ASSERT_TRUE(report);
  EXPECT_EQ(report->missing, std::vector<std::string>{sha});
  EXPECT_FALSE(report->clean());
}

TEST_P(Attachments, VerifyFindsABlobWhoseBytesChanged) {
  std::string id = NewSessionId();
  auto r = store_->Append(id, WithParts({Part::ImageFromBytes(MakePng(3, 3, "rot"), "image/png")}));
  ASSERT_TRUE(r);
  std::string sha = r->resources[0].content_sha256;
  auto clean = store_->Verify();
  ASSERT_TRUE(clean);
  EXPECT_TRUE(clean->clean());
  EXPECT_EQ(clean->blobs_checked, 1);
  DamageBlob(sha);
  int64_t progress_calls = 0;
  auto report = store_->Verify([&](int64_t, int64_t) { ++progress_calls; });
  ASSERT_TRUE(report);
  EXPECT_EQ(report->corrupt, std::vector<std::string>{sha});
  EXPECT_TRUE(report->missing.empty());
  EXPECT_EQ(progress_calls, 1);
  EXPECT_EQ(store_->ReadBlob(sha, /*verify=*/true).error().code(), StatusCode::kCorruption);
}

// ---- Limits and bad input: refused, named, and nothing written ----

class RefusedAttachment : public BackendTest {
 protected:
  void ExpectRefused(const Message& m, const std::string& fragment,
                     StatusCode code = StatusCode::kInvalidArgument) {
    std::string id = NewSessionId();
    auto r = store_->Append(id, m);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), code) << r.error().ToString();
    EXPECT_NE(r.error().message().find(fragment), std::string::npos) << r.error().message();
    EXPECT_EQ(store_->GetSession(id)->message_count, 0);
    EXPECT_EQ(BlobCount(), 0u);
  }
};
SESSIONDB_FOR_EACH_BACKEND(RefusedAttachment);

TEST_P(RefusedAttachment, AnImageOverTheSizeLimitNamesThePartSizeAndLimit) {
  StoreOptions o = Options();
  o.max_image_bytes = 100 * 1024;
  Reopen(o);
  std::string big = MakePng(10, 10, "big", 150 * 1024);
  ExpectRefused(WithParts({Part::Text("x"), Part::ImageFromBytes(big, "image/png")}),
                "image part 2 is 150.1 KiB; the limit is 100.0 KiB (max_image_bytes)");
  ExpectRefused(WithParts({Part::ImageFromDataUri(PngDataUri(big))}), "max_image_bytes");
  std::string path = dir_.Sub("big.png");
  { std::ofstream(path, std::ios::binary) << big; }
  ExpectRefused(WithParts({Part::ImageFromFile(path)}), "max_image_bytes");
}

TEST_P(RefusedAttachment, TheDefaultImageLimitIsFiveMebibytes) {
  std::string big = MakePng(10, 10, "default-limit", 5 * 1024 * 1024 + 1);
  ExpectRefused(WithParts({Part::ImageFromBytes(big, "image/png")}), "the limit is 5.0 MiB");
}

TEST_P(RefusedAttachment, MoreImagesThanTheLimitAreRefusedWhole) {
  std::vector<Part> parts;
  for (int i = 0; i < 6; ++i)
    parts.push_back(Part::ImageFromBytes(MakePng(1, 1, std::to_string(i)), "image/png"));
  ExpectRefused(WithParts(parts), "the message has 6 images; the limit is 5");
}

TEST_P(RefusedAttachment, OneBadImageAmongGoodOnesWritesNothing) {
  ExpectRefused(WithParts({Part::ImageFromBytes(MakePng(1, 1, "good1"), "image/png"),
                           Part::ImageFromBytes(MakePng(1, 1, "good2"), "image/png"),
                           Part::ImageFromDataUri("data:image/png;base64,@@@@")}),
                "image part 3");
}

TEST_P(RefusedAttachment, AMalformedDataUriIsRefused) {
  ExpectRefused(WithParts({Part::ImageFromDataUri("image/png;base64,AAAA")}), "image part 1");
  ExpectRefused(WithParts({Part::ImageFromDataUri("data:image/png,%89PNG")}), "base64");
}

TEST_P(RefusedAttachment, BadBase64IsRefused) {
  std::string b64 = blob::Base64Encode(MakePng(1, 1, "b64"));
  b64[10] = '*';
  ExpectRefused(WithParts({Part::ImageFromDataUri("data:image/png;base64," + b64)}),
                "image part 1");
}

TEST_P(RefusedAttachment, APngHeaderOnJpegBytesIsRefused) {
  ExpectRefused(WithParts({Part::ImageFromDataUri(PngDataUri(MakeJpeg(10, 10)))}),
                "declared image/png but its bytes are image/jpeg");
  std::string fake = std::string("\x89PNG\r\n\x1a\n", 8) + MakeJpeg(10, 10);
  ExpectRefused(WithParts({Part::ImageFromBytes(fake, "")}), "PNG");
}

TEST_P(RefusedAttachment, AnUnsupportedImageTypeIsRefused) {
  ExpectRefused(WithParts({Part::ImageFromBytes("II*\0tiffbytes", "image/tiff")}),
                "image/tiff, which is not supported");
  ExpectRefused(WithParts({Part::ImageFromBytes("just some text", "")}),
                "not a PNG, JPEG, GIF or WebP image");
}

TEST_P(RefusedAttachment, AMissingLocalFileIsNotFoundAndNamed) {
  ExpectRefused(WithParts({Part::ImageFromFile(dir_.Sub("nope.png"))}), "nope.png",
                StatusCode::kNotFound);
}

TEST_F(EmbeddedAttachments, ABlobThatCannotBeWrittenFailsTheAppendAndCommitsNothing) {
  std::string id = NewSessionId();
  AppendText(id, "before");
  // Put a file where the blob folder's temp directory must be: every blob
  // write now fails the way a full or broken disk would make it fail.
  std::string tmp = StoreDir() + "/blobs/tmp";
  std::filesystem::remove_all(tmp);
  { std::ofstream(tmp) << "in the way"; }
  auto r = store_->Append(id, WithParts({Part::Text("with image"),
                                         Part::ImageFromBytes(MakePng(2, 2, "io"), "image/png")}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kIo);
  EXPECT_NE(r.error().message().find("blobs/tmp"), std::string::npos) << r.error().message();
  EXPECT_EQ(store_->GetSession(id)->message_count, 1);
  EXPECT_EQ(BlobCount(), 0u);
  // Text-only appends do not touch the blob folder and still work.
  EXPECT_EQ(AppendText(id, "after").seq, 2);
}

// Large images are staged: written to blobs/tmp/ while they are hashed,
// before the message is known to be acceptable (FileBlobStore::Stage).
size_t TempFiles(const std::string& store_dir) {
  size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(store_dir + "/blobs/tmp")) {
    n += e.is_regular_file() ? 1 : 0;
  }
  return n;
}

TEST_F(EmbeddedAttachments, ARefusedMessageLeavesNoTempFileOfItsStagedImages) {
  std::string id = NewSessionId();
  const std::string big = MakePng(64, 64, "staged", 300 * 1024);
  // Refused after the good image was staged (a bad part after it), and
  // refused for the staged image itself (declared JPEG, bytes PNG).
  auto bad_after =
      store_->Append(id, WithParts({Part::ImageFromDataUri(PngDataUri(big)),
                                    Part::ImageFromDataUri("data:image/png;base64,@@")}));
  ASSERT_FALSE(bad_after);
  EXPECT_EQ(bad_after.error().code(), StatusCode::kInvalidArgument);
  auto misdeclared = store_->Append(
      id, WithParts({Part::ImageFromDataUri("data:image/jpeg;base64," + blob::Base64Encode(big))}));
  ASSERT_FALSE(misdeclared);
  EXPECT_NE(misdeclared.error().message().find("declared image/jpeg"), std::string::npos)
      << misdeclared.error().message();
  EXPECT_EQ(store_->GetSession(id)->message_count, 0);
  EXPECT_EQ(BlobCount(), 0u);
  EXPECT_EQ(TempFiles(StoreDir()), 0u);
}

TEST_F(EmbeddedAttachments, ALargeImageWhoseBase64BreaksLateIsRefusedAndLeavesNoTempFile) {
  // Large images are written while they are decoded: most of this one is in
  // blobs/tmp/ when its decoding fails.
  std::string id = NewSessionId();
  AppendText(id, "before");
  const std::string big = MakePng(64, 64, "breaks-late", 600 * 1024);
  std::string uri = PngDataUri(big);
  const size_t comma = uri.find(',');
  const size_t bad_at = uri.size() - 10;
  uri[bad_at] = '*';
  auto r = store_->Append(id, WithParts({Part::Text("see"), Part::ImageFromDataUri(uri)}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("data URI payload: invalid base64: '*' at offset " +
                                     std::to_string(bad_at - comma - 1) + " "),
            std::string::npos)
      << r.error().message();
  EXPECT_EQ(store_->GetSession(id)->message_count, 1);
  EXPECT_EQ(BlobCount(), 0u);
  EXPECT_EQ(TempFiles(StoreDir()), 0u);
  // The same image whole is taken, and reads back byte for byte.
  auto whole = store_->Append(id, WithParts({Part::ImageFromDataUri(PngDataUri(big))}));
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(*store_->ReadBlob(blob::Sha256Hex(big), /*verify=*/true), big);
  EXPECT_EQ(TempFiles(StoreDir()), 0u);
}

TEST_F(EmbeddedAttachments, AStagedImageThatCannotBeWrittenFailsTheAppendAndCommitsNothing) {
  std::string id = NewSessionId();
  AppendText(id, "before");
  std::string tmp = StoreDir() + "/blobs/tmp";
  std::filesystem::remove_all(tmp);
  { std::ofstream(tmp) << "in the way"; }
  const std::string big = MakePng(64, 64, "staged-io", 400 * 1024);
  auto r = store_->Append(
      id, WithParts({Part::Text("with image"), Part::ImageFromDataUri(PngDataUri(big))}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kIo);
  EXPECT_NE(r.error().message().find("blobs/tmp"), std::string::npos) << r.error().message();
  EXPECT_EQ(store_->GetSession(id)->message_count, 1);
  EXPECT_EQ(BlobCount(), 0u);
}

TEST_F(EmbeddedAttachments, ALargeImageSentTwiceIsOneBlobAndLeavesNoTempFile) {
  std::string id = NewSessionId();
  const std::string big = MakePng(64, 64, "twice", 500 * 1024);
  const std::string uri = PngDataUri(big);
  // Twice in one message, then again in the next: one blob, whole.
  auto first =
      store_->Append(id, WithParts({Part::ImageFromDataUri(uri), Part::ImageFromDataUri(uri)}));
  ASSERT_TRUE(first) << first.error().ToString();
  auto again = store_->Append(id, WithParts({Part::ImageFromDataUri(uri)}));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(BlobCount(), 1u);
  EXPECT_EQ(TempFiles(StoreDir()), 0u);
  EXPECT_EQ(*store_->ReadBlob(blob::Sha256Hex(big), /*verify=*/true), big);
}

// ---- Garbage collection ----

TEST_P(Attachments, GcDeletesOnlyUnreferencedBlobsPastTheGracePeriod) {
  // Blob ages come from file times, so the store's clock starts at real time.
  now_ms_ = SystemNowMs();
  std::string keep = NewSessionId();
  std::string drop = NewSessionId();
  std::string shared_png = MakePng(2, 2, "shared-gc");
  std::string only_drop_png = MakePng(2, 2, "only-drop");
  ASSERT_TRUE(store_->Append(keep, WithParts({Part::ImageFromBytes(shared_png, "image/png")})));
  ASSERT_TRUE(store_->Append(drop, WithParts({Part::ImageFromBytes(shared_png, "image/png"),
                                              Part::ImageFromBytes(only_drop_png, "image/png")})));
  ASSERT_TRUE(store_->DeleteSession(drop).ok());
  EXPECT_EQ(BlobCount(), 2u);

  // Within the grace period the orphan stays: an append may be in flight.
  auto young = store_->CollectGarbage({});
  ASSERT_TRUE(young);
  EXPECT_EQ(young->blobs_deleted, 0);
  EXPECT_EQ(young->blobs_in_grace, 1);
  EXPECT_EQ(BlobCount(), 2u);

  now_ms_ += 24LL * 3600 * 1000;  // a day later by the store's clock
  auto dry = store_->CollectGarbage({.dry_run = true});
  ASSERT_TRUE(dry);
  EXPECT_EQ(dry->blobs_deleted, 1);
  EXPECT_EQ(BlobCount(), 2u);

  auto real = store_->CollectGarbage({});
  ASSERT_TRUE(real);
  EXPECT_EQ(real->blobs_scanned, 2);
  EXPECT_EQ(real->blobs_deleted, 1);
  EXPECT_EQ(real->bytes_freed, static_cast<int64_t>(only_drop_png.size()));
  EXPECT_EQ(BlobCount(), 1u);
  EXPECT_TRUE(store_->ReadBlob(blob::Sha256Hex(shared_png), true));
  EXPECT_TRUE(store_->Verify()->clean());
}

TEST_P(Attachments, AnExistingBlobCanBeReferencedByItsDigest) {
  std::string id = NewSessionId();
  auto first =
      store_->Append(id, WithParts({Part::ImageFromBytes(MakePng(5, 5, "ref"), "image/png")}));
  ASSERT_TRUE(first);
  Part again;
  again.type = PartType::kImage;
  again.resource = first->resources[0];
  again.resource->resource_id.clear();
  auto second = store_->Append(id, WithParts({again}));
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_EQ(second->resources[0].content_sha256, first->resources[0].content_sha256);

  Part unknown = again;
  unknown.resource->content_sha256 = std::string(64, 'a');
  auto third = store_->Append(id, WithParts({unknown}));
  ASSERT_FALSE(third);
  EXPECT_NE(third.error().message().find("does not hold"), std::string::npos);
}

}  // namespace
}  // namespace sessiondb::testing
