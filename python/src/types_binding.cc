// The value classes of types.h as Python classes: Resource, Part, Usage,
// Message, AppendResult, Session, ResourceView, Compaction, Event, Draft, and
// the part constructors (sessiondb.text, image, file, link, tool_call,
// tool_result, reasoning). Enum fields are their wire names ("user",
// "image"); JSON fields (metadata, arguments) are Python values.
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include "parts.h"
#include "sessiondb/types.h"
#include "support.h"

namespace sessiondb::python {

namespace {

std::string Str(std::string_view s) { return std::string(s); }

void BindResource(py::module_& m) {
  py::class_<Resource>(m, "Resource",
                       "The descriptor of a stored attachment; its bytes live in the blob store "
                       "under content_sha256 (Store.read_blob).")
      .def_readonly("resource_id", &Resource::resource_id)
      .def_readonly("content_sha256", &Resource::content_sha256)
      .def_readonly("mime", &Resource::mime)
      .def_readonly("size", &Resource::size)
      .def_readonly("width", &Resource::width)
      .def_readonly("height", &Resource::height)
      .def_property_readonly("origin", [](const Resource& r) { return Str(OriginName(r.origin)); })
      .def_readonly("name", &Resource::name)
      .def_readonly("uri", &Resource::uri)
      .def_readonly("not_stored", &Resource::not_stored)
      .def_readonly("missing", &Resource::missing)
      .def(py::self == py::self)
      .def("__repr__", [](const Resource& r) {
        return "Resource(" + r.resource_id + ", " + r.mime + ", " + std::to_string(r.size) +
               " bytes)";
      });
}

void BindPart(py::module_& m) {
  py::class_<Part>(m, "Part",
                   "One element of a message. Make one with sessiondb.text(), image(), file(), "
                   "link(), tool_call(), tool_result() or reasoning().")
      .def_property_readonly("type", [](const Part& p) { return Str(PartTypeName(p.type)); })
      .def_readonly("text", &Part::text)
      .def_readonly("resource", &Part::resource)
      .def_readonly("tool_call_id", &Part::tool_call_id)
      .def_readonly("tool_name", &Part::tool_name)
      .def_readonly("arguments_json", &Part::arguments_json)
      .def_property_readonly("arguments",
                             [](const Part& p) { return JsonToPy(p.arguments_json, py::dict()); })
      .def_readonly("is_error", &Part::is_error)
      .def_readonly("signature", &Part::signature)
      .def("__eq__",
           [](const Part& a, const Part& b) {
             return a.type == b.type && a.text == b.text && a.resource == b.resource &&
                    a.tool_call_id == b.tool_call_id && a.tool_name == b.tool_name &&
                    a.arguments_json == b.arguments_json && a.is_error == b.is_error &&
                    a.signature == b.signature;
           })
      .def("__repr__", [](const Part& p) {
        std::string head = "Part(" + Str(PartTypeName(p.type));
        if (!p.text.empty()) head += ", " + std::string(py::repr(py::str(p.text.substr(0, 40))));
        if (p.resource) head += ", " + p.resource->resource_id;
        if (!p.tool_name.empty()) head += ", " + p.tool_name;
        return head + ")";
      });

  m.def(
      "text", [](py::handle text) { return Part::Text(TextOf(text, "the text")); }, py::arg("text"),
      "A text part.");
  m.def(
      "reasoning",
      [](py::handle text, py::handle signature) {
        return Part::Reasoning(TextOf(text, "the reasoning"), TextOf(signature, "the signature"));
      },
      py::arg("text"), py::arg("signature") = "",
      "A reasoning part; `signature` is the provider's opaque proof (Anthropic's thinking "
      "signature, OpenAI's encrypted_content), sent back only to that provider.");
  m.def(
      "image",
      [](py::handle source, const std::string& mime, const std::string& name) {
        return AttachmentPart(PartType::kImage, source, mime, name);
      },
      py::arg("source"), py::arg("mime") = "", py::arg("name") = "",
      "An image part from bytes-like data, a path (str or os.PathLike) or a data URI. The "
      "store refuses what is not PNG, JPEG, GIF or WebP.");
  m.def(
      "file",
      [](py::handle source, const std::string& mime, const std::string& name) {
        return AttachmentPart(PartType::kFile, source, mime, name);
      },
      py::arg("source"), py::arg("mime") = "", py::arg("name") = "",
      "A file part from bytes-like data, a path or a data URI (an image is stored as an image).");
  m.def("link", &Part::Link, py::arg("url"), py::arg("name") = "", py::arg("mime") = "",
        py::arg("size") = 0, "A link to a remote resource: a descriptor, never fetched.");
  m.def(
      "tool_call",
      [](std::string id, std::string name, py::handle arguments) {
        std::string json = arguments.is_none()                  ? "{}"
                           : py::isinstance<py::str>(arguments) ? TextOf(arguments, "the arguments")
                                                                : PyToJson(arguments);
        return Part::ToolCall(std::move(id), std::move(name), std::move(json));
      },
      py::arg("id"), py::arg("name"), py::arg("arguments") = py::none(),
      "A tool call; `arguments` is a JSON-ready value or JSON text.");
  m.def(
      "tool_result",
      [](std::string tool_call_id, py::handle output, bool is_error) {
        return Part::ToolResult(std::move(tool_call_id), TextOf(output, "the tool's output"),
                                is_error);
      },
      py::arg("tool_call_id"), py::arg("output"), py::arg("is_error") = false,
      "The result of the tool call `tool_call_id`.");
}

void BindUsage(py::module_& m) {
  py::class_<Usage>(m, "Usage", "Provider-reported token usage of one turn.")
      .def(py::init([](py::handle input, py::handle output, py::handle cached, py::handle reasoning,
                       py::handle cache_write) {
             return Usage{CountOf(input, "input_tokens"), CountOf(output, "output_tokens"),
                          CountOf(cached, "cached_tokens"), CountOf(reasoning, "reasoning_tokens"),
                          CountOf(cache_write, "cache_write_tokens")};
           }),
           py::arg("input_tokens") = 0, py::arg("output_tokens") = 0, py::arg("cached_tokens") = 0,
           py::arg("reasoning_tokens") = 0, py::arg("cache_write_tokens") = 0)
      .def_readwrite("input_tokens", &Usage::input_tokens)
      .def_readwrite("output_tokens", &Usage::output_tokens)
      .def_readwrite("cached_tokens", &Usage::cached_tokens)
      .def_readwrite("reasoning_tokens", &Usage::reasoning_tokens)
      .def_readwrite("cache_write_tokens", &Usage::cache_write_tokens)
      .def(py::self == py::self)
      .def("__repr__", [](const Usage& u) {
        return "Usage(input_tokens=" + std::to_string(u.input_tokens) +
               ", output_tokens=" + std::to_string(u.output_tokens) +
               ", cached_tokens=" + std::to_string(u.cached_tokens) +
               ", reasoning_tokens=" + std::to_string(u.reasoning_tokens) +
               ", cache_write_tokens=" + std::to_string(u.cache_write_tokens) + ")";
      });
}

void BindMessage(py::module_& m) {
  py::class_<Message>(m, "Message",
                      "A message of a session's log. Built by hand for Store.append, or read "
                      "back (then id, session_id, seq and ts_ms are set).")
      .def(py::init([](const std::string& role, py::handle content, std::string model,
                       std::string provider, py::handle usage, py::handle metadata,
                       std::vector<std::string> files, std::vector<std::string> files_modified,
                       std::string id) {
             Message message;
             message.role = RoleOf(role);
             message.parts = PartsOf(content);
             message.model = std::move(model);
             message.provider = std::move(provider);
             if (!usage.is_none()) message.usage = UsageOf(usage);
             if (!metadata.is_none()) message.metadata_json = PyToJson(metadata);
             message.files = std::move(files);
             message.files_modified = std::move(files_modified);
             message.id = std::move(id);
             return message;
           }),
           py::arg("role") = "user", py::arg("content") = py::none(), py::kw_only(),
           py::arg("model") = "", py::arg("provider") = "", py::arg("usage") = py::none(),
           py::arg("metadata") = py::none(), py::arg("files") = std::vector<std::string>{},
           py::arg("files_modified") = std::vector<std::string>{}, py::arg("id") = "")
      .def_readonly("id", &Message::id)
      .def_readonly("session_id", &Message::session_id)
      .def_readonly("seq", &Message::seq)
      .def_readonly("ts_ms", &Message::ts_ms)
      .def_property_readonly("role", [](const Message& msg) { return Str(RoleName(msg.role)); })
      .def_readonly("parts", &Message::parts)
      .def_property_readonly("text", &Message::Text, "The text parts joined by newlines.")
      .def_readonly("files", &Message::files)
      .def_readonly("files_modified", &Message::files_modified)
      .def_readonly("model", &Message::model)
      .def_readonly("provider", &Message::provider)
      .def_readonly("usage", &Message::usage)
      .def_property_readonly(
          "metadata", [](const Message& msg) { return JsonToPy(msg.metadata_json, py::dict()); })
      .def_readonly("pruned", &Message::pruned)
      .def("__repr__", [](const Message& msg) {
        return "Message(seq=" + std::to_string(msg.seq) + ", " + Str(RoleName(msg.role)) + ", " +
               std::string(py::repr(py::str(msg.Text().substr(0, 60)))) + ")";
      });

  py::class_<AppendResult>(m, "AppendResult",
                           "What Store.append reports once the message is durable.")
      .def_readonly("message_id", &AppendResult::message_id)
      .def_readonly("seq", &AppendResult::seq)
      .def_readonly("ts_ms", &AppendResult::ts_ms)
      .def_readonly("resources", &AppendResult::resources)
      .def("__repr__", [](const AppendResult& r) {
        return "AppendResult(seq=" + std::to_string(r.seq) + ", " + r.message_id + ")";
      });
}

void BindSession(py::module_& m) {
  py::class_<Session>(m, "Session", "The index entry of a session: what a list shows.")
      .def_readonly("id", &Session::id)
      .def_readonly("title", &Session::title)
      .def_readonly("preview", &Session::preview)
      .def_readonly("created_ms", &Session::created_ms)
      .def_readonly("updated_ms", &Session::updated_ms)
      .def_readonly("message_count", &Session::message_count)
      .def_readonly("last_seq", &Session::last_seq)
      .def_readonly("archived", &Session::archived)
      .def_property_readonly("metadata",
                             [](const Session& s) { return JsonToPy(s.metadata_json, py::dict()); })
      .def_readonly("parent_id", &Session::parent_id)
      .def_readonly("fork_seq", &Session::fork_seq)
      .def_readonly("trashed_ms", &Session::trashed_ms)
      .def("__repr__", [](const Session& s) {
        return "Session(" + s.id + ", " + std::string(py::repr(py::str(s.title))) + ", " +
               std::to_string(s.message_count) + " messages)";
      });
}

void BindEvents(py::module_& m) {
  py::class_<ResourceView>(m, "ResourceView", "A resource deliberately put back into context.")
      .def_readonly("resource_id", &ResourceView::resource_id)
      .def_readonly("reason", &ResourceView::reason)
      .def_readonly("resource", &ResourceView::resource)
      .def_readonly("message_seq", &ResourceView::message_seq);
  py::class_<Compaction>(m, "Compaction", "A summary standing in for from_seq..to_seq.")
      .def_readonly("from_seq", &Compaction::from_seq)
      .def_readonly("to_seq", &Compaction::to_seq)
      .def_readonly("summary", &Compaction::summary)
      .def_readonly("strategy", &Compaction::strategy)
      .def_readonly("model", &Compaction::model)
      .def_readonly("limitations", &Compaction::limitations)
      .def_readonly("images", &Compaction::images);
  py::class_<Event>(m, "Event",
                    "One entry of a session's log; `type` says which of message, resource_view, "
                    "compaction and rewind is meaningful.")
      .def_readonly("id", &Event::id)
      .def_readonly("session_id", &Event::session_id)
      .def_readonly("seq", &Event::seq)
      .def_readonly("ts_ms", &Event::ts_ms)
      .def_property_readonly("type", [](const Event& e) { return Str(EventTypeName(e.type)); })
      .def_readonly("message", &Event::message)
      .def_readonly("resource_view", &Event::resource_view)
      .def_readonly("compaction", &Event::compaction)
      .def_property_readonly(
          "rewind_to_seq", [](const Event& e) { return e.rewind.to_seq; },
          "For a rewind event: the seq the session's view was ended at.")
      .def("__repr__", [](const Event& e) {
        return "Event(seq=" + std::to_string(e.seq) + ", " + Str(EventTypeName(e.type)) + ")";
      });
  py::class_<Draft>(m, "Draft", "Assistant output being streamed, saved as it grows.")
      .def_readonly("id", &Draft::id)
      .def_readonly("session_id", &Draft::session_id)
      .def_property_readonly("role", [](const Draft& d) { return Str(RoleName(d.role)); })
      .def_readwrite("text", &Draft::text)
      .def_readwrite("reasoning", &Draft::reasoning)
      .def_readonly("model", &Draft::model)
      .def_readonly("created_ms", &Draft::created_ms)
      .def_readonly("updated_ms", &Draft::updated_ms);
}

}  // namespace

void BindTypes(py::module_& m) {
  BindResource(m);
  BindPart(m);
  BindUsage(m);
  BindMessage(m);
  BindSession(m);
  BindEvents(m);
}

}  // namespace sessiondb::python
