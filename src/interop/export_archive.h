// The data exports of chat services (ChatGPT, Claude.ai) come as a .zip or
// its unpacked folder: a conversations.json holding a JSON array of
// conversations, and for ChatGPT the uploaded and generated images beside it.
// ExportArchive opens either (or a bare conversations.json), lists the other
// files, reads one, and streams the array a conversation at a time, so memory
// is bounded by the largest conversation, not the export.
// Thread-safety: one archive per thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "interop/import_sink.h"
#include "sessiondb/status.h"

namespace sessiondb::interop {

inline constexpr size_t kMaxConversationBytes = size_t{256} * 1024 * 1024;
// The largest other file (an image, an attachment) read from an export: the
// store's default limit for one attachment (StoreOptions::max_file_bytes).
// A zip entry is checked against it before inflating (its declared size) and
// while inflating (a size that lies), so a small upload cannot make the
// server hold gigabytes.
inline constexpr int64_t kMaxExportFileBytes = int64_t{100} * 1024 * 1024;

// The first bytes (at most `n`) of the conversations.json of the export at
// `path` (a .zip, a folder or the file itself); "" when there is none. For
// detection: cheap, reads no further than the first conversation.
std::string PeekConversations(const std::filesystem::path& path, size_t n = 65536);

class ExportArchive {
 public:
  // `path`: a .zip, a folder, or a JSON file. kInvalidArgument when it holds
  // no conversations.json (or a zip cannot be opened); kNotFound if missing.
  static Result<std::unique_ptr<ExportArchive>> Open(const std::filesystem::path& path);
  ~ExportArchive();
  ExportArchive(const ExportArchive&) = delete;
  ExportArchive& operator=(const ExportArchive&) = delete;

  // Names of the other files, relative to the export's root ("a/b.png").
  const std::vector<std::string>& files() const { return files_; }
  // The bytes of one of files(); kNotFound / kIo; kInvalidArgument naming
  // the file and the limit when it holds more than max_bytes.
  Result<std::string> Read(const std::string& name, int64_t max_bytes = kMaxExportFileBytes) const;

  // One element of the array, as found.
  struct Element {
    int64_t index = 0;       // 0-based position in the array
    std::string text;        // its JSON text (empty if too_long)
    bool too_long = false;   // longer than kMaxConversationBytes
    bool cut_short = false;  // the input ended inside it
  };
  // Streams conversations.json's array, calling `fn` per element; stops at
  // the first error `fn` returns. kInvalidArgument if it is not an array.
  Status ForEach(const std::function<Status(Element&)>& fn, int64_t* bytes_read,
                 int64_t* total_bytes);

  // The name conversations.json has inside the export (for skip reasons).
  const std::string& label() const { return label_; }

 private:
  ExportArchive() = default;
  Result<int64_t> ReadChunk(char* buf, size_t n);

  std::filesystem::path root_;  // folder exports
  void* zip_ = nullptr;         // zip_t*
  int64_t json_index_ = -1;     // the entry of conversations.json in the zip
  std::filesystem::path json_path_;
  std::string label_;
  std::vector<std::string> files_;
  void* zip_file_ = nullptr;  // zip_file_t*
  std::FILE* file_ = nullptr;
  int64_t total_ = 0;
};

// Runs `fn` on each conversation of `archive` that parses as a JSON object,
// with its place ("conversations.json[3]"); one too long, cut short or not
// an object is skipped in `sink` with the reason. Reports progress to `sink`.
Status ForEachConversation(
    ExportArchive& archive, ImportSink& sink,
    const std::function<Status(const nlohmann::json& conversation, const std::string& where)>& fn);

}  // namespace sessiondb::interop
