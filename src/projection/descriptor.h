// The text a projection writes in place of what it does not send: resource
// descriptors, the heading of a resource view and the text of a compaction.
// All the wording lives here, so every provider shape says the same thing.
//
// The forms (one line each, deterministic; a detail that is empty or 0 is
// left out together with its comma):
//   image, not shown again:
//     [image <id>: "<name>", <mime>, <size> bytes, <W>x<H>, sha256 <hex>.
//      Attached on an earlier turn and not shown again; to see it, record a
//      resource_view of <id>.]
//   image whose blob is missing:
//     [image <id>: "<name>", ... sha256 <hex>. MISSING from the store: its
//      bytes are lost and it cannot be shown.]
//   file (never sent; non-image projection is out of scope):
//     [file <id>: "<name>", <mime>, <size> bytes, sha256 <hex>. Its contents
//      are not sent to the provider.]
//     ("... MISSING from the store: its bytes are lost." when missing)
//   remote link:
//     [link <uri> "<name>": a remote link, never fetched.]
//   resource view heading:
//     [resource_view <id>: <reason>]          ([resource_view <id>] if no reason)
//   compaction:
//     [Summary of earlier conversation: events <from>–<to>]\n<summary>
//     followed by \n\nLimitations: <limitations> when there are any.
//   a tool result whose call is not in the request (its output follows):
//     [Result of tool call "<id>", whose call is not part of this
//      conversation:]\n<output>     ("[Error from tool call "<id>", ..." for
//      an error; the id quoted as names are)
//   a tool error with no output (Anthropic refuses an empty one):
//     [The tool reported an error and gave no output.]
//   what opens an Anthropic request whose window starts with an answer:
//     [Earlier turns of this conversation are not included.]
// (The descriptor forms above are wrapped here; each is one line.) Names are
// quoted with `"` and `\` escaped and control characters turned into spaces,
// so a descriptor always stays one line.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "sessiondb/types.h"

namespace sessiondb::projection {

// The descriptor of an image that is not sent in full: the "not shown again"
// form, or the "MISSING" form when `missing`.
std::string ImageDescriptor(const Resource& resource, bool missing);

// The descriptor of a file attachment (never sent), "MISSING" form when `missing`.
std::string FileDescriptor(const Resource& resource, bool missing);

// The descriptor of a remote link (resource.uri, resource.name).
std::string LinkDescriptor(const Resource& resource);

// The text that opens a resource view: which resource and why.
std::string ResourceViewHeading(const ResourceView& view);

// The text that stands in for a compacted range: its span, the summary and
// the limitations.
std::string CompactionText(const Compaction& compaction);

// The user text that stands for a tool result no call in the request
// answers to: which call, and the output.
std::string ToolResultWithoutCall(const std::string& call_id, const std::string& output,
                                  bool is_error);

// The content of an error result that has no output.
std::string EmptyToolError();

// The user turn that opens a request whose first turn would be the
// assistant's (Anthropic requires the user to speak first).
std::string EarlierTurnsLeftOut();

}  // namespace sessiondb::projection
