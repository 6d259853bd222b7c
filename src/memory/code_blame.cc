// Blame by conversation (include/sessiondb/code_checkpoints.h, BlameFile):
// the file's recorded versions replayed over a model of its lines, each line
// carrying the version that last wrote it, then the model laid over the
// file on disk.
#include <map>
#include <memory>
#include <optional>

#include "core/tool_call_text.h"
#include "memory/checkpoint_files.h"
#include "memory/code_checkpoints.h"

namespace sessiondb {
namespace {

constexpr int kNoAgent = -1;
// The most lines of earlier models blame keeps to give restored lines back.
constexpr size_t kMaxBlameHeldLines = 2'000'000;

// A line of the model and the index (in the versions replayed) of the
// version that wrote it, or kNoAgent.
struct BlameModelLine {
  std::string text;
  int64_t by = kNoAgent;
};

// The model turned into `new_text`: lines the two share keep who wrote
// them, the new ones are `by`'s. A pair too large to compare gives every
// line to `by`.
std::vector<BlameModelLine> AdvanceBlameModel(const std::vector<BlameModelLine>& model,
                                              std::string_view model_text,
                                              std::string_view new_text, int64_t by) {
  std::vector<BlameModelLine> next;
  std::optional<std::vector<DiffLine>> diff = DiffLines(model_text, new_text);
  if (!diff) {
    for (std::string_view line : SplitLines(new_text)) next.push_back({std::string(line), by});
    return next;
  }
  size_t old_index = 0;
  for (DiffLine& d : *diff) {
    switch (d.op) {
      case DiffOp::kSame:
        next.push_back({std::move(d.text), old_index < model.size() ? model[old_index].by : by});
        ++old_index;
        break;
      case DiffOp::kRemoved:
        ++old_index;
        break;
      case DiffOp::kAdded:
        next.push_back({std::move(d.text), by});
        break;
    }
  }
  return next;
}

}  // namespace

Result<std::vector<BlameLine>> BlameFile(Store& store, std::string_view file_path) {
  RETURN_IF_ERROR(memory::CheckCheckpointPath(file_path));
  const std::string path(file_path);
  ASSIGN_OR_RETURN(memory::DiskFile disk, memory::ReadDiskFile(path, kMaxFileVersionBytes));
  if (!disk.exists) return Err(Status::NotFound("there is no file at " + path));
  if (disk.too_large) {
    return Err(Status::FailedPrecondition(path + " is larger than " +
                                          std::to_string(kMaxFileVersionBytes) +
                                          " bytes; blame reads files up to that size"));
  }
  FileVersionQuery query;
  query.file_path = path;
  ASSIGN_OR_RETURN(std::vector<FileVersion> versions, memory::ListAllFileVersions(store, query));
  using Model = std::shared_ptr<const std::vector<BlameModelLine>>;
  auto advance = [](const Model& model, std::string_view from, std::string_view to, int64_t by) {
    return std::make_shared<const std::vector<BlameModelLine>>(
        AdvanceBlameModel(*model, from, to, by));
  };
  Model model = std::make_shared<const std::vector<BlameModelLine>>();
  std::string model_text;  // the content the model stands for ("" at first: no file)
  // The model as it was when the file last held each content (by digest;
  // "" for no file), so a rewind or restore that writes an earlier content
  // back gives its lines back to the calls that wrote them. Capped in lines.
  std::map<std::string, Model> held;
  size_t held_lines = 0;
  for (size_t i = 0; i < versions.size(); ++i) {
    const FileVersion& v = versions[i];
    ASSIGN_OR_RETURN(std::string content, memory::FileVersionContent(store, v));
    const std::string key = v.exists ? v.sha256 : "";
    const auto earlier = held.find(key);
    if (v.phase == FileVersionPhase::kBefore) {
      // Not what the model holds: someone else wrote the file in between.
      if (content != model_text) model = advance(model, model_text, content, kNoAgent);
    } else if (v.source == kCheckpointRestoreSource && earlier != held.end()) {
      model = earlier->second;
    } else {
      model = advance(model, model_text, content, static_cast<int64_t>(i));
    }
    model_text = std::move(content);
    if (earlier != held.end()) {
      held_lines -= earlier->second->size();
      earlier->second = model;
      held_lines += model->size();
    } else if (held_lines + model->size() <= kMaxBlameHeldLines) {
      held.emplace(key, model);
      held_lines += model->size();
    }
  }
  model = advance(model, model_text, disk.content, kNoAgent);

  memory::VersionPlacer placer(store);
  std::map<int64_t, PlacedFileVersion> placed;  // by index in `versions`
  std::vector<BlameLine> out;
  out.reserve(model->size());
  for (const BlameModelLine& line : *model) {
    BlameLine b;
    b.line = std::ssize(out) + 1;
    b.text = line.text;
    if (line.by != kNoAgent) {
      auto it = placed.find(line.by);
      if (it == placed.end()) {
        ASSIGN_OR_RETURN(PlacedFileVersion p, placer.Place(versions[static_cast<size_t>(line.by)]));
        it = placed.emplace(line.by, std::move(p)).first;
      }
      b.by = it->second;
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace sessiondb
