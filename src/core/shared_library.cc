#include "core/shared_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace sessiondb {

Result<SharedLibrary> SharedLibrary::Open(const LibrarySpec& spec) {
  // secure_getenv: a set-user-ID run ignores the variable, as the loader
  // ignores LD_LIBRARY_PATH; otherwise it grants nothing LD_PRELOAD does not.
  const char* named = secure_getenv(spec.path_variable);
  const std::string file = named != nullptr && *named != '\0' ? named : spec.soname;
  // RTLD_LOCAL: its symbols stay out of the global scope, so a library
  // another part of the process loads (psycopg2's libpq under Python) never
  // binds to this copy by accident.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Err(Status::FailedPrecondition(std::string(spec.feature) + " needs " + spec.package +
                                          " (" + spec.soname + "): apt install " + spec.package +
                                          " (cannot load " + file + ": " +
                                          (why != nullptr ? why : "unknown error") + "; $" +
                                          spec.path_variable + " names another file)"));
  }
  return SharedLibrary(handle, file, spec);
}

Status SharedLibrary::Find(const char* symbol, void** address) const {
  dlerror();  // clear a stale error: a symbol's address may legally be null
  *address = dlsym(handle_, symbol);
  if (*address == nullptr) {
    return Status::FailedPrecondition(std::string(spec_.feature) + " needs " + symbol + ", which " +
                                      file_ + " lacks; install a newer " + spec_.package);
  }
  return Status::Ok();
}

}  // namespace sessiondb
