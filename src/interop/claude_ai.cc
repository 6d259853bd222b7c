// The claude-ai format: a Claude.ai data export (the .zip, its folder, or its
// conversations.json): [{uuid, name, summary, created_at, updated_at,
// chat_messages: [{uuid, sender: human | assistant, text, content: [blocks],
// created_at, attachments: [{file_name, file_type, file_size,
// extracted_content}], files: [{file_name}], parent_message_uuid?}]}].
// One session per conversation. When messages name their parents and the
// conversation has edits (more than one child of a message), the branch
// ending at the last message is the session and the others are sessions of
// their own with metadata forked_from and fork_message. The export carries
// no image bytes: uploaded files are named in the message's metadata, and
// attachments' extracted text becomes a text part. See docs/interop.md,
// "claude-ai". Memory: one conversation at a time.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/json_access.h"
#include "interop/export_archive.h"
#include "interop/formats.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "claude-ai";

std::string Str(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string BlocksText(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const json& b : content) {
    const std::string t = Str(b, "text");
    if (t.empty()) continue;
    if (!out.empty()) out += "\n";
    out += t;
  }
  return out;
}

// The conversation's title: its `name` (what Claude.ai shows), else a
// `title`; empty when it has neither, and the first message names it.
std::string Title(const json& c) {
  std::string name = Str(c, "name");
  return name.empty() ? Str(c, "title") : name;
}

// The text of a thinking block: its `thinking`, or when that is empty (the
// export kept only the summaries) its summaries, one per line.
std::string ThinkingText(const json& block) {
  std::string text = Str(block, "thinking");
  if (!text.empty()) return text;
  for (const json& s : MemberOr(block, "summaries", json::array())) {
    const std::string summary = s.is_string() ? s.get<std::string>() : Str(s, "summary");
    if (summary.empty()) continue;
    if (!text.empty()) text += "\n";
    text += summary;
  }
  return text;
}

class ConversationImport {
 public:
  explicit ConversationImport(ImportSink& sink) : sink_(sink) {}

