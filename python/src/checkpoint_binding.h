// Code checkpoints on sessiondb.Store (include/sessiondb/code_checkpoints.h,
// docs/python.md, "Code checkpoints"): rewind (with code=), file_history,
// blame, restore_file and record_file_version, answering the dicts of the
// HTTP API's JSON (docs/http-api.md). Thread-safety: as every Store call,
// the engine's work runs with the GIL released (PyStore::Run).
#pragma once

#include "py_store.h"

namespace sessiondb::python {

void BindCheckpoints(py::class_<PyStore>& cls);

}  // namespace sessiondb::python
