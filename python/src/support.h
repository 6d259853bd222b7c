// What every binding file of the extension shares: Status to Python
// exceptions (sessiondb.Error and its subclasses, each with the `code` of
// status.h), JSON text to and from Python values, and the small conversions
// of enum names. The pybind11 bindings live in one file per part of the API
// (types_binding.cc, store_binding.cc, search_binding.cc, ...); module.cc
// calls each Bind* below.
//
// Thread-safety: the helpers that touch Python objects need the GIL; Unwrap
// and Check only throw, and may run with it released.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>
#include <utility>

#include "sessiondb/status.h"

namespace sessiondb::python {

namespace py = pybind11;

// A failed Status on its way to Python: thrown where the GIL may be released,
// turned into the sessiondb exception of its code by the translator that
// RegisterErrors installs.
struct StatusError {
  Status status;
};

// Creates sessiondb.Error, NotFound, InvalidArgument, AlreadyExists,
// FailedPrecondition, Busy, Corruption, IoError and Internal on `m` and
// installs the translator of StatusError.
void RegisterErrors(py::module_& m);

// Throws StatusError for a failed status.
inline void Check(Status status) {
  if (!status.ok()) throw StatusError{std::move(status)};
}

// The value of `result`, or throws StatusError.
template <typename T>
T Unwrap(Result<T>&& result) {
  if (!result) throw StatusError{std::move(result.error())};
  return std::move(*result);
}

// Throws sessiondb.InvalidArgument with `message` (a caller's mistake found
// in the binding, before any engine call).
[[noreturn]] void ThrowInvalid(std::string message);

// JSON text to the Python value json.loads gives; empty text gives `empty`.
py::object JsonToPy(std::string_view text, py::object empty = py::none());
// A JSON-ready Python value (dict, list, str, ...) or JSON text already (a
// str when `str_is_json`) to compact JSON text.
std::string PyToJson(py::handle value);

// The bytes of any bytes-like object (bytes, bytearray, memoryview, numpy
// arrays...), copied.
std::string BytesOf(py::handle value);

// Registers the classes of each part of the API.
void BindTypes(py::module_& m);
void BindStore(py::module_& m);

}  // namespace sessiondb::python
