#include "interop/export_archive.h"

#include <zip.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;

constexpr size_t kChunk = 1 << 20;

bool IsConversationsJson(const std::string& name) {
  const size_t slash = name.find_last_of('/');
  return name.substr(slash == std::string::npos ? 0 : slash + 1) == "conversations.json";
}

}  // namespace

std::string PeekConversations(const fs::path& path, size_t n) {
  std::error_code ec;
  const bool dir = fs::is_directory(path, ec);
  if (!dir && path.extension() != ".zip" && path.extension() != ".json") return "";
  if (dir && !fs::exists(path / "conversations.json", ec)) return "";
  if (path.extension() != ".zip") {
    // A file on disk: its first bytes, without scanning a whole conversation.
    if (!MayRead(dir ? path / "conversations.json" : path)) return "";
    std::ifstream in(dir ? path / "conversations.json" : path, std::ios::binary);
    std::string head(n, '\0');
    in.read(head.data(), static_cast<std::streamsize>(n));
    head.resize(static_cast<size_t>(in.gcount()));
    return head;
  }
  auto a = ExportArchive::Open(path);
  if (!a) return "";
  std::string head;
  int64_t read = 0, total = 0;
  (void)(*a)->ForEach(
      [&](ExportArchive::Element& el) {
        head = el.text.substr(0, n);
        return Status::Internal("enough");  // stops the scan
      },
      &read, &total);
  return head;
}

Result<std::unique_ptr<ExportArchive>> ExportArchive::Open(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Err(Status::NotFound("nothing at " + path.string()));
  std::unique_ptr<ExportArchive> a(new ExportArchive());
  if (fs::is_directory(path, ec)) {
    a->root_ = path;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec) || !MayRead(it->path())) continue;
      const std::string rel = fs::relative(it->path(), path, ec).generic_string();
      if (rel == "conversations.json") {
        a->json_path_ = it->path();
      } else {
        a->files_.push_back(rel);
      }
    }
    if (a->json_path_.empty()) {
      return Err(Status::InvalidArgument(path.string() + " holds no conversations.json"));
    }
    a->label_ = "conversations.json";
    return a;
  }
  if (path.extension() == ".zip") {
    int err = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
    if (!z) return Err(Status::InvalidArgument(path.string() + " is not a readable zip archive"));
    a->zip_ = z;
    const zip_int64_t n = zip_get_num_entries(z, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
      if (!name) continue;
      const std::string s(name);
      if (!s.empty() && s.back() == '/') continue;
      if (IsConversationsJson(s) && (a->json_index_ < 0 || s.size() < a->label_.size())) {
        a->json_index_ = i;
        a->label_ = s;
      } else {
        a->files_.push_back(s);
      }
    }
    if (a->json_index_ < 0) {
      return Err(Status::InvalidArgument(path.string() + " holds no conversations.json"));
    }
    a->label_ = ToValidUtf8(a->label_);  // it names records in skip reasons
    return a;
  }
  a->json_path_ = path;
  a->label_ = ToValidUtf8(path.filename().string());
  return a;
}

ExportArchive::~ExportArchive() {
  if (zip_file_) zip_fclose(static_cast<zip_file_t*>(zip_file_));
  if (file_) std::fclose(file_);
  if (zip_) zip_discard(static_cast<zip_t*>(zip_));
}

namespace {

Status TooLarge(const std::string& name, const std::string& how, int64_t max_bytes) {
  return Status::InvalidArgument(name + " " + how + "; the limit for one file of an export is " +
                                 std::to_string(max_bytes) + " bytes");
}

}  // namespace

Result<std::string> ExportArchive::Read(const std::string& name, int64_t max_bytes) const {
  std::string out;
  char buf[65536];
  if (zip_) {
    zip_t* z = static_cast<zip_t*>(zip_);
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(z, name.c_str(), 0, &st) != 0) return Err(Status::NotFound("no " + name));
    // Refused before a byte is inflated when the entry says it is too big...
    if ((st.valid & ZIP_STAT_SIZE) && st.size > static_cast<zip_uint64_t>(max_bytes)) {
      return Err(TooLarge("zip entry '" + name + "'",
                          "inflates to " + std::to_string(st.size) + " bytes", max_bytes));
    }
    zip_file_t* f = zip_fopen(z, name.c_str(), 0);
    if (!f) return Err(Status::Io("cannot open " + name + " in the zip"));
    // ...and inflated in pieces against the limit, in case it lied.
    zip_int64_t got;
    while ((got = zip_fread(f, buf, sizeof buf)) > 0) {
      if (static_cast<int64_t>(out.size()) + got > max_bytes) {
        zip_fclose(f);
        return Err(
            TooLarge("zip entry '" + name + "'", "inflates past its declared size", max_bytes));
      }
      out.append(buf, static_cast<size_t>(got));
    }
    zip_fclose(f);
    if (got < 0) return Err(Status::Io("cannot read " + name + " in the zip"));
    return out;
  }
  const fs::path p = root_ / name;
  if (!MayRead(p)) return Err(Status::InvalidArgument(OutsideReason(name)));
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return Err(Status::NotFound("no " + name));
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (static_cast<int64_t>(out.size() + got) > max_bytes) {
      std::fclose(f);
      return Err(TooLarge(name, "is larger", max_bytes));
    }
    out.append(buf, got);
  }
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) return Err(Status::Io("cannot read " + p.string()));
  return out;
}

