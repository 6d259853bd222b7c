// Code checkpoints on sessiondb.Store (checkpoint_binding.h). The rules are
// the library's (code_checkpoints.h); this file turns its answers into the
// dicts of the HTTP API's JSON and its refusals into exceptions that carry
// the files they are about.
#include "checkpoint_binding.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/code_checkpoints.h"

namespace sessiondb::python {

namespace {

constexpr size_t kDiffLines = 400;

py::object TextOrNone(const std::string& text) {
  return text.empty() ? py::object(py::none()) : py::object(py::str(text));
}

// A file of a rewind or restore, as the HTTP API's FileRestore.
py::dict FileRestoreDict(const FileRestore& f, bool with_diff) {
  py::dict d;
  d["path"] = f.file_path;
  d["action"] = std::string(FileRestoreActionName(f.action));
  d["version_id"] = f.version_id == 0 ? py::object(py::none()) : py::object(py::int_(f.version_id));
  d["conflict"] = TextOrNone(f.conflict);
  d["refused"] = TextOrNone(f.refused);
  d["done"] = f.done;
  if (with_diff) d["diff"] = FileRestoreDiff(f, kDiffLines);
  return d;
}

py::list FileRestoreList(const std::vector<FileRestore>& files, bool with_diffs) {
  py::list out;
  for (const FileRestore& f : files) out.append(FileRestoreDict(f, with_diffs));
  return out;
}

// The sessiondb exception of `status`'s code with `files` as its `files`
// attribute: which files were refused or in conflict (nothing written), or
// which were written before a later write failed (their "done").
[[noreturn]] void RaiseWithFiles(const Status& status, const std::vector<FileRestore>& files) {
  const char* name = "Error";
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      name = "InvalidArgument";
      break;
    case StatusCode::kNotFound:
      name = "NotFound";
      break;
    case StatusCode::kAlreadyExists:
      name = "AlreadyExists";
      break;
    case StatusCode::kFailedPrecondition:
      name = "FailedPrecondition";
      break;
    case StatusCode::kBusy:
      name = "Busy";
      break;
    case StatusCode::kCorruption:
      name = "Corruption";
      break;
    case StatusCode::kIo:
      name = "IoError";
      break;
    case StatusCode::kInternal:
      name = "Internal";
      break;
    case StatusCode::kOk:
      break;
  }
  py::object cls = py::module_::import("sessiondb._sessiondb").attr(name);
  py::object error = cls(status.message());
  error.attr("files") = FileRestoreList(files, /*with_diffs=*/false);
  PyErr_SetObject(cls.ptr(), error.ptr());
  throw py::error_already_set();
}

// `path` (str, bytes or os.PathLike) as UTF-8 text, absolute and normal
// against the working folder (as the CLI reads a typed path).
std::string CheckpointPathOf(py::handle path) {
  py::module_ os = py::module_::import("os");
  const std::string typed = TextOf(os.attr("fsdecode")(path), "the path");
  const std::string cwd = TextOf(os.attr("getcwd")(), "the working folder");
  return CheckpointFilePath(typed, cwd);
}

// What a code rewind came to, read under the GIL once the engine is done.
struct CodeRewindOutcome {
  Status status;
  std::vector<FileRestore> files;
  std::optional<Event> event;
  Status recorded;  // of RecordFileRestores
};

// Records the files just written (RecordFileRestores), so a later rewind or
// restore does not take this write for someone else's.
Status RecordDone(Store& store, const std::vector<FileRestore>& files,
                  const std::string& agent_session, std::string_view tool) {
  const bool any =
      std::any_of(files.begin(), files.end(), [](const FileRestore& f) { return f.done; });
  if (!any || agent_session.empty()) return Status::Ok();
  return RecordFileRestores(store, files, agent_session, tool);
}

// A RuntimeWarning when the files are written but not recorded: the call
// succeeded, only the record of it is missing.
void WarnIfUnrecorded(const Status& recorded) {
  if (recorded.ok()) return;
  const std::string message =
      "the files are written but not recorded as versions: " + recorded.message();
  if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

py::object Rewind(PyStore& self, const std::string& session_id, int64_t to_seq,
                  const std::string& code, bool force, bool dry_run) {
  if (code == "none") {
    if (dry_run) {
      // A dry run of the conversation alone would otherwise be the real thing.
      ThrowInvalid("dry_run needs code='both' or code='only'");
    }
    return py::cast(self.Run([&](Store& s) { return Unwrap(s.Rewind(session_id, to_seq)); }));
  }
  if (code != "both" && code != "only") {
    ThrowInvalid("code must be 'none', 'both' or 'only', not '" + code.substr(0, 40) + "'");
  }
  const bool conversation = code == "both";
  CodeRewindOutcome outcome = self.Run([&](Store& s) {
    CodeRewindPlan plan = Unwrap(PlanCodeRewind(s, session_id, to_seq));
    CodeRewindOutcome out;
    if (!dry_run) {
      out.status = ApplyFileRestores(plan.files, force);
      out.recorded = RecordDone(s, plan.files, plan.agent_session, "rewind");
      if (out.status.ok() && conversation) {
        Result<Event> rewound = s.Rewind(plan.session_id, plan.to_seq);
        if (rewound) {
          out.event = std::move(*rewound);
        } else {
          out.status = rewound.error();
        }
      }
    }
    out.files = std::move(plan.files);
    return out;
  });
  WarnIfUnrecorded(outcome.recorded);
  if (!outcome.status.ok()) RaiseWithFiles(outcome.status, outcome.files);
  py::dict out;
  out["dry_run"] = dry_run;
  out["conversation"] = conversation;
  if (!dry_run) out["event"] = outcome.event ? py::cast(*outcome.event) : py::object(py::none());
  out["files"] = FileRestoreList(outcome.files, dry_run);
  return out;
}

py::dict FileHistory(PyStore& self, py::handle path_arg, bool diffs) {
  const std::string path = CheckpointPathOf(path_arg);
  std::vector<FileHistoryEntry> history =
      self.Run([&](Store& s) { return Unwrap(ReadFileHistory(s, path, diffs, kDiffLines)); });
  py::list versions;
  for (const FileHistoryEntry& e : history) {
    const PlacedFileVersion& p = e.placed;
    py::dict v;
    v["number"] = e.number;
    v["version_id"] = p.version.id;
    v["time_ms"] = p.version.time_ms;
    v["session_id"] = TextOrNone(p.session_id);
    v["agent_session"] = p.version.agent_session;
    v["seq"] = p.session_id.empty() ? py::object(py::none()) : py::object(py::int_(p.seq));
    v["tool"] = p.version.tool;
    v["tool_use_id"] = TextOrNone(p.version.tool_use_id);
    v["source"] = p.version.source;
    v["exists"] = p.version.exists;
    v["size"] = p.version.size;
    v["sha256"] = TextOrNone(p.version.sha256);
    v["prompt"] = e.prompt;
    if (diffs) v["diff"] = e.diff;
    versions.append(v);
  }
  py::dict out;
  out["path"] = path;
  out["versions"] = versions;
  return out;
}

py::dict Blame(PyStore& self, py::handle path_arg) {
  const std::string path = CheckpointPathOf(path_arg);
  std::vector<BlameLine> lines = self.Run([&](Store& s) { return Unwrap(BlameFile(s, path)); });
  py::list out_lines;
  for (const BlameLine& l : lines) {
    py::dict d;
    d["line"] = l.line;
    d["text"] = py::str(l.text);
    d["agent"] = l.by.has_value();
    if (l.by) {
      const PlacedFileVersion& p = *l.by;
      d["session_id"] = TextOrNone(p.session_id);
      d["agent_session"] = p.version.agent_session;
      d["seq"] = p.session_id.empty() ? py::object(py::none()) : py::object(py::int_(p.seq));
      d["tool_use_id"] = TextOrNone(p.version.tool_use_id);
      d["version_id"] = p.version.id;
      d["tool"] = p.version.tool;
    } else {
      for (const char* key :
           {"session_id", "agent_session", "seq", "tool_use_id", "version_id", "tool"}) {
        d[key] = py::none();
      }
    }
    out_lines.append(d);
  }
  py::dict out;
  out["path"] = path;
  out["lines"] = out_lines;
  return out;
}

py::dict RestoreFile(PyStore& self, py::handle path_arg, int64_t version, bool force,
                     bool dry_run) {
  const std::string path = CheckpointPathOf(path_arg);
  CodeRewindOutcome outcome = self.Run([&](Store& s) {
    CodeRewindOutcome out;
    out.files.push_back(Unwrap(PlanFileRestore(s, path, version)));
    if (dry_run) return out;
    out.status = ApplyFileRestores(out.files, force);
    if (out.files[0].done) {
      // Under the agent session of the version written back.
      Result<std::vector<FileHistoryEntry>> history = ReadFileHistory(s, path, false);
      if (history && version <= std::ssize(*history)) {
        out.recorded = RecordDone(s, out.files,
                                  (*history)[version - 1].placed.version.agent_session, "restore");
      }
    }
    return out;
  });
  WarnIfUnrecorded(outcome.recorded);
  if (!outcome.status.ok()) RaiseWithFiles(outcome.status, outcome.files);
  py::dict out;
  out["path"] = path;
  out["version"] = version;
  out["dry_run"] = dry_run;
  out["files"] = FileRestoreList(outcome.files, dry_run);
  return out;
}

FileVersionPhase PhaseOf(const std::string& name) {
  if (name == "after") return FileVersionPhase::kAfter;
  if (name == "before") return FileVersionPhase::kBefore;
  ThrowInvalid("phase must be 'before' or 'after', not '" + name.substr(0, 40) + "'");
}

py::dict RecordFileVersion(PyStore& self, const std::string& agent_session, py::handle path_arg,
                           py::handle content, const std::string& tool_use_id,
                           const std::string& phase, const std::string& tool,
                           const std::string& source, const std::string& project, int64_t time_ms) {
  FileVersion v;
  v.agent_session = agent_session;
  v.file_path = CheckpointPathOf(path_arg);
  v.tool_use_id = tool_use_id;
  v.phase = PhaseOf(phase);
  v.exists = !content.is_none();
  v.tool = tool;
  v.source = source;
  v.project = project;
  v.time_ms = time_ms;
  std::string bytes;
  if (v.exists) {
    bytes = PyUnicode_Check(content.ptr()) ? TextOf(content, "the content") : BytesOf(content);
  }
  FileVersion kept = self.Run([&](Store& s) { return Unwrap(s.RecordFileVersion(v, bytes)); });
  py::dict out;
  out["id"] = kept.id;
  out["agent_session"] = kept.agent_session;
  out["tool_use_id"] = kept.tool_use_id;
  out["file_path"] = kept.file_path;
  out["phase"] = std::string(FileVersionPhaseName(kept.phase));
  out["exists"] = kept.exists;
  out["sha256"] = kept.sha256;
  out["size"] = kept.size;
  out["tool"] = kept.tool;
  out["source"] = kept.source;
  out["project"] = kept.project;
  out["time_ms"] = kept.time_ms;
  return out;
}

}  // namespace

void BindCheckpoints(py::class_<PyStore>& cls) {
  cls.def("rewind", &Rewind, py::arg("session_id"), py::arg("to_seq"), py::arg("code") = "none",
          py::arg("force") = false, py::arg("dry_run") = false,
          "Ends the session's view at to_seq (0 empties it): later events leave the view "
          "(read, read_last, projections, exports) but stay in the log (read_events); what "
          "is appended next joins the view. Returns the rewind event. InvalidArgument for a "
          "to_seq outside 0..last_seq.\n\n"
          "code='both' also writes back the files the session's agent wrote after to_seq, "
          "before the conversation; code='only' the files alone. Both return a dict as POST "
          "/v1/sessions/{id}/rewind answers: {'dry_run', 'conversation', 'event' (an Event, "
          "None for 'only'), 'files': [{'path', 'action', 'version_id', 'conflict', 'refused', "
          "'done'}]}. dry_run=True changes nothing and gives each file's 'diff' (no 'event'). "
          "A file changed since the agent's last write (unless force=True) or reached through "
          "a symbolic link raises FailedPrecondition, nothing changed, its `files` listing "
          "them.")
      .def("file_history", &FileHistory, py::arg("path"), py::arg("diffs") = true,
           "Every version of the file the agents wrote, across sessions, as GET "
           "/v1/files/history answers: {'path', 'versions': [{'number', 'version_id', "
           "'time_ms', 'session_id', 'agent_session', 'seq', 'tool', 'tool_use_id', 'source', "
           "'exists', 'size', 'sha256', 'prompt', 'diff'}]}. A relative path is read against "
           "the working folder; no recorded versions: an empty list.")
      .def("blame", &Blame, py::arg("path"),
           "Each line of the file now with the tool call that last wrote it, as GET "
           "/v1/files/blame answers: {'path', 'lines': [{'line', 'text', 'agent', "
           "'session_id', 'agent_session', 'seq', 'tool_use_id', 'version_id', 'tool'}]} "
           "(agent False and the rest None: no recorded call wrote it). NotFound when there is "
           "no file; FailedPrecondition for a path through a symbolic link.")
      .def("restore_file", &RestoreFile, py::arg("path"), py::arg("version"),
           py::arg("force") = false, py::arg("dry_run") = false,
           "Writes version N (as file_history numbers it) of the file back, atomically; as POST "
           "/v1/files/restore answers: {'path', 'version', 'dry_run', 'files': [the file]}. "
           "NotFound for a version out of range; FailedPrecondition (with `files`) for a file "
           "changed since the last recorded write without force=True, or a symbolic link.")
      .def("record_file_version", &RecordFileVersion, py::arg("agent_session"), py::arg("path"),
           py::arg("content"), py::kw_only(), py::arg("tool_use_id") = "",
           py::arg("phase") = "after", py::arg("tool") = "", py::arg("source") = "",
           py::arg("project") = "", py::arg("time_ms") = 0,
           "For tools and tests (the Claude Code hook records versions itself): keeps a "
           "version of a file, `content` (str or bytes; None: no file) as tool call "
           "tool_use_id found it (phase='before') or left it ('after'). Returns the kept "
           "version as a dict; the same call, file and phase again returns the first one.");
}

}  // namespace sessiondb::python
