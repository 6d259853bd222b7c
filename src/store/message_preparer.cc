#include "store/message_preparer.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "blob/base64.h"
#include "blob/data_uri.h"
#include "blob/media_type.h"
#include "blob/sha256.h"
#include "blob/staged_blob.h"
#include "core/message_codec.h"
#include "core/text_rules.h"

namespace sessiondb {
namespace {

constexpr size_t kMaxMessageIdLength = 128;
// Attachments at least this large are staged (written while they are hashed,
// synced while the rest of the batch is prepared); below it a thread costs
// more than the overlap gains.
constexpr size_t kStageAtLeast = size_t{128} * 1024;

std::string PartLabel(const Part& part, size_t index) {
  return std::string(PartTypeName(part.type)) + " part " + std::to_string(index + 1);
}

std::string BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

Status CheckUtf8(std::string_view text, const std::string& what) {
  if (IsValidUtf8(text)) return Status::Ok();
  return Status::InvalidArgument(what + " is not valid UTF-8");
}

// Token counts are what a provider reported spending: never negative. A
// negative count would also make the session's totals lie (docs/harness.md).
Status CheckUsage(const Usage& usage) {
  const std::pair<const char*, int64_t> fields[] = {
      {"usage.input_tokens", usage.input_tokens},
      {"usage.output_tokens", usage.output_tokens},
      {"usage.cached_tokens", usage.cached_tokens},
      {"usage.reasoning_tokens", usage.reasoning_tokens},
      {"usage.cache_write_tokens", usage.cache_write_tokens},
  };
  for (const auto& [name, value] : fields) {
    if (value < 0) {
      return Status::InvalidArgument(std::string(name) + " is " + std::to_string(value) +
                                     "; token counts must be 0 or more");
    }
  }
  return Status::Ok();
}

// The refusal of an attachment `what` of `size` bytes over its `limit`.
Status OverLimit(const std::string& what, int64_t size, int64_t limit,
                 const std::string& limit_name) {
  return Status::InvalidArgument(what + " is " + FormatBytes(size) + "; the limit is " +
                                 FormatBytes(limit) + " (" + limit_name + ")");
}

// Reads a local file, refusing before reading when it is larger than `limit`.
Result<std::string> ReadLocalFile(const std::string& path, int64_t limit, const std::string& label,
                                  const std::string& limit_name) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Err(Status::NotFound(label + ": cannot read '" + path + "': no such file"));
  }
  if (!S_ISREG(st.st_mode)) {
    return Err(Status::InvalidArgument(label + ": '" + path + "' is not a regular file"));
  }
  if (st.st_size > limit) {
    return Err(OverLimit(label + " ('" + path + "')", st.st_size, limit, limit_name));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Err(Status::Io(label + ": cannot open '" + path + "'"));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  in.read(bytes.data(), st.st_size);
  if (in.gcount() != st.st_size) return Err(Status::Io(label + ": short read of '" + path + "'"));
  return bytes;
}

struct Ingested {
  std::string bytes;
  std::string declared_mime;  // normalized; empty when the caller made no claim
  std::string name;
  std::string uri;
  Origin origin = Origin::kInline;
  // Writing `bytes` since they were decoded, or null. Declared after them, so
  // it is dropped first (waiting for its writer, removing its temp file).
  std::shared_ptr<blob::StagedBlob> staged;
};

// The decoded size of a data URI's payload goes up in steps of this between
// announcements to its staged writer: a write and a writeback request each.
constexpr size_t kStagePieceBytes = size_t{128} * 1024;

// Decodes a data URI's payload into out->bytes. A large one is staged first
// and written as it is decoded, so the disk starts on it at once.
Status DecodeDataUri(std::string_view payload, const BlobStageFn& stage, int64_t limit,
                     const std::string& label, const std::string& limit_name, Ingested* out) {
  Result<size_t> size = blob::Base64DecodedSize(payload);
  if (!size) {
    return Status::InvalidArgument(label + ": " +
                                   blob::DataUriPayloadError(size.error()).message());
  }
  // Checked before anything is allocated.
  if (static_cast<int64_t>(*size) > limit) {
    return OverLimit(label, static_cast<int64_t>(*size), limit, limit_name);
  }
  // Decoded straight into the string's new buffer, which is never
  // zero-filled first (issue 40's profile put that fill, with the page
  // faults it took, at half of the appending thread's CPU; the faults are
  // now the decode's). The staged writer reads the buffer while it is being
  // filled, only the pieces announced ready; the buffer does not move when
  // resize_and_overwrite returns.
  Status decoded;
  out->bytes.resize_and_overwrite(*size, [&](char* buffer, size_t n) {
    if (stage && n >= kStageAtLeast) out->staged = stage(std::string_view(buffer, n), 0);
    blob::StagedBlob* staged = out->staged.get();
    decoded = blob::Base64DecodeInto(payload, buffer, kStagePieceBytes, [staged](size_t ready) {
      if (staged != nullptr) staged->Ready(ready);
    });
    return decoded.ok() ? n : 0;  // no undecoded bytes left behind on a refusal
  });
  if (!decoded.ok()) {
    return Status::InvalidArgument(label + ": " + blob::DataUriPayloadError(decoded).message());
  }
  return Status::Ok();
}

Result<Ingested> LoadSource(const AttachmentSource& src, bool is_image, const StoreOptions& options,
                            const std::string& label, const BlobStageFn& stage) {
  const int64_t limit = is_image ? options.max_image_bytes : options.max_file_bytes;
  const std::string limit_name = is_image ? "max_image_bytes" : "max_file_bytes";
  Ingested out;
  out.name = src.name;
  switch (src.kind) {
    case AttachmentSource::Kind::kDataUri: {
      // Base64 is 4/3 of the bytes: refuse an oversized URI before decoding it.
      if (static_cast<int64_t>(src.data.size()) / 4 * 3 > limit + 3) {
        return Err(Status::InvalidArgument(
            label + " is about " + FormatBytes(static_cast<int64_t>(src.data.size()) / 4 * 3) +
            "; the limit is " + FormatBytes(limit) + " (" + limit_name + ")"));
      }
      auto uri = blob::SplitDataUri(src.data);
      if (!uri) return Err(Status::InvalidArgument(label + ": " + uri.error().message()));
      RETURN_IF_ERROR(DecodeDataUri(uri->base64, stage, limit, label, limit_name, &out));
      out.declared_mime = blob::NormalizeMime(uri->mime);
      break;
    }
    case AttachmentSource::Kind::kBytes:
      out.bytes = src.data;
      out.declared_mime = blob::NormalizeMime(src.declared_mime);
      break;
    case AttachmentSource::Kind::kLocalFile: {
      ASSIGN_OR_RETURN(out.bytes, ReadLocalFile(src.data, limit, label, limit_name));
      out.origin = Origin::kLocalFile;
      out.uri = src.data;
      if (out.name.empty()) out.name = BaseName(src.data);
      break;
    }
  }
  if (static_cast<int64_t>(out.bytes.size()) > limit) {
    return Err(OverLimit(label, static_cast<int64_t>(out.bytes.size()), limit, limit_name));
  }
  return out;
}

// Decides what an attachment is from its bytes and checks it against the
// part's type and the caller's claim.
Result<Resource> DescribeAttachment(Part& part, const Ingested& in, const std::string& label) {
  auto media = blob::SniffMedia(in.bytes);
  if (!media) return Err(Status::InvalidArgument(label + ": " + media.error().message()));
  const bool declared_image = in.declared_mime.rfind("image/", 0) == 0;
  if (part.type == PartType::kImage) {
    if (in.bytes.empty()) return Err(Status::InvalidArgument(label + " is empty"));
    if (declared_image && !blob::IsSupportedImageMime(in.declared_mime)) {
      return Err(Status::InvalidArgument(label + " is declared " + in.declared_mime +
                                         ", which is not supported; images must be image/png, "
                                         "image/jpeg, image/gif or image/webp"));
    }
    if (!media->is_image) {
      return Err(Status::InvalidArgument(
          label + " is not a PNG, JPEG, GIF or WebP image (its bytes look like " + media->mime +
          "); attach it as a file instead"));
    }
    if (declared_image && in.declared_mime != media->mime) {
      return Err(Status::InvalidArgument(label + " is declared " + in.declared_mime +
                                         " but its bytes are " + media->mime +
                                         "; fix the declared type or leave it out"));
    }
  } else if (media->is_image) {
    part.type = PartType::kImage;  // a file that is a supported image is stored as one
  }
  Resource r;
  r.content_sha256 = blob::Sha256Hex(in.bytes);
  r.mime =
      media->is_image || in.declared_mime.empty() || in.declared_mime == "application/octet-stream"
          ? media->mime
          : in.declared_mime;
  r.size = static_cast<int64_t>(in.bytes.size());
  r.width = media->width;
  r.height = media->height;
  r.origin = in.origin;
  r.name = in.name;
  r.uri = in.uri;
  return r;
}

// A copy of `m` whose attachment parts keep their source's kind, claim and
// name but not its data: PrepareMessage reads the data from `m` itself, and
// a data URI is megabytes (copying each one, and faulting in the pages of
// the copy, was a sixth of a one-image append).
// NOTE: a field added to Message or Part must be copied here too; the
// static_asserts below fail on the usual platform when the size changes.
Message CopyWithoutSourceData(const Message& m) {
#if defined(__x86_64__) && defined(__GLIBCXX__)
  static_assert(sizeof(Message) == 344, "Message changed: copy its new field below");
  static_assert(sizeof(Part) == 520, "Part changed: copy its new field below");
#endif
  Message copy;
  copy.id = m.id;
  copy.session_id = m.session_id;
  copy.seq = m.seq;
  copy.ts_ms = m.ts_ms;
  copy.role = m.role;
  copy.files = m.files;
  copy.files_modified = m.files_modified;
  copy.edit_results_json = m.edit_results_json;
  copy.model = m.model;
  copy.provider = m.provider;
  copy.usage = m.usage;
  copy.metadata_json = m.metadata_json;
  copy.pruned = m.pruned;
  copy.parts.reserve(m.parts.size());
  for (const Part& p : m.parts) {
    if (!p.source) {
      copy.parts.push_back(p);
      continue;
    }
    Part& part = copy.parts.emplace_back();
    part.type = p.type;
    part.text = p.text;
    part.resource = p.resource;
    part.source.emplace();
    part.source->kind = p.source->kind;
    part.source->declared_mime = p.source->declared_mime;
    part.source->name = p.source->name;
    part.tool_call_id = p.tool_call_id;
    part.tool_name = p.tool_name;
    part.arguments_json = p.arguments_json;
    part.is_error = p.is_error;
    part.signature = p.signature;
  }
  return copy;
}

Status CheckLink(const Part& part, const std::string& label) {
  if (!part.resource || part.resource->uri.empty()) {
    return Status::InvalidArgument(label + " has no URL");
  }
  const std::string& uri = part.resource->uri;
  if (uri.rfind("http://", 0) != 0 && uri.rfind("https://", 0) != 0) {
    return Status::InvalidArgument(label + ": only http:// and https:// links are accepted, got '" +
                                   uri.substr(0, 64) + "'");
  }
  return CheckUtf8(uri, label + " URL");
}

// A descriptor of an attachment the store holds no bytes of, saying why.
bool IsNotStoredDescriptor(const Part& part) {
  return part.resource && !part.resource->not_stored.empty() &&
         part.resource->content_sha256.empty();
}

}  // namespace

