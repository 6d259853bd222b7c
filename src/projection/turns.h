// The shape-independent middle of a projection: the events left after
// compactions, turned into provider turns made of four kinds of block (text,
// image, tool call, tool result). Every rule about what is sent lives here;
// the shapes (openai_chat, openai_responses, anthropic) only spell the turns.
//
// What BuildTurns guarantees the shapes:
//  - a kSystem turn holds only text blocks;
//  - a kUser turn holds text and image blocks;
//  - a kAssistant turn holds text and tool call blocks, in part order;
//  - a kTool turn holds only tool result blocks;
//  - no turn is empty, and no text block is empty.
// A message becomes up to three turns, in this order: its tool results (a
// kTool turn, so they follow the calls they answer), its content (role kept;
// a tool-role message's text becomes a kUser turn), and, for a message not
// from the assistant, its tool calls (a kAssistant turn).
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
  enum class Kind { kText, kImage, kToolCall, kToolResult };
  Kind kind = Kind::kText;
  std::string text;            // kText; kToolResult: the output
  std::string mime;            // kImage
  std::string base64;          // kImage: the bytes, standard base64
  std::string tool_call_id;    // kToolCall, kToolResult
  std::string tool_name;       // kToolCall
  std::string arguments_json;  // kToolCall: JSON text, "{}" when empty
  bool is_error = false;       // kToolResult
};

struct Turn {
  Role role = Role::kUser;
  std::vector<Block> blocks;
};

// The turns of `events` (a session's log in seq order, as for
// ReplayCompactions). Images are sent in full (base64 of `bytes`) only when
// attached by the newest user message or viewed by a resource_view no
// assistant message has followed yet; otherwise, or when the blob is missing,
// they become descriptors (see descriptor.h). kInvalidArgument for an image
// or file part that carries no stored resource.
Result<std::vector<Turn>> BuildTurns(std::span<const Event> events, const ResourceBytesFn& bytes);

}  // namespace sessiondb::projection
