// OutlineJsonFile: the top level of a JSON document too large to hold,
// read from its file in blocks. It gives the raw text of the top-level
// object's scalar members ("format", "version") and hands over, one at a
// time, each element of one array member ("sessions") with its place in the
// file, so a caller can look at each and come back for it later (fseek)
// without ever holding more than the largest element.
//
// It checks structure only (brackets balance, strings close, one object and
// nothing after it); an element's own JSON is the caller's to parse.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::interop {

struct JsonOutline {
  // Top-level members whose value is not an object or array: name -> raw
  // JSON text (a string keeps its quotes and escapes).
  std::map<std::string, std::string> scalars;
  bool array_found = false;  // the array member was there (and was an array)
  int64_t elements = 0;
};

// Called for each element of the array: its byte offset in the file and its
// text (valid during the call). A non-OK status stops the outline with it.
using OutlineElementFn = std::function<Status(int64_t offset, std::string_view text)>;

// kInvalidArgument naming the file and the byte when the document is not a
// whole JSON object (truncated, unbalanced, something after it); kIo if the
// file cannot be read.
Result<JsonOutline> OutlineJsonFile(const std::filesystem::path& path, std::string_view array_key,
                                    const OutlineElementFn& on_element);

}  // namespace sessiondb::interop
