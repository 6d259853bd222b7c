// The public entry points: format names, BuildProjection (turns, then the
// shape asked for, dumped as compact JSON) and ProjectSession.
#include "sessiondb/projection.h"

#include <nlohmann/json.hpp>

#include "projection/shapes.h"
#include "projection/turns.h"

namespace sessiondb {

std::string_view ProviderFormatName(ProviderFormat format) {
  switch (format) {
    case ProviderFormat::kOpenAiChat:
      return "openai-chat";
    case ProviderFormat::kOpenAiResponses:
      return "openai-responses";
    case ProviderFormat::kAnthropic:
      return "anthropic";
  }
  return "unknown";
}

Result<ProviderFormat> ParseProviderFormat(std::string_view name) {
  for (ProviderFormat f : {ProviderFormat::kOpenAiChat, ProviderFormat::kOpenAiResponses,
                           ProviderFormat::kAnthropic}) {
    if (name == ProviderFormatName(f)) return f;
  }
  return Err(Status::InvalidArgument("unknown provider format '" + std::string(name) +
                                     "'; expected one of: openai-chat, openai-responses, "
                                     "anthropic"));
}

Result<std::string> BuildProjection(std::span<const Event> events, const ProjectionOptions& options,
                                    const ResourceBytesFn& bytes) {
  ASSIGN_OR_RETURN(std::vector<projection::Turn> turns,
                   projection::BuildTurns(events, options.format, bytes));
  nlohmann::ordered_json body;
  switch (options.format) {
    case ProviderFormat::kOpenAiChat:
      body = projection::OpenAiChatBody(turns);
      break;
    case ProviderFormat::kOpenAiResponses:
      body = projection::OpenAiResponsesBody(turns);
      break;
    case ProviderFormat::kAnthropic:
      body = projection::AnthropicBody(turns);
      break;
  }
  // Stored text is checked to be UTF-8 on append; events built by hand may
  // not be, and the JSON library throws on those while dumping.
  try {
    return body.dump();
  } catch (const nlohmann::json::exception& e) {
    return Err(Status::InvalidArgument(
        std::string("the projection holds text that is not UTF-8: ") + e.what()));
  }
}

Result<std::string> ProjectSession(Store& store, std::string_view session_id,
                                   const ProjectionOptions& options) {
  ASSIGN_OR_RETURN(std::vector<Event> events, store.ReadForProjection(session_id));
  return BuildProjection(events, options, [&store](const Resource& resource) {
    return store.ReadBlob(resource.content_sha256);
  });
}

}  // namespace sessiondb