bool PartHasContent(const Part& p) {
  switch (p.type) {
    case PartType::kText:
      return p.text.find_first_not_of(" \t\n\r\f\v") != std::string::npos;
    case PartType::kReasoning:  // redacted or encrypted reasoning has no text
      return !p.signature.empty() || p.text.find_first_not_of(" \t\n\r\f\v") != std::string::npos;
    default:
      return true;
  }
}

Result<PreparedMessage> PrepareMessage(const Message& message, const StoreOptions& options,
                                       Admission admission, const BlobExistsFn& blob_exists,
                                       const std::function<std::string()>& new_id,
                                       const BlobStageFn& stage, bool may_borrow) {
  PreparedMessage out;
  // Copying a message (its text included) and freeing the copy cost a tenth
  // of a batched append; only attachments and links are rewritten below.
  const bool rewrites_parts = std::ranges::any_of(message.parts, [](const Part& p) {
    return p.type == PartType::kImage || p.type == PartType::kFile ||
           p.type == PartType::kResourceLink;
  });
  if (may_borrow && !rewrites_parts) {
    out.Borrow(message);
  } else {
    out.Own(CopyWithoutSourceData(message));
  }
  const Message& m = out.message();

  bool any_content = false;
  for (const Part& p : m.parts) any_content = any_content || PartHasContent(p);
  if (!any_content) {
    return Err(Status::InvalidArgument(
        "the message is empty: give it text or at least one attachment, tool call or tool result"));
  }
  if (!m.id.empty()) {
    if (m.id.size() > kMaxMessageIdLength) {
      return Err(Status::InvalidArgument("message id is " + std::to_string(m.id.size()) +
                                         " bytes; the limit is " +
                                         std::to_string(kMaxMessageIdLength)));
    }
    RETURN_IF_ERROR(CheckUtf8(m.id, "message id"));
    out.id = m.id;
  } else {
    out.id = new_id();
    if (Message* own = out.owned()) own->id = out.id;
  }
  RETURN_IF_ERROR(CheckUtf8(m.model, "model"));
  if (m.usage) RETURN_IF_ERROR(CheckUsage(*m.usage));
  for (const auto& f : m.files) RETURN_IF_ERROR(CheckUtf8(f, "a files entry"));
  for (const auto& f : m.files_modified) RETURN_IF_ERROR(CheckUtf8(f, "a files_modified entry"));

  int images = 0;
  std::set<std::string> seen_blobs;
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const Part& part = m.parts[i];
    const std::string label = PartLabel(part, i);
    switch (part.type) {
      case PartType::kText:
        RETURN_IF_ERROR(CheckUtf8(part.text, label));
        break;
      case PartType::kReasoning:
        RETURN_IF_ERROR(CheckUtf8(part.text, label));
        RETURN_IF_ERROR(CheckUtf8(part.signature, label + " signature"));
        break;
      case PartType::kToolCall:
        if (part.tool_name.empty())
          return Err(Status::InvalidArgument(label + " has no tool name"));
        RETURN_IF_ERROR(CheckUtf8(part.tool_name, label + " name"));
        RETURN_IF_ERROR(CheckUtf8(part.tool_call_id, label + " id"));
        RETURN_IF_ERROR(CheckUtf8(part.arguments_json, label + " arguments"));
        break;
      case PartType::kToolResult:
        RETURN_IF_ERROR(CheckUtf8(part.text, label + " output"));
        RETURN_IF_ERROR(CheckUtf8(part.tool_call_id, label + " tool_call_id"));
        break;
      case PartType::kResourceLink: {
        // Owned: a message with links or attachments is copied above.
        Part& part = out.owned()->parts[i];
        RETURN_IF_ERROR(CheckLink(part, label));
        part.resource->origin = Origin::kRemoteLink;
        part.resource->content_sha256.clear();
        if (part.resource->resource_id.empty()) part.resource->resource_id = "res_" + new_id();
        break;
      }
      case PartType::kImage:
      case PartType::kFile: {
        Part& part = out.owned()->parts[i];
        if (part.source) {
          // The copy has no data: the source is read from the caller's message.
          const AttachmentSource& source = *message.parts[i].source;
          ASSIGN_OR_RETURN(Ingested in, LoadSource(source, part.type == PartType::kImage, options,
                                                   label, stage));
          // Declared after `in`, so that a refusal below drops it (waiting
          // for its writer, removing its temp file) before the bytes go.
          std::shared_ptr<blob::StagedBlob> staged = std::move(in.staged);
          if (!staged && stage && in.bytes.size() >= kStageAtLeast) {
            staged = stage(in.bytes, in.bytes.size());
          }
          ASSIGN_OR_RETURN(Resource r, DescribeAttachment(part, in, label));
          r.resource_id = "res_" + new_id();
          if (seen_blobs.insert(r.content_sha256).second) {
            if (staged) {
              staged->SetDigest(r.content_sha256);
              staged->WaitWritten();  // the bytes move below
            }
            out.blobs.push_back({r.content_sha256, std::move(in.bytes), std::move(staged)});
          }
          part.resource = std::move(r);
          part.source.reset();
        } else if (part.resource && blob::IsSha256Hex(part.resource->content_sha256)) {
          // A descriptor of bytes the store already holds (a re-import, a copy).
          if (!blob_exists(part.resource->content_sha256)) {
            return Err(Status::InvalidArgument(label + " refers to blob " +
                                               part.resource->content_sha256 +
                                               ", which this store does not hold"));
          }
          if (part.resource->resource_id.empty()) part.resource->resource_id = "res_" + new_id();
          seen_blobs.insert(part.resource->content_sha256);
        } else if (admission == Admission::kRestore && IsNotStoredDescriptor(part)) {
          // History whose bytes the store never held, with the reason: no blob to refer to.
          RETURN_IF_ERROR(CheckUtf8(part.resource->not_stored, label + " not_stored reason"));
          if (part.resource->resource_id.empty()) part.resource->resource_id = "res_" + new_id();
        } else {
          return Err(
              Status::InvalidArgument(label + " has neither bytes nor a stored blob digest"));
        }
        part.resource->missing = false;
        if (part.type == PartType::kImage) ++images;
        break;
      }
    }
  }
  if (admission == Admission::kAppend && images > options.max_images_per_message) {
    return Err(Status::InvalidArgument(
        "the message has " + std::to_string(images) + " images; the limit is " +
        std::to_string(options.max_images_per_message) + " per message (max_images_per_message)"));
  }
  out.referenced_sha256.assign(seen_blobs.begin(), seen_blobs.end());
  out.text = m.Text();
  return out;
}

}  // namespace sessiondb
