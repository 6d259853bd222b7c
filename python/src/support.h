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

// The name of `value`'s type ("float"), for messages.
std::string TypeName(py::handle value);

// Throws sessiondb.InvalidArgument with `message` (a caller's mistake found
// in the binding, before any engine call).
[[noreturn]] void ThrowInvalid(std::string message);

// JSON text to the Python value json.loads gives; empty text gives `empty`.
py::object JsonToPy(std::string_view text, py::object empty = py::none());
// A JSON-ready Python value (dict, list, str, ...) or JSON text already (a
// str when `str_is_json`) to compact JSON text.
std::string PyToJson(py::handle value);

// The bytes of any object with the buffer protocol (bytes, bytearray,
// memoryview, array.array, numpy arrays...), copied in the order the buffer
// lists its elements, whatever its strides: a reversed or strided view gives
// the bytes it shows, never the memory around them. sessiondb.InvalidArgument
// for an object without the protocol.
std::string BytesOf(py::handle value);

// The UTF-8 of the str `value`; `what` names it in errors.
// sessiondb.InvalidArgument (a ValueError) for another type, and for a str
// UTF-8 cannot hold (a lone surrogate such as "\ud800", from os.fsdecode or a
// broken JSON escape), saying where.
std::string TextOf(py::handle value, std::string_view what);

// The int `value` as a 64-bit count; `what` names it in errors.
// sessiondb.InvalidArgument for a float, str or other type (bool too), and
// for an int outside 0 .. 2^63-1.
int64_t CountOf(py::handle value, std::string_view what);

// Registers the classes of each part of the API.
void BindTypes(py::module_& m);
void BindStore(py::module_& m);

}  // namespace sessiondb::python
