// The markdown export (being written: reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ExportFormatSpec MarkdownExport() {
  return {"markdown", [](Store&, std::span<const Session>, const std::filesystem::path&,
                      ExportReport*) { return Status::Internal("exporting markdown is not written yet"); }};
}

}  // namespace sessiondb::interop
