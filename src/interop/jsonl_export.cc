// The jsonl export (being written: reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ExportFormatSpec JsonlExport() {
  return {"jsonl", [](Store&, std::span<const Session>, const std::filesystem::path&,
                      ExportReport*) { return Status::Internal("exporting jsonl is not written yet"); }};
}

}  // namespace sessiondb::interop
