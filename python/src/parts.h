// Parts and messages built from what a Python caller hands over: a str, a
// Part, or a list of them as a message's content; an image or file from any
// bytes-like object, a path (str or os.PathLike) or a data URI.
//
// Thread-safety: needs the GIL (it reads Python objects).
#pragma once

#include <string>
#include <vector>

#include "sessiondb/types.h"
#include "support.h"

namespace sessiondb::python {

// An image or file part from `source`: a data URI (a str starting "data:"),
// a path (another str, or os.PathLike), or bytes-like. `mime` is the caller's
// claim for bytes (checked by the engine against them).
Part AttachmentPart(PartType type, py::handle source, const std::string& mime,
                    const std::string& name);

// The parts of `content`: None (no parts), a str (one text part), a Part, or
// a list/tuple of str and Part.
std::vector<Part> PartsOf(py::handle content);

// A Usage from a Usage or a dict of its fields (missing ones 0).
Usage UsageOf(py::handle value);

// The role named `name` ("system", "user", "assistant", "tool").
Role RoleOf(const std::string& name);

}  // namespace sessiondb::python
