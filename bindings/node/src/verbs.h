// The calls the Node package makes into the engine, by name: each reads its
// arguments from the JSON object the JavaScript layer sent (camelCase keys,
// as the package's options spell them; lib/index.js), calls the library and
// answers with the JSON form every face shares (api/json_forms.h), or with
// bytes (a blob). Each runs on a worker thread (addon.cc), never on Node's
// main thread, so it may block on the disk or the database server.
//
// Example:
//   const Verb* verb = FindVerb("read");
//   Result<Reply> reply = (*verb)(store, args, attachments);
//
// Thread-safety: FindVerb is; a verb is as safe as NodeStore (any thread).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "api/json_forms.h"
#include "api/message_json.h"
#include "node_store.h"
#include "sessiondb/status.h"

namespace sessiondb::node {

// What a verb answers: JSON, JSON already written as text (`text`, when
// not empty: long reads), or (for a blob) bytes handed to JavaScript as a Buffer.
struct Reply {
  Json json;
  std::string text;
  bool has_bytes = false;
  std::string bytes;
};

// args: the call's arguments; attachments: the Buffers sent beside them, by
// index ("0", "1", ...), which message parts name with {"upload": "<index>"}.
using Verb = Result<Reply> (*)(NodeStore& store, const Json& args, const Attachments& attachments);
using VerbTable = std::unordered_map<std::string_view, Verb>;

// The verb named `name`, or nullptr.
const Verb* FindVerb(std::string_view name);

// Each file of verbs adds its own (verbs_*.cc).
void AddSessionVerbs(VerbTable& table);
void AddHarnessVerbs(VerbTable& table);
void AddSearchVerbs(VerbTable& table);
void AddForgetAndInteropVerbs(VerbTable& table);

// ---- For the verb files -------------------------------------------------

inline Reply JsonReply(Json json) { return Reply{.json = std::move(json)}; }
inline Reply NullReply() { return Reply{}; }

// A message given as the JSON form (api/message_json.h), with paths allowed:
// the caller is this machine's own process.
Result<Message> MessageArg(const Json& message, const Attachments& attachments);
// A required string argument: kInvalidArgument naming it when absent or empty.
Result<std::string> RequiredString(const Json& args, const char* key);
// ArchiveFilter from "active", "archived" or "all".
Result<ArchiveFilter> ArchiveFilterArg(const Json& args, const char* key, ArchiveFilter fallback);

// The messages as a JSON array's text, each as ToJson writes it
// (AppendJsonText; ToJson's own dump for one it cannot write).
Reply MessagesReply(const std::vector<Message>& messages);

template <typename T>
Json ListToJson(const std::vector<T>& values) {
  Json out = Json::array();
  for (const T& v : values) out.push_back(ToJson(v));
  return out;
}

}  // namespace sessiondb::node
