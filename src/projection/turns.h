// The shape-independent middle of a projection: the events left after
// compactions, turned into provider turns made of five kinds of block (text,
// image, reasoning, tool call, tool result). Every rule about what is sent
// lives here; the shapes (openai_chat, openai_responses, anthropic) only
// spell the turns.
//
// What BuildTurns guarantees the shapes:
//  - a kSystem turn holds only text blocks;
//  - a kUser turn holds text and image blocks;
//  - a kAssistant turn holds text, reasoning and tool call blocks, in part
//    order; reasoning only when it has a signature from the provider the
//    projection is for;
//  - a kTool turn holds only tool result blocks, and comes right after the
//    kAssistant turn holding their calls: every call has exactly one result
//    and every result its call (see tool_pairing.h);
//  - tool call ids are unique and match [A-Za-z0-9_-]{1,40}, tool names
//    [A-Za-z0-9_-]{1,64};
//  - no turn is empty, and no text block is empty or only whitespace.
// A message becomes turns in the order of its parts: its text, images and
// calls (a kAssistant turn for an assistant's, else a turn of its role and
// a kAssistant turn for calls), broken by each run of tool results (a kTool
// turn); a tool-role message's other content becomes a kUser turn.
//
// Thread-safety: pure functions (`bytes` is called on the caller's thread).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sessiondb/projection.h"
#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb::projection {

struct Block {
  enum class Kind { kText, kImage, kReasoning, kToolCall, kToolResult };
  Kind kind = Kind::kText;
  std::string text;            // kText; kReasoning; kToolResult: the output
  std::string signature;       // kReasoning: the issuing provider's proof
  std::string mime;            // kImage
  std::string base64;          // kImage: the bytes, standard base64
  std::string tool_call_id;    // kToolCall, kToolResult
  std::string tool_name;       // kToolCall
  std::string arguments_json;  // kToolCall: JSON text, "{}" when empty
  bool is_error = false;       // kToolResult
  // kToolCall: "<event id>/<part index>", which names the call when its own
  // id has to be replaced.
  std::string call_key;
};

struct Turn {
  Role role = Role::kUser;
  std::vector<Block> blocks;
};

// The turns of `events` (a session's log in seq order, as for
// ReplayCompactions) for a request in `format`. Images are sent in full
// (base64 of `bytes`) only when attached by the newest user message or
// viewed by a resource_view no assistant message has followed yet;
// otherwise, or when the blob is missing, they become descriptors (see
// descriptor.h). kInvalidArgument for an image or file part that carries no
// stored resource.
Result<std::vector<Turn>> BuildTurns(std::span<const Event> events, ProviderFormat format,
                                     const ResourceBytesFn& bytes);

}  // namespace sessiondb::projection