  Status Run(const json& c, const std::string& where) {
    const std::string conv_id = Str(c, "uuid");
    if (conv_id.empty()) {
      sink_.Skip(where, "a conversation with no uuid");
      return Status::Ok();
    }
    const json messages = MemberOr(c, "chat_messages", json::array());
    if (!messages.is_array()) {
      sink_.Skip(where, "a conversation whose chat_messages is not an array");
      return Status::Ok();
    }
    // Lines of messages (indices into `messages`), the main one first.
    std::vector<std::vector<size_t>> lines;
    std::vector<std::string> forks;
    std::map<std::string, size_t> by_uuid;
    std::map<std::string, int> children;
    bool tree = !messages.empty();
    for (size_t i = 0; i < messages.size(); ++i) {
      const std::string u = Str(messages[i], "uuid");
      if (u.empty() || !messages[i].contains("parent_message_uuid")) tree = false;
      by_uuid[u] = i;
      ++children[Str(messages[i], "parent_message_uuid")];
    }
    bool branched = false;
    for (const auto& [parent, n] : children) branched = branched || n > 1;
    if (!tree || !branched) {
      std::vector<size_t> all(messages.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
      lines.push_back(std::move(all));
      forks.emplace_back();
    } else {
      std::map<size_t, int> owner;
      auto take = [&](size_t leaf) {
        std::vector<size_t> line;
        std::string fork;
        std::optional<size_t> n = leaf;
        while (n && !owner.contains(*n)) {
          owner[*n] = static_cast<int>(lines.size());
          line.push_back(*n);
          auto p = by_uuid.find(Str(messages[*n], "parent_message_uuid"));
          n.reset();
          if (p == by_uuid.end()) break;
          if (owner.contains(p->second)) {
            fork = Str(messages[p->second], "uuid");
          } else {
            n = p->second;
          }
        }
        std::reverse(line.begin(), line.end());
        lines.push_back(std::move(line));
        forks.push_back(fork);
      };
      take(messages.size() - 1);
      for (size_t i = 0; i < messages.size(); ++i) {
        if (children[Str(messages[i], "uuid")] == 0 && !owner.contains(i)) take(i);
      }
    }
    const std::string main_id = StableSessionId(kFormat, conv_id);
    for (size_t l = 0; l < lines.size(); ++l) {
      Session s;
      s.id = l == 0 ? main_id
                    : StableSessionId(kFormat,
                                      conv_id + "/branch/" + Str(messages[lines[l][0]], "uuid"));
      s.title = Title(c);
      s.created_ms = ParseIsoTime(Str(c, "created_at")).value_or(0);
      s.updated_ms = ParseIsoTime(Str(c, "updated_at")).value_or(0);
      json meta = {{"source", kFormat}, {"conversation_uuid", conv_id}};
      const std::string summary = Str(c, "summary");
      if (!summary.empty()) meta["summary"] = summary;
      if (l > 0) {
        meta["forked_from"] = main_id;
        if (!forks[l].empty()) meta["fork_message"] = forks[l];
      }
      s.metadata_json = meta.dump();
      RETURN_IF_ERROR(sink_.BeginSession(s));
      for (size_t i : lines[l]) {
        RETURN_IF_ERROR(Message(s.id, messages[i], where + " message " + std::to_string(i)));
      }
      RETURN_IF_ERROR(sink_.EndSession());
    }
    return Status::Ok();
  }

 private:
  Status Message(const std::string& session_id, const json& m, const std::string& where) {
    if (!m.is_object()) {
      sink_.Skip(where, "a message that is not an object");
      return Status::Ok();
    }
    const std::string uuid = Str(m, "uuid");
    Event e;
    e.type = EventType::kMessage;
    e.id = StableEventId(session_id, uuid.empty() ? where : uuid);
    e.ts_ms = ParseIsoTime(Str(m, "created_at")).value_or(0);
    sessiondb::Message& msg = e.message;
    const std::string sender = Str(m, "sender");
    msg.role = sender == "assistant" ? Role::kAssistant : Role::kUser;
    if (msg.role == Role::kAssistant) msg.provider = "anthropic";
    const json content = MemberOr(m, "content", json());
    if (content.is_array()) {
      for (const json& b : content) {
        const std::string type = Str(b, "type");
        if (type == "text") {
          const std::string t = Str(b, "text");
          if (!t.empty()) msg.parts.push_back(Part::Text(t));
        } else if (type == "thinking") {
          std::string thought = ThinkingText(b);
          if (!thought.empty()) msg.parts.push_back(Part::Reasoning(std::move(thought)));
        } else if (type == "tool_use") {
          std::string id = Str(b, "id");
          if (id.empty()) id = StableEventId(e.id, std::to_string(msg.parts.size()));
          last_call_id_ = id;
          msg.parts.push_back(
              Part::ToolCall(id, Str(b, "name"), MemberOr(b, "input", json::object()).dump()));
        } else if (type == "tool_result") {
          std::string id = Str(b, "tool_use_id");
          if (id.empty()) id = last_call_id_;
          msg.parts.push_back(Part::ToolResult(id, BlocksText(MemberOr(b, "content", json())),
                                               MemberOr(b, "is_error", false)));
        }
      }
    }
    if (msg.parts.empty()) {
      const std::string text = Str(m, "text");
      if (!text.empty()) msg.parts.push_back(Part::Text(text));
    }
    // An uploaded file is often listed both as an attachment and as a file:
    // its name goes to the metadata once.
    json files = json::array();
    std::set<std::string> named;
    auto name_file = [&](const std::string& name) {
      if (!name.empty() && named.insert(name).second) files.push_back(name);
    };
    for (const json& a : MemberOr(m, "attachments", json::array())) {
      const std::string body = Str(a, "extracted_content");
      const std::string name = Str(a, "file_name");
      if (!body.empty()) {
        std::string text = "<attachment name=\"";
        text += name;
        text += "\">\n";
        text += body;
        text += "\n</attachment>";
        msg.parts.push_back(Part::Text(text));
      }
      name_file(name);
    }
    for (const json& f : MemberOr(m, "files", json::array())) name_file(Str(f, "file_name"));
    json meta = {{"uuid", uuid}};
    if (!files.empty()) meta["files"] = files;
    msg.metadata_json = meta.dump();
    if (msg.parts.empty()) {
      sink_.Skip(where, "a message with no text or content blocks sessiondb can keep");
      return Status::Ok();
    }
    return sink_.Add(std::move(e), where);
  }

  ImportSink& sink_;
  std::string last_call_id_;
};

int Detect(const fs::path& path) {
  const std::string head = PeekConversations(path);
  return head.find("\"chat_messages\"") != std::string::npos ? 85 : 0;
}

Status Run(const fs::path& path, ImportSink& sink) {
  ASSIGN_OR_RETURN(auto archive, ExportArchive::Open(path));
  ConversationImport conv(sink);
  return ForEachConversation(
      *archive, sink, [&](const json& c, const std::string& where) { return conv.Run(c, where); });
}

}  // namespace

ImportFormatSpec ClaudeAiImport() { return {ImportFormat::kClaudeAi, Detect, Run}; }

}  // namespace sessiondb::interop
