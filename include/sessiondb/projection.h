// Provider projections: the request messages an LLM provider wants (OpenAI
// Chat Completions, OpenAI Responses, Anthropic Messages), built from a
// session's log, which stays the source of truth. See docs/harness.md.
//
// The rules, the same for every shape:
//  - Compactions are replayed first: each summary stands in for its range,
//    and its limitations (which name the images it replaced) go with it.
//  - Images attached by the newest user message go in full (the provider's
//    base64 image part); images attached earlier become a short text
//    descriptor (resource id, name, mime, size, dimensions, sha256, and how to
//    ask for the image again).
//  - A resource_view event sends its resource in full on the next projection
//    only: it counts as seen once an assistant message follows it.
//  - A resource whose blob is missing is never sent as an image: the
//    descriptor says it is missing. Missing means flagged missing on read,
//    without a sha256, or (for an image that would go in full) any error from
//    the ResourceBytesFn.
//  - Files are never sent (a descriptor says so); remote links become a
//    descriptor saying they were never fetched.
//  - Compactions and resource views are user turns; pruned messages are not
//    projected. Reasoning goes back only to the provider that wrote it (the
//    message's provider), with its signature, and never as text: Anthropic
//    thinking blocks, OpenAI Responses reasoning items; nothing for Chat.
//  - Every window is a valid request: each tool result follows the
//    assistant turn of its call, in the one user message of results the
//    providers require; a call without a result is left out, a result
//    without its call becomes a note with its output; ids and tool names
//    are rewritten when a provider would refuse them (src/projection/
//    tool_pairing.h). Anthropic requests open with the user and do not end
//    with whitespace; text that is only whitespace is not sent.
// Every text a projection writes on its own (descriptors, view headings,
// summaries) is worded in one place, src/projection/descriptor.h.
//
// Thread-safety: pure functions; ProjectSession reads through the Store.
//
// Example:
//   ASSIGN_OR_RETURN(std::string body,
//                    ProjectSession(*store, id, {.format = ProviderFormat::kAnthropic}));
//   // body: {"system": "...", "messages": [...]}; add model and parameters.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"

namespace sessiondb {

enum class ProviderFormat { kOpenAiChat, kOpenAiResponses, kAnthropic };
// "openai-chat", "openai-responses", "anthropic".
std::string_view ProviderFormatName(ProviderFormat format);
Result<ProviderFormat> ParseProviderFormat(std::string_view name);

struct ProjectionOptions {
  ProviderFormat format = ProviderFormat::kOpenAiChat;
};

// The bytes of a stored resource (Store::ReadBlob by its sha256, usually).
using ResourceBytesFn = std::function<Result<std::string>(const Resource& resource)>;

// ReplayCompactions (compactions applied to a log) is declared in store.h.

// The request body, as compact JSON: {"messages": [...]} for openai-chat,
// {"input": [...]} for openai-responses, {"system": "...", "messages": [...]}
// for anthropic ("system" omitted when there is none). `events` as for
// ReplayCompactions. A blob `bytes` cannot supply is projected as missing;
// `bytes` is called only for images sent in full. kInvalidArgument for an
// image, file or link part without its stored Resource, or for text that is
// not UTF-8.
Result<std::string> BuildProjection(std::span<const Event> events, const ProjectionOptions& options,
                                    const ResourceBytesFn& bytes);

// ReadForProjection, then BuildProjection with the store's blobs.
Result<std::string> ProjectSession(Store& store, std::string_view session_id,
                                   const ProjectionOptions& options);

}  // namespace sessiondb
