// Fuzz target: JSON request bodies as the HTTP API decodes them: the bytes
// are parsed as the server parses a body (src/server/http_reply.cc), then read
// as a new session (NewSessionFromJson) and a message to append
// (MessageFromJson, src/api/message_json), and what is accepted is
// appended to a real store and read back, as POST /v1/sessions and
// /v1/sessions/{id}/messages do. Properties: no crash, no exception out of
// the decoders, a refusal is kInvalidArgument, and a message the store took
// can be read back. Anything else (an SQL error, kIo) is a crash: a body
// the decoders took that the store cannot hold.
// The body is parsed by ParseJson (src/core/json_parse.h), the one door the
// server's ParseJsonBody goes through, with its nesting cap.

#include "api/message_json.h"
#include "core/json_parse.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  const std::string_view input = fuzz::AsView(data, size);
  Result<Json> parsed = ParseJson(input);
  if (!parsed) {
    FUZZ_CHECK(parsed.error().code() == StatusCode::kInvalidArgument);
    return 0;
  }
  const Json& body = *parsed;
  if (!body.is_object()) return 0;

  Result<NewSession> request = NewSessionFromJson(body);
  Result<Message> message = MessageFromJson(body, {});
  if (!request) FUZZ_CHECK(request.error().code() == StatusCode::kInvalidArgument);
  if (!message) FUZZ_CHECK(message.error().code() == StatusCode::kInvalidArgument);

  Store& store = fuzz::RecycledStore();
  if (request) {
    request->id.clear();  // a fresh session each run; the id rules have their own tests
    Result<Session> session = store.CreateSession(*request);
    if (!session) {
      FUZZ_CHECK(session.error().code() == StatusCode::kInvalidArgument);
      return 0;
    }
    if (!message) return 0;
    Result<AppendResult> appended = store.Append(session->id, *message);
    if (!appended) {
      // kAlreadyExists: a message id the store holds (an input run twice).
      FUZZ_CHECK(appended.error().code() == StatusCode::kInvalidArgument ||
                 appended.error().code() == StatusCode::kAlreadyExists);
      return 0;
    }
    Result<std::vector<Message>> back = store.ReadMessages(session->id);
    FUZZ_CHECK(back.has_value());
    FUZZ_CHECK(back->size() == 1);
    FUZZ_CHECK((*back)[0].role == message->role);
  }
  return 0;
}