Result<int64_t> ExportArchive::ReadChunk(char* buf, size_t n) {
  if (zip_) {
    const zip_int64_t got = zip_fread(static_cast<zip_file_t*>(zip_file_), buf, n);
    if (got < 0) return Err(Status::Io("cannot read " + label_ + " in the zip"));
    return static_cast<int64_t>(got);
  }
  const size_t got = std::fread(buf, 1, n, file_);
  if (got == 0 && std::ferror(file_)) return Err(Status::Io("cannot read " + label_));
  return static_cast<int64_t>(got);
}

Status ExportArchive::ForEach(const std::function<Status(Element&)>& fn, int64_t* bytes_read,
                              int64_t* total_bytes) {
  if (zip_) {
    zip_stat_t st;
    zip_stat_index(static_cast<zip_t*>(zip_), static_cast<zip_uint64_t>(json_index_), 0, &st);
    total_ = static_cast<int64_t>(st.size);
    zip_file_ =
        zip_fopen_index(static_cast<zip_t*>(zip_), static_cast<zip_uint64_t>(json_index_), 0);
    if (!zip_file_) return Status::Io("cannot open " + label_ + " in the zip");
  } else {
    file_ = std::fopen(json_path_.c_str(), "rb");
    if (!file_) return Status::Io("cannot open " + json_path_.string());
    std::error_code ec;
    total_ = static_cast<int64_t>(fs::file_size(json_path_, ec));
  }
  *total_bytes = total_;
  *bytes_read = 0;
  std::string buf(kChunk, '\0');
  // The state of a scan of the top-level array.
  bool started = false;   // past the '['
  bool finished = false;  // past the ']'
  int depth = 0;          // inside the array: 0 between elements
  bool in_string = false;
  bool escape = false;
  Element el;
  bool in_element = false;
  while (!finished) {
    ASSIGN_OR_RETURN(int64_t got, ReadChunk(buf.data(), buf.size()));
    if (got == 0) break;
    *bytes_read += got;
    size_t i = 0;
    const size_t n = static_cast<size_t>(got);
    while (i < n && !finished) {
      if (!started) {
        const char c = buf[i++];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        if (c == '\xEF' || c == '\xBB' || c == '\xBF') continue;  // a UTF-8 BOM
        if (c != '[') return Status::InvalidArgument(label_ + " is not a JSON array");
        started = true;
        continue;
      }
      if (!in_element) {
        const char c = buf[i];
        if (c == ']') {
          finished = true;
          ++i;
          break;
        }
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ',') {
          ++i;
          continue;
        }
        in_element = true;
        el.text.clear();
        el.too_long = false;
        el.cut_short = false;
      }
      // Inside an element: find where it ends within this chunk.
      const size_t from = i;
      bool done = false;
      for (; i < n; ++i) {
        const char c = buf[i];
        if (in_string) {
          if (escape) {
            escape = false;
          } else if (c == '\\') {
            escape = true;
          } else if (c == '"') {
            in_string = false;
          }
          continue;
        }
        if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (--depth == 0) {
            ++i;
            done = true;
            break;
          }
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
          done = true;  // a scalar element ends
          break;
        }
      }
      if (!el.too_long) {
        if (el.text.size() + (i - from) > kMaxConversationBytes) {
          el.too_long = true;
          el.text.clear();
          el.text.shrink_to_fit();
        } else {
          el.text.append(buf.data() + from, i - from);
        }
      }
      if (done) {
        RETURN_IF_ERROR(fn(el));
        ++el.index;
        in_element = false;
      }
    }
  }
  if (in_element) {
    el.cut_short = true;
    RETURN_IF_ERROR(fn(el));
  }
  if (!started) return Status::InvalidArgument(label_ + " is empty, not a JSON array");
  return Status::Ok();
}

Status ForEachConversation(
    ExportArchive& archive, ImportSink& sink,
    const std::function<Status(const nlohmann::json& conversation, const std::string& where)>& fn) {
  int64_t read = 0, total = 0;
  return archive.ForEach(
      [&](ExportArchive::Element& el) -> Status {
        sink.Progress(read, total);
        const std::string where = archive.label() + "[" + std::to_string(el.index) + "]";
        if (el.too_long) {
          sink.Skip(where, "the conversation is longer than the limit of " +
                               std::to_string(kMaxConversationBytes) + " bytes");
          return Status::Ok();
        }
        if (el.cut_short) {
          sink.Skip(where, "the file ends inside this conversation (cut short)");
          return Status::Ok();
        }
        // One stray byte must not cost the conversation: bytes that are not
        // UTF-8 become U+FFFD, within the same cap (a byte may become three).
        if (!IsValidUtf8(el.text)) {
          std::string repaired;
          if (!ReplaceInvalidUtf8(el.text, kMaxConversationBytes, &repaired)) {
            sink.Skip(where, "the conversation is longer than the limit of " +
                                 std::to_string(kMaxConversationBytes) +
                                 " bytes once its bytes that are not UTF-8 are replaced");
            return Status::Ok();
          }
          el.text = std::move(repaired);
        }
        Result<nlohmann::json> parsed = ParseJson(el.text);
        el.text.clear();
        nlohmann::json c = parsed.value_or(nlohmann::json());
        if (!c.is_object()) {
          sink.Skip(where, !parsed && IsJsonNestingError(parsed.error())
                               ? parsed.error().message() + "; the conversation is left out"
                               : "the conversation is not a valid JSON object");
          return Status::Ok();
        }
        return fn(c, where);
      },
      &read, &total);
}

}  // namespace sessiondb::interop
