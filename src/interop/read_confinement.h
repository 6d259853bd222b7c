// Which files an import may read. The HTTP server imports from folders the
// operator allowed (--allow-dir) and from uploads it saved in a temporary
// folder; a symbolic link inside either (a transcript elsewhere, /etc/passwd)
// or a name taken from a record ("../../x") must not lead the importer out.
//
// ImportPath installs a ReadConfinement for the roots the caller gives
// (ImportOptions::allowed_roots) for the length of the import, on the thread
// that runs it; every place an importer opens or lists a file asks
// MayRead(path) first. MayRead resolves the path's real location (every
// symbolic link, "..") and accepts it only inside one of the roots. Without
// a confinement (the CLI, importing the user's own files) everything may be
// read, as before.
//
// A link that leads out is refused whether or not its target exists, with
// the same words, so skip reasons never tell what exists outside the roots.
// What is left: a file swapped for a link between the check and the open
// (the roots' owner would have to race the import; docs/interop.md).
//
// Thread-safety: the confinement is per thread (thread_local); imports on
// other threads are not affected.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sessiondb::interop {

class ReadConfinement {
 public:
  // Confines this thread's reads to `roots` (resolved now; a root that does
  // not exist allows nothing). Empty `roots`: no confinement.
  explicit ReadConfinement(const std::vector<std::string>& roots);
  ~ReadConfinement();
  ReadConfinement(const ReadConfinement&) = delete;
  ReadConfinement& operator=(const ReadConfinement&) = delete;

 private:
  bool active_ = false;
  std::vector<std::filesystem::path> previous_;
  bool previous_active_ = false;
};

// True when no confinement is installed on this thread, or `path` resolves
// (following every symbolic link) to a place inside one of its roots.
bool MayRead(const std::filesystem::path& path);

// The reason given for a path MayRead refused, naming it as the import
// knows it (`shown`), never where it leads.
std::string OutsideReason(std::string_view shown);

// True when `name` (an id or file name taken from a record) can be used as
// one component of a path: not empty, not "." or "..", no "..", '/', '\\',
// NUL or other control characters. Ids from foreign formats are names,
// never paths.
bool IsPlainFileName(std::string_view name);

}  // namespace sessiondb::interop
