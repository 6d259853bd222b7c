// Exceptions, JSON and bytes conversions shared by the bindings (support.h).
#include "support.h"

#include <array>
#include <cstdio>

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
  g_errors.base =
      NewError(m, "Error", error_bases, "unknown",
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
    } catch (const py::cast_error& e) {
      // A Python value the binding could not convert: the caller's type, not
      // a RuntimeError of ours.
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });
}

std::string TypeName(py::handle value) {
  return std::string(py::str(value.get_type().attr("__name__")));
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
  py::object text;
  try {
    // allow_nan=False: NaN and Infinity are not JSON, and no other reader takes them.
    text = (*dumps)(value, py::arg("ensure_ascii") = false,
                    py::arg("separators") = py::make_tuple(",", ":"), py::arg("allow_nan") = false);
  } catch (py::error_already_set& e) {
    // The exception's own message, not what(): that carries the traceback.
    ThrowInvalid("not JSON-serialisable: " + std::string(py::str(e.value())));
  }
  return TextOf(text, "the JSON value");
}

std::string BytesOf(py::handle value) {
  if (PyBytes_Check(value.ptr())) {
    return std::string(PyBytes_AS_STRING(value.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(value.ptr())));
  }
  if (!PyObject_CheckBuffer(value.ptr())) {
    ThrowInvalid("expected a bytes-like object, got " + TypeName(value));
  }
  // PyBUF_FULL_RO: the exporter describes its strides (a reversed or strided
  // memoryview has them) rather than refusing; PyBuffer_ToContiguous walks
  // them, and copies contiguous buffers in one piece.
  Py_buffer view;
  if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_FULL_RO) != 0) throw py::error_already_set();
  std::string bytes(static_cast<size_t>(view.len), '\0');
  const int copied = PyBuffer_ToContiguous(bytes.data(), &view, view.len, 'C');
  PyBuffer_Release(&view);
  if (copied != 0) throw py::error_already_set();
  return bytes;
}

std::string TextOf(py::handle value, std::string_view what) {
  if (!PyUnicode_Check(value.ptr())) {
    ThrowInvalid(std::string(what) + " must be a str, not " + TypeName(value));
  }
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (utf8 != nullptr) return std::string(utf8, static_cast<size_t>(size));
  // A UnicodeEncodeError: say where, without the exception's own text (it
  // quotes the whole string).
  Py_ssize_t start = -1;
  PyObject *type = nullptr, *error = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &error, &trace);
  PyErr_NormalizeException(&type, &error, &trace);
  if (error != nullptr &&
      PyObject_TypeCheck(error, reinterpret_cast<PyTypeObject*>(PyExc_UnicodeEncodeError))) {
    if (PyUnicodeEncodeError_GetStart(error, &start) != 0) start = -1;
  }
  Py_XDECREF(type);
  Py_XDECREF(error);
  Py_XDECREF(trace);
  PyErr_Clear();
  std::string where;
  if (start >= 0) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X",
                  static_cast<unsigned>(PyUnicode_ReadChar(value.ptr(), start)));
    where = " (" + std::string(code) + " at index " + std::to_string(start) + ")";
  }
  ThrowInvalid(std::string(what) + " is not valid Unicode text: it holds a lone surrogate" + where +
               ", which UTF-8 cannot store");
}

int64_t CountOf(py::handle value, std::string_view what) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) {
    ThrowInvalid(std::string(what) + " must be an int, not " + TypeName(value));
  }
  int overflow = 0;
  const long long count = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || count < 0) {
    PyErr_Clear();
    ThrowInvalid(std::string(what) + " is " + std::string(py::str(value)).substr(0, 40) +
                 "; it must be 0 .. 9223372036854775807");
  }
  return count;
}

}  // namespace sessiondb::python
