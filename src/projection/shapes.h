// The three provider shapes of a request body, spelled from the turns
// BuildTurns made (see turns.h for what each turn may hold). Keys come out in
// the order providers document them (nlohmann::ordered_json).
//   openai-chat       {"messages": [...]}           openai_chat.cc
//   openai-responses  {"input": [...]}              openai_responses.cc
//   anthropic         {"system": "...", "messages": [...]}   anthropic.cc
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "projection/turns.h"

namespace sessiondb::projection {

// Chat Completions: one message per turn, except that each tool result is a
// "tool" message of its own. Text-only user and system content is a string
// (text blocks joined by "\n"); user content with an image is an array.
nlohmann::ordered_json OpenAiChatBody(std::span<const Turn> turns);

// Responses: a "message" item per system, user or assistant turn (text
// blocks input_text / output_text, images input_image), a "function_call"
// item per tool call, a "function_call_output" item per tool result and a
// "reasoning" item (summary and encrypted_content) per reasoning block; a
// reasoning item nothing of the assistant's follows is left out. An error
// result's output starts with "Error: " (the item has no error flag).
nlohmann::ordered_json OpenAiResponsesBody(std::span<const Turn> turns);

// Messages API: system texts joined by "\n\n" into "system"; tool results as
// tool_result blocks of user messages (no content for an empty output, words
// for an empty error); reasoning as thinking blocks with their signature;
// consecutive messages of one role merged, since the API requires user and
// assistant to alternate. The first message is the user's (a one-line note
// opens a window that starts with an answer), and a final assistant message
// does not end with whitespace.
nlohmann::ordered_json AnthropicBody(std::span<const Turn> turns);

// "data:<mime>;base64,<base64>" of an image block.
std::string ImageDataUri(const Block& image);

// The text blocks of a turn joined by "\n".
std::string JoinedText(const Turn& turn);

}  // namespace sessiondb::projection
