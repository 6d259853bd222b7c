// Store.import_path and Store.export (interop.h): reports as dicts.
#include <pybind11/stl.h>

#include "py_store.h"
#include "sessiondb/interop.h"
#include "support.h"

namespace sessiondb::python {

namespace {

py::list SkippedList(const std::vector<SkippedRecord>& records) {
  py::list out;
  for (const SkippedRecord& r : records) out.append(py::make_tuple(r.where, r.reason));
  return out;
}

}  // namespace

void BindInterop(py::class_<PyStore>& cls) {
  cls.def(
         "import_path",
         [](PyStore& self, py::object path_arg, std::optional<std::string> format,
            std::optional<int64_t> max_attachment_bytes) {
           std::string path = py::str(py::module_::import("os").attr("fspath")(path_arg));
           ImportOptions options;
           if (format) options.format = Unwrap(ParseImportFormat(*format));
           if (max_attachment_bytes) options.max_attachment_bytes = *max_attachment_bytes;
           ImportReport r =
               self.Run([&](Store& s) { return Unwrap(ImportPath(s, path, options)); });
           py::dict out;
           out["format"] = std::string(ImportFormatName(r.format));
           out["sessions_added"] = r.sessions_added;
           out["sessions_extended"] = r.sessions_extended;
           out["sessions_unchanged"] = r.sessions_unchanged;
           out["messages_added"] = r.messages_added;
           out["images_added"] = r.images_added;
           out["records_skipped"] = r.records_skipped;
           out["skipped"] = SkippedList(r.skipped);
           out["attachments_not_stored"] = r.attachments_not_stored;
           out["not_stored"] = SkippedList(r.not_stored);
           return out;
         },
         py::arg("path"), py::kw_only(), py::arg("format") = py::none(),
         py::arg("max_attachment_bytes") = py::none(),
         "Imports a file or folder (snapshot, claude-code, codex, chatgpt, claude-ai, ...; "
         "detected when format is None). Idempotent: a second import adds nothing.")
      .def(
          "export",
          [](PyStore& self, py::object out_arg, const std::string& format,
             std::vector<std::string> sessions, bool replace) {
            std::string out_path = py::str(py::module_::import("os").attr("fspath")(out_arg));
            ExportOptions options;
            options.format = Unwrap(ParseExportFormat(format));
            options.sessions = std::move(sessions);
            options.replace_earlier_export = replace;
            ExportReport r =
                self.Run([&](Store& s) { return Unwrap(ExportTo(s, out_path, options)); });
            py::dict out;
            out["sessions"] = r.sessions;
            out["messages"] = r.messages;
            out["images"] = r.images;
            out["files"] = py::cast(r.files);
            return out;
          },
          py::arg("out"), py::kw_only(), py::arg("format") = "snapshot",
          py::arg("sessions") = std::vector<std::string>{}, py::arg("replace") = false,
          "Exports sessions (all when none are named) as snapshot, ac-dc, agents-kt, markdown "
          "or jsonl. AlreadyExists if a file not written by an earlier export is in the way.");
}

}  // namespace sessiondb::python
