// Parts and messages from Python values (parts.h).
#include "parts.h"

namespace sessiondb::python {

Part AttachmentPart(PartType type, py::handle source, const std::string& mime,
                    const std::string& name) {
  const bool image = type == PartType::kImage;
  if (py::isinstance<py::str>(source)) {
    std::string text =
        TextOf(source, image ? "the image's path or data URI" : "the file's path or data URI");
    if (text.rfind("data:", 0) == 0) {
      Part part =
          image ? Part::ImageFromDataUri(std::move(text)) : Part::FileFromDataUri(std::move(text));
      if (!name.empty()) part.source->name = name;
      return part;
    }
    Part part = image ? Part::ImageFromFile(std::move(text)) : Part::FileFromFile(std::move(text));
    if (!name.empty()) part.source->name = name;
    return part;
  }
  py::object fspath = py::module_::import("os").attr("fspath");
  if (py::hasattr(source, "__fspath__")) {
    py::object fs = fspath(source);
    if (!py::isinstance<py::str>(fs)) fs = py::module_::import("os").attr("fsdecode")(fs);
    std::string path = TextOf(fs, "the path");
    Part part = image ? Part::ImageFromFile(std::move(path)) : Part::FileFromFile(std::move(path));
    if (!name.empty()) part.source->name = name;
    return part;
  }
  std::string bytes = BytesOf(source);
  return image ? Part::ImageFromBytes(std::move(bytes), mime, name)
               : Part::FileFromBytes(std::move(bytes), mime, name);
}

std::vector<Part> PartsOf(py::handle content) {
  std::vector<Part> parts;
  if (content.is_none()) return parts;
  auto one = [&parts](py::handle item) {
    if (py::isinstance<py::str>(item)) {
      parts.push_back(Part::Text(TextOf(item, "a message's text")));
    } else if (py::isinstance<Part>(item)) {
      parts.push_back(item.cast<Part>());
    } else {
      ThrowInvalid("a message's content holds str and sessiondb.Part values, not " +
                   TypeName(item));
    }
  };
  if (py::isinstance<py::list>(content) || py::isinstance<py::tuple>(content)) {
    for (py::handle item : content) one(item);
  } else {
    one(content);
  }
  return parts;
}

Usage UsageOf(py::handle value) {
  if (py::isinstance<Usage>(value)) return value.cast<Usage>();
  if (!py::isinstance<py::dict>(value)) {
    ThrowInvalid("usage must be a sessiondb.Usage or a dict, not " + TypeName(value));
  }
  Usage usage;
  auto dict = py::reinterpret_borrow<py::dict>(value);
  auto field = [&dict](const char* key) -> int64_t {
    if (!dict.contains(key) || dict[key].is_none()) return 0;
    return CountOf(dict[key], std::string("usage[\"") + key + "\"]");
  };
  usage.input_tokens = field("input_tokens");
  usage.output_tokens = field("output_tokens");
  usage.cached_tokens = field("cached_tokens");
  usage.reasoning_tokens = field("reasoning_tokens");
  usage.cache_write_tokens = field("cache_write_tokens");
  return usage;
}

Role RoleOf(const std::string& name) { return Unwrap(ParseRole(name)); }

}  // namespace sessiondb::python
