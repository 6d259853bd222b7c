// The extension module sessiondb._sessiondb; python/sessiondb/__init__.py
// re-exports it with the pure-Python additions.
#include "support.h"

PYBIND11_MODULE(_sessiondb, m) {
  m.doc() = "sessiondb's engine (C++), bound with pybind11. Import `sessiondb`, not this.";
  sessiondb::python::RegisterErrors(m);
  sessiondb::python::BindTypes(m);
  sessiondb::python::BindStore(m);
}
