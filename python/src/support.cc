// Exceptions, JSON and bytes conversions shared by the bindings (support.h).
#include "support.h"

#include <array>

namespace sessiondb::python {

namespace {

// The exception classes, one per StatusCode, created once at import.
struct ErrorClasses {
  PyObject* base = nullptr;
  std::array<PyObject*, 9> by_code{};
};
ErrorClasses g_errors;

// A new exception class `name` of `bases` whose instances carry `code`.
PyObject* NewError(py::module_& m, const char* name, py::tuple bases, const char* code,
                   const char* doc) {
  std::string qualified = std::string("sessiondb.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  py::handle(cls).attr("code") = py::str(code);
  m.add_object(name, py::handle(cls));
  return cls;
}

}  // namespace

void RegisterErrors(py::module_& m) {
  py::tuple error_bases = py::make_tuple(py::handle(PyExc_Exception));
  g_errors.base = NewError(m, "Error", error_bases, "unknown",
                           "A sessiondb call failed; `code` names why (status.h), str() says what.");
  py::handle base(g_errors.base);
  auto sub = [&](StatusCode code, const char* name, PyObject* also, const char* doc) {
    py::tuple bases = also ? py::make_tuple(base, py::handle(also)) : py::make_tuple(base);
    g_errors.by_code[static_cast<size_t>(code)] =
        NewError(m, name, bases, std::string(StatusCodeName(code)).c_str(), doc);
  };
  sub(StatusCode::kInvalidArgument, "InvalidArgument", PyExc_ValueError,
      "An argument was refused (HTTP 400); nothing was written.");
  sub(StatusCode::kNotFound, "NotFound", PyExc_LookupError,
      "No such session, message, blob or draft (HTTP 404).");
  sub(StatusCode::kAlreadyExists, "AlreadyExists", nullptr,
      "The id is taken, or a file is in the way (HTTP 409).");
  sub(StatusCode::kFailedPrecondition, "FailedPrecondition", nullptr,
      "The store is read-only, closed, or written by a newer sessiondb (HTTP 409).");
  sub(StatusCode::kBusy, "Busy", nullptr,
      "Another writer held the store past busy_timeout_ms, or the server is unreachable (503).");
  sub(StatusCode::kCorruption, "Corruption", nullptr,
      "Stored bytes no longer match their hash, or a record cannot be decoded (HTTP 500).");
  sub(StatusCode::kIo, "IoError", PyExc_OSError, "A read or write of the disk failed (HTTP 500).");
  sub(StatusCode::kInternal, "Internal", nullptr, "A bug in sessiondb (HTTP 500).");
  g_errors.by_code[0] = g_errors.base;

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      auto index = static_cast<size_t>(e.status.code());
      PyObject* cls = index < g_errors.by_code.size() && g_errors.by_code[index]
                          ? g_errors.by_code[index]
                          : g_errors.base;
      PyErr_SetString(cls, e.status.message().c_str());
    }
  });
}

void ThrowInvalid(std::string message) {
  throw StatusError{Status::InvalidArgument(std::move(message))};
}

py::object JsonToPy(std::string_view text, py::object empty) {
  if (text.empty()) return empty;
  // Leaked on purpose: a static py::object would be released after the
  // interpreter is gone.
  static py::object* loads = new py::object(py::module_::import("json").attr("loads"));
  return (*loads)(py::str(text.data(), text.size()));
}

std::string PyToJson(py::handle value) {
  static py::object* dumps = new py::object(py::module_::import("json").attr("dumps"));
  try {
    return (*dumps)(value, py::arg("ensure_ascii") = false, py::arg("separators") = py::make_tuple(",", ":"))
        .cast<std::string>();
  } catch (py::error_already_set& e) {
    ThrowInvalid(std::string("not JSON-serialisable: ") + e.what());
  }
}

std::string BytesOf(py::handle value) {
  if (PyBytes_Check(value.ptr())) {
    return std::string(PyBytes_AS_STRING(value.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(value.ptr())));
  }
  if (!PyObject_CheckBuffer(value.ptr())) {
    ThrowInvalid(std::string("expected a bytes-like object, got ") +
                 std::string(py::str(value.get_type().attr("__name__"))));
  }
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(value).request();
  if (info.ndim > 1) {
    // A C-contiguous array's bytes in order; anything else through bytes().
    return py::bytes(py::reinterpret_borrow<py::object>(value)).cast<std::string>();
  }
  return std::string(static_cast<const char*>(info.ptr),
                     static_cast<size_t>(info.size * info.itemsize));
}

}  // namespace sessiondb::python
