// The chatgpt format: a ChatGPT data export (the .zip, its folder, or its
// conversations.json). Each conversation is {id | conversation_id, title,
// create_time, update_time, current_node, mapping: {node id: {id, message,
// parent, children}}}. The active branch (current_node up to the root) is the
// conversation's session; every other leaf's branch, up to where it joins a
// branch already taken, is a session of its own with metadata forked_from and
// fork_node. Images are parts whose content_type is image_asset_pointer,
// "file-service://file-<id>" (or "sediment://file_<id>"), found among the
// export's files by that id. See docs/interop.md, "chatgpt".
// Memory: one conversation at a time.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/json_access.h"
#include "core/text_rules.h"
#include "interop/export_archive.h"
#include "interop/formats.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "chatgpt";

std::string Str(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Millis(const json& obj, std::string_view key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return 0;
  return static_cast<int64_t>(std::llround(it->get<double>() * 1000.0));
}

// The file id in an asset pointer: "file-service://file-Ab12" -> "file-Ab12".
std::string AssetId(const std::string& pointer) {
  const size_t p = pointer.find("://");
  return p == std::string::npos ? pointer : pointer.substr(p + 3);
}

// The file id a file name starts with ("file-Ab12-photo.png" -> "file-Ab12").
std::string FileIdOf(const std::string& name) {
  const size_t slash = name.find_last_of('/');
  const std::string base = name.substr(slash == std::string::npos ? 0 : slash + 1);
  if (base.size() < 6 || base.compare(0, 4, "file") != 0 || (base[4] != '-' && base[4] != '_')) {
    return "";
  }
  size_t end = 5;
  while (end < base.size() && std::isalnum(static_cast<unsigned char>(base[end]))) ++end;
  return base.substr(0, end);
}

std::string MimeOf(const std::string& name) {
  const std::string ext = fs::path(name).extension().string();
  if (ext == ".png") return "image/png";
  if (ext == ".jpg" || ext == ".jpeg") return "image/jpeg";
  if (ext == ".gif") return "image/gif";
  if (ext == ".webp") return "image/webp";
  return "";
}

class ConversationImport {
 public:
  ConversationImport(ImportSink& sink, const ExportArchive& archive,
                     const std::unordered_map<std::string, std::string>& files)
      : sink_(sink), archive_(archive), files_(files) {}

  Status Run(const json& c, const std::string& where) {
    std::string conv_id = Str(c, "conversation_id");
    if (conv_id.empty()) conv_id = Str(c, "id");
    if (conv_id.empty()) {
      sink_.Skip(where, "a conversation with no id");
      return Status::Ok();
    }
    const json& mapping = MemberOr(c, "mapping", json::object());
    if (!mapping.is_object()) {
      sink_.Skip(where, "a conversation whose mapping is not an object");
      return Status::Ok();
    }
    // The branches: the active one first.
    std::map<std::string, int> owner;
    std::vector<std::vector<std::string>> lines;
    std::vector<std::string> fork_nodes;
    auto take = [&](const std::string& leaf) {
      std::vector<std::string> line;
      std::string fork;
      std::string n = leaf;
      int guard = 0;
      while (!n.empty() && !owner.contains(n) && mapping.contains(n) &&
             guard++ < static_cast<int>(mapping.size())) {
        owner[n] = static_cast<int>(lines.size());
        line.push_back(n);
        const std::string parent = Str(mapping[n], "parent");
        if (owner.contains(parent)) fork = parent;
        n = parent;
      }
      std::reverse(line.begin(), line.end());
      lines.push_back(std::move(line));
      fork_nodes.push_back(fork);
    };
    // A leaf: a node none of whose children the file holds. A child the file
    // does not hold (seen in genuine exports) ends its branch there, said.
    std::map<std::string, bool> leaf;
    for (auto it = mapping.begin(); it != mapping.end(); ++it) {
      bool is_leaf = true;
      for (const json& child : MemberOr(*it, "children", json::array())) {
        if (!child.is_string()) continue;
        if (mapping.contains(child.get<std::string>())) {
          is_leaf = false;
        } else {
          sink_.Skip(where + " node " + it.key(),
                     "the node names a child, " + child.get<std::string>() +
                         ", that the file does not hold; its branch ends at this node");
        }
      }
      leaf[it.key()] = is_leaf;
    }
    std::string current = Str(c, "current_node");
    if (current.empty() || !mapping.contains(current)) {
      // No pointer to the active leaf: the latest leaf stands in for it.
      int64_t best = -1;
      for (auto it = mapping.begin(); it != mapping.end(); ++it) {
        if (!leaf[it.key()]) continue;
        const int64_t t = Millis(MemberOr(*it, "message", json()), "create_time");
        if (t >= best) {
          best = t;
          current = it.key();
        }
      }
    }
    if (!current.empty()) take(current);
    for (auto it = mapping.begin(); it != mapping.end(); ++it) {
      if (!leaf[it.key()] || owner.contains(it.key())) continue;
      take(it.key());
    }
    bool shown = false;
    for (const auto& line : lines) {
      for (const std::string& n : line)
        shown = shown || IsShown(MemberOr(mapping[n], "message", json()));
    }
    if (!shown) {
      sink_.Skip(where, "the conversation " + conv_id + " has no message to import");
      return Status::Ok();
    }
    const std::string main_id = StableSessionId(kFormat, conv_id);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string id = main_id;
      json meta = {{"source", kFormat}, {"conversation_id", conv_id}};
      if (i > 0) {
        if (lines[i].empty()) continue;
        id = StableSessionId(kFormat, conv_id + "/branch/" + lines[i].front());
        const int fork_owner = fork_nodes[i].empty() ? 0 : owner[fork_nodes[i]];
        meta["forked_from"] =
            fork_owner == 0
                ? main_id
                : StableSessionId(kFormat, conv_id + "/branch/" + lines[fork_owner].front());
        if (!fork_nodes[i].empty()) meta["fork_node"] = fork_nodes[i];
      }
      const std::string model = Str(c, "default_model_slug");
      if (!model.empty()) meta["default_model_slug"] = model;
      if (MemberOr(c, "is_archived", false)) meta["archived_in_source"] = true;
      // A branch with no message to show is left out.
      std::vector<const json*> nodes;
      for (const std::string& n : lines[i]) nodes.push_back(&mapping[n]);
      bool any = false;
      for (const json* n : nodes) any = any || IsShown(MemberOr(*n, "message", json()));
      if (!any && i > 0) continue;
      Session s;
      s.id = id;
      s.title = Str(c, "title");
      s.created_ms = Millis(c, "create_time");
      s.updated_ms = Millis(c, "update_time");
      s.metadata_json = meta.dump();
      RETURN_IF_ERROR(sink_.BeginSession(s));
      pending_.clear();
      for (size_t k = 0; k < nodes.size(); ++k) {
        RETURN_IF_ERROR(Node(id, lines[i][k], *nodes[k], where + " node " + lines[i][k]));
      }
      RETURN_IF_ERROR(sink_.EndSession());
    }
    return Status::Ok();
  }

 private:
  // Whether a message's `parts` hold a non-empty string.
  static bool HasText(const json& content) {
    for (const json& p : MemberOr(content, "parts", json::array())) {
      if (p.is_string() && !p.get<std::string>().empty()) return true;
    }
    return false;
  }

  static bool IsHidden(const json& m) {
    const json meta = MemberOr(m, "metadata", json::object());
    return meta.is_object() && MemberOr(meta, "is_visually_hidden_from_conversation", false);
  }

  // Whether message `m` comes in. A hidden user message with text is a real
  // prompt (a scheduled task's): the model answered it, so it is kept.
  static bool IsShown(const json& m) {
    if (!m.is_object()) return false;
    const std::string role = Str(MemberOr(m, "author", json::object()), "role");
    const json content = MemberOr(m, "content", json::object());
    const std::string type = Str(content, "content_type");
    if (IsHidden(m)) return role == "user" && HasText(content);
    if (role == "system" && type == "text") return HasText(content);
    return type != "user_editable_context" && type != "model_editable_context" &&
           type != "reasoning_recap";
  }

  // Why message `m`, which does not come in, is left out; "" when it holds
  // nothing (the root, an empty hidden system message).
  static std::string LeftOutReason(const json& m) {
    if (!m.is_object()) return "";
    const json content = MemberOr(m, "content", json::object());
    const std::string type = Str(content, "content_type");
    if (type == "user_editable_context" || type == "model_editable_context") {
      return "the ChatGPT app's own context for the model ('" + type +
             "': custom instructions or memory) is left out";
    }
    if (type == "reasoning_recap") {
      return "a reasoning recap ('Thought for ...') is left out: the thoughts before it are kept "
             "as reasoning";
    }
    if (IsHidden(m) && (HasText(content) || !Str(content, "text").empty())) {
      return "a message hidden in ChatGPT (is_visually_hidden_from_conversation) that is not a "
             "user's prompt is left out";
    }
    return "";
  }

  // The call a tool message from `name` answers: the latest unanswered call
  // addressed to it (its recipient is the name, or the name and a dotted
  // suffix: "browser" answers "browser.search"), else the latest answered one
  // (ChatGPT writes two results for one web.run call). nullptr if none:
  // the tool message answers no call.
  struct PendingCall {
    std::string recipient;
    std::string id;
    bool answered = false;
  };
  PendingCall* CallAnsweredBy(const std::string& name) {
    if (name.empty()) return nullptr;
    auto addressed = [&name](const std::string& recipient) {
      return recipient == name || (recipient.size() > name.size() && recipient.starts_with(name) &&
                                   recipient[name.size()] == '.');
    };
    PendingCall* answered = nullptr;
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      if (!addressed(it->recipient)) continue;
      if (!it->answered) return &*it;
      if (answered == nullptr) answered = &*it;
    }
    return answered;
  }

  Status Node(const std::string& session_id, const std::string& node_id, const json& node,
              const std::string& where) {
    const json m = MemberOr(node, "message", json());
    if (!IsShown(m)) {
      const std::string reason = LeftOutReason(m);
      if (!reason.empty()) sink_.Skip(where, reason);
      return Status::Ok();
    }
    const json author = MemberOr(m, "author", json::object());
    const std::string role = Str(author, "role");
    const json content = MemberOr(m, "content", json::object());
    const std::string type = Str(content, "content_type");
    const std::string recipient = Str(m, "recipient");
    Event e;
    e.type = EventType::kMessage;
    e.id = StableEventId(session_id, node_id);
    e.ts_ms = Millis(m, "create_time");
    Message& msg = e.message;
    msg.role = role == "assistant" ? Role::kAssistant
               : role == "user"    ? Role::kUser
               : role == "tool"    ? Role::kTool
                                   : Role::kSystem;
    std::string text;
    std::vector<Part> parts;
    bool unknown = false;  // a content type this importer does not know
    if (type == "text" || type == "multimodal_text") {
      for (const json& p : MemberOr(content, "parts", json::array())) {
        if (p.is_string()) {
          if (!p.get<std::string>().empty()) parts.push_back(Part::Text(p.get<std::string>()));
        } else if (p.is_object() && Str(p, "content_type") == "image_asset_pointer") {
          AddImage(Str(p, "asset_pointer"), where, &parts);
        } else if (p.is_object() && IsThoughtsPart(p)) {
          const json& thoughts = MemberOf(p, "thoughts");
          AddThoughts(thoughts.is_array() ? thoughts : json::array({p}), &parts);
        }
      }
    } else if (type == "code") {
      text = Str(content, "text");
    } else if (type == "execution_output" || type == "tether_quote" || type == "system_error") {
      text = Str(content, "text");
      if (text.empty()) text = Str(content, "result");
    } else if (type == "tether_browsing_display") {
      text = Str(content, "result");
    } else if (type == "thoughts" || type == "reasoning") {
      // The thoughts come as `thoughts`, or as `parts` in some exports.
      const json& thoughts = MemberOf(content, "thoughts");
      AddThoughts(thoughts.is_array() ? thoughts : MemberOf(content, "parts"), &parts);
    } else {
      unknown = true;
      text = Str(content, "text");
    }
    const bool thoughts = type == "thoughts" || type == "reasoning";
    PendingCall* answers = msg.role == Role::kTool ? CallAnsweredBy(Str(author, "name")) : nullptr;
    if (msg.role == Role::kUser) pending_.clear();  // a new turn: no call is still open
    if (msg.role == Role::kAssistant && !recipient.empty() && recipient != "all" && !thoughts) {
      // The assistant speaking to a tool is a tool call. Thoughts addressed to
      // a tool (a connector's status) are still the model's reasoning.
      pending_.push_back({recipient, node_id});
      std::string input = text;
      for (const Part& p : parts) input += p.text;
      parts.clear();
      parts.push_back(Part::ToolCall(node_id, recipient, json{{"input", input}}.dump()));
    } else if (answers != nullptr) {
      // Its output is every text it holds, thoughts included (they are what
      // the tool said).
      answers->answered = true;
      std::string output = text;
      std::vector<Part> images;
      for (Part& p : parts) {
        if (p.type == PartType::kText || p.type == PartType::kReasoning) {
          output += (output.empty() ? "" : "\n") + p.text;
        } else {
          images.push_back(std::move(p));
        }
      }
      parts.clear();
      parts.push_back(Part::ToolResult(answers->id, output));
      for (Part& p : images) parts.push_back(std::move(p));
    } else if (msg.role == Role::kTool && thoughts) {
      // Thoughts a tool writes answering no call (GPT-5 Pro's reasoning
      // summaries, author a8km123) are the model's reasoning.
      msg.role = Role::kAssistant;
    } else if (!text.empty()) {
      parts.insert(parts.begin(), Part::Text(text));
    }
    if (parts.empty()) {
      // An empty known message loses nothing; an unknown one might.
      if (unknown && content.size() > 1) {
        sink_.Skip(where, "a message of content type '" + type +
                              "' has no text sessiondb can read; it is left out");
      }
      return Status::Ok();
    }
    msg.parts = std::move(parts);
    const json meta = MemberOr(m, "metadata", json::object());
    if (msg.role == Role::kAssistant || msg.role == Role::kTool) {
      msg.model = Str(meta, "model_slug");
      msg.provider = "openai";
    }
    json mm = {{"node_id", node_id}};
    if (!Str(author, "name").empty()) mm["author_name"] = Str(author, "name");
    if (IsHidden(m)) mm["hidden_in_source"] = true;
    msg.metadata_json = mm.dump();
    return sink_.Add(std::move(e), where);
  }

  // A part of a message's `parts` that holds thoughts rather than text.
  static bool IsThoughtsPart(const json& p) {
    const std::string type = Str(p, "content_type");
    return type == "thoughts" || type == "reasoning" || MemberOf(p, "thoughts").is_array();
  }

  // Reasoning parts of a list of thoughts: each {summary, content} (or its
  // text, or its chunks) or a bare string.
  static void AddThoughts(const json& list, std::vector<Part>* parts) {
    if (!list.is_array()) return;
    for (const json& t : list) {
      std::string s = t.is_string() ? t.get<std::string>() : Str(t, "summary");
      std::string body = Str(t, "content");
      if (body.empty()) body = Str(t, "text");
      if (body.empty()) {
        for (const json& chunk : MemberOr(t, "chunks", json::array())) {
          if (chunk.is_string()) body += chunk.get<std::string>();
        }
      }
      if (!body.empty()) s += s.empty() ? body : "\n" + body;
      if (!s.empty()) parts->push_back(Part::Reasoning(std::move(s)));
    }
  }

  void AddImage(const std::string& pointer, const std::string& where, std::vector<Part>* parts) {
    const std::string id = AssetId(pointer);
    auto it = files_.find(id);
    if (it == files_.end()) {
      sink_.Skip(where, "image " + pointer + " is not among the export's files");
      return;
    }
    // A name from the file system or the zip need not be UTF-8; what is
    // stored and reported must be.
    auto bytes = archive_.Read(it->second);
    if (!bytes) {
      sink_.Skip(where, "image " + ToValidUtf8(it->second) +
                            " cannot be read: " + ToValidUtf8(bytes.error().message()));
      return;
    }
    parts->push_back(Part::ImageFromBytes(std::move(*bytes), MimeOf(it->second),
                                          ToValidUtf8(fs::path(it->second).filename().string())));
  }

  ImportSink& sink_;
  const ExportArchive& archive_;
  const std::unordered_map<std::string, std::string>& files_;
  std::vector<PendingCall> pending_;  // the calls of the current turn, oldest first
};

bool LooksLikeChatGpt(std::string_view head) {
  return head.find("\"mapping\"") != std::string_view::npos &&
         (head.find("\"current_node\"") != std::string_view::npos ||
          head.find("\"author\"") != std::string_view::npos);
}

int Detect(const fs::path& path) { return LooksLikeChatGpt(PeekConversations(path)) ? 85 : 0; }

Status Run(const fs::path& path, ImportSink& sink) {
  ASSIGN_OR_RETURN(auto archive, ExportArchive::Open(path));
  std::unordered_map<std::string, std::string> files;
  for (const std::string& f : archive->files()) {
    const std::string id = FileIdOf(f);
    if (!id.empty() && !MimeOf(f).empty()) files.emplace(id, f);
  }
  ConversationImport conv(sink, *archive, files);
  return ForEachConversation(
      *archive, sink, [&](const json& c, const std::string& where) { return conv.Run(c, where); });
}

}  // namespace

ImportFormatSpec ChatGptImport() { return {ImportFormat::kChatGpt, Detect, Run}; }

}  // namespace sessiondb::interop
