// How the MCP tools word what they found for an agent to read: times in
// ISO-8601 UTC, text cut on character boundaries with the cut said out loud,
// one line per attachment, tool call and tool result, and the pages of a
// session's messages (as text, and as the JSON forms of api/json_forms.h with
// the same cuts).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_forms.h"
#include "sessiondb/types.h"

namespace sessiondb::server {

// At most `max_chars` code points of `text` (never splitting a UTF-8
// sequence); `*dropped` gets how many code points were left out.
std::string CutChars(std::string_view text, size_t max_chars, size_t* dropped);

// `text` on one line (newlines and tabs become spaces), at most `max_chars`
// code points, ending in "…" when cut.
std::string OneLine(std::string_view text, size_t max_chars);

// {"session_id":"x","from_seq":3}: the arguments of a call the text suggests.
std::string CallArgs(const Json& args);

// "image res_...: image/png, 1x1, 67 bytes, \"shot.png\"" and, as the case
// may be, "MISSING from the store" or "a link, never fetched".
std::string DescribeResource(const Resource& resource);

// A page of a session's messages, worded for an agent.
struct SessionPageText {
  std::string text;
  Json messages = Json::array();  // the JSON forms of the messages shown, text cut alike
  int64_t first_seq = 0;          // of the messages shown (0 when none)
  int64_t last_seq = 0;
  size_t shown = 0;
  size_t left_out = 0;  // messages read but not shown, past `budget_bytes`
};

// Words `messages` (in order) until the text passes `budget_bytes`; at least
// one is always shown. From the front, or with `from_end` from the back (for
// "the last N"). Text parts longer than `max_text_chars` (0: no limit) are
// cut, with a note saying how to read them whole.
SessionPageText RenderMessages(const Session& session, const std::vector<Message>& messages,
                               size_t max_text_chars, size_t budget_bytes, bool from_end);

// The first line of a session in a list: id, title, counts, times, archived,
// fork origin; then its preview indented.
std::string DescribeSession(const Session& session);

}  // namespace sessiondb::server
