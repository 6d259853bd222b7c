// Validators of provider request bodies, written from each provider's
// documented rules (and the error messages their APIs answer with), not from
// the projection code they check: a projection that passes them is a request
// the provider accepts, as far as its history goes. They live with the tests,
// not in src/projection, on purpose: the projection builds valid requests by
// construction, and a second, independent reading of the rules is what
// catches a construction that is wrong.
//
// Each returns the problems it finds, worded like "messages[3].content[0]:
// tool_result for toolu_1 has no tool_use in the previous message"; an empty
// list means the body is valid. Only the conversation is checked (model,
// max_tokens and tools are the caller's to add).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/projection.h"

namespace sessiondb::testing {

// The Anthropic Messages API: {"system"?: string, "messages": [...]}.
std::vector<std::string> AnthropicRequestProblems(const nlohmann::json& body);

// OpenAI Chat Completions: {"messages": [...]}.
std::vector<std::string> OpenAiChatRequestProblems(const nlohmann::json& body);

// OpenAI Responses, stateless (no previous_response_id): {"input": [...]}.
std::vector<std::string> OpenAiResponsesRequestProblems(const nlohmann::json& body);

// The validator of `format`, on the body as text (a body that is not JSON is
// one problem).
std::vector<std::string> RequestProblems(ProviderFormat format, std::string_view body);

// Whether the body has no conversation at all (an empty window): providers
// refuse it, and a harness adds its own prompt before sending one.
bool IsEmptyConversation(ProviderFormat format, std::string_view body);

}  // namespace sessiondb::testing
