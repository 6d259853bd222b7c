#include "server/mcp_text.h"

#include <algorithm>
#include <cstdio>

#include "core/iso_time.h"
#include "core/text_rules.h"

namespace sessiondb::server {
namespace {

// Tool calls, tool results and reasoning are shown on one line of this many
// characters in the text; the JSON forms carry them up to max_text_chars.
constexpr size_t kFoldedChars = 200;

bool IsContinuationByte(unsigned char c) { return (c & 0xC0) == 0x80; }

// The byte offset of the first `max_chars` code points of `text` (all of it
// when shorter). Bytes that are not UTF-8 count one each.
size_t PrefixBytes(std::string_view text, size_t max_chars) {
  size_t i = 0;
  for (size_t n = 0; i < text.size() && n < max_chars; ++n) {
    ++i;
    while (i < text.size() && IsContinuationByte(static_cast<unsigned char>(text[i]))) ++i;
  }
  return i;
}

size_t CountChars(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return !IsContinuationByte(static_cast<unsigned char>(c));
  }));
}

// Cuts the "text" of a part's JSON form to `max_text_chars` (0: no limit).
void CutJsonText(const std::string& text, size_t max_text_chars, Json* part) {
  if (max_text_chars == 0) return;
  size_t dropped = 0;
  std::string shown = CutChars(text, max_text_chars, &dropped);
  if (dropped > 0) (*part)["text"] = std::move(shown);
}

// One message in text, and its JSON form with the same text parts cut.
void RenderMessage(const Session& session, const Message& m, size_t max_text_chars,
                   std::string* text, Json* json) {
  *json = ToJson(m);
  std::string& out = *text;
  out += "#" + std::to_string(m.seq) + " " + std::string(RoleName(m.role)) + " " +
         FormatUtcTime(m.ts_ms, UtcTimeForm::kIsoSeconds);
  if (!m.model.empty()) out += " " + m.model;
  out += "\n";
  if (m.pruned) out += "[pruned: a compaction dropped this message's content]\n";
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const Part& p = m.parts[i];
    switch (p.type) {
      case PartType::kText: {
        size_t dropped = 0;
        std::string shown =
            max_text_chars == 0 ? p.text : CutChars(p.text, max_text_chars, &dropped);
        out += shown;
        if (!shown.ends_with('\n')) out += "\n";
        if (dropped > 0) {
          (*json)["parts"][i]["text"] = shown;
          out += "[... " + std::to_string(dropped) + " more characters; read_session " +
                 CallArgs({{"session_id", session.id},
                           {"from_seq", m.seq},
                           {"limit", 1},
                           {"max_text_chars", 0}}) +
                 " shows all of it]\n";
        }
        break;
      }
      case PartType::kReasoning:
        out += "[reasoning] " + OneLine(p.text, kFoldedChars) + "\n";
        CutJsonText(p.text, max_text_chars, &(*json)["parts"][i]);
        break;
      case PartType::kImage:
      case PartType::kFile:
      case PartType::kResourceLink:
        if (p.resource) out += "[" + DescribeResource(*p.resource) + "]\n";
        break;
      case PartType::kToolCall:
        out += "[tool_call " + p.tool_call_id + " " + p.tool_name + "] " +
               OneLine(p.arguments_json, kFoldedChars) + "\n";
        break;
      case PartType::kToolResult:
        out += "[tool_result " + p.tool_call_id + (p.is_error ? ", error" : "") + "] " +
               OneLine(p.text, kFoldedChars) + "\n";
        CutJsonText(p.text, max_text_chars, &(*json)["parts"][i]);
        break;
    }
  }
  if (!m.files_modified.empty()) {
    out += "[files modified:";
    for (const std::string& f : m.files_modified) out += " " + f;
    out += "]\n";
  }
}

}  // namespace

std::string CutChars(std::string_view text, size_t max_chars, size_t* dropped) {
  const size_t bytes = PrefixBytes(text, max_chars);
  *dropped = bytes < text.size() ? CountChars(text.substr(bytes)) : 0;
  return std::string(text.substr(0, bytes));
}

std::string OneLine(std::string_view text, size_t max_chars) {
  std::string flat(text);
  std::replace_if(
      flat.begin(), flat.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  size_t dropped = 0;
  std::string out = CutChars(flat, max_chars, &dropped);
  if (dropped > 0) out += kEllipsis;
  return out;
}

std::string CallArgs(const Json& args) {
  return args.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string DescribeResource(const Resource& r) {
  std::string kind = r.origin == Origin::kRemoteLink ? "link"
                     : r.mime.starts_with("image/")  ? "image"
                                                     : "file";
  std::string out = kind + " " + r.resource_id + ": ";
  if (r.origin == Origin::kRemoteLink) {
    out += r.uri + ", never fetched";
    if (!r.mime.empty()) out += ", " + r.mime;
    return out;
  }
  out += (r.mime.empty() ? "unknown type" : r.mime) + ", ";
  if (r.width > 0) out += std::to_string(r.width) + "x" + std::to_string(r.height) + ", ";
  out += FormatBytes(r.size);
  if (!r.name.empty()) out += ", \"" + r.name + "\"";
  if (!r.not_stored.empty()) out += ", NOT STORED: " + r.not_stored;
  if (r.missing) out += ", MISSING from the store";
  return out;
}

SessionPageText RenderMessages(const Session& session, const std::vector<Message>& messages,
                               size_t max_text_chars, size_t budget_bytes, bool from_end) {
  SessionPageText page;
  std::vector<std::string> texts;
  std::vector<Json> forms;
  size_t used = 0;
  for (size_t k = 0; k < messages.size(); ++k) {
    const Message& m = from_end ? messages[messages.size() - 1 - k] : messages[k];
    std::string text;
    Json form;
    RenderMessage(session, m, max_text_chars, &text, &form);
    if (!texts.empty() && used + text.size() > budget_bytes) break;
    used += text.size();
    texts.push_back(std::move(text));
    forms.push_back(std::move(form));
  }
  if (from_end) {
    std::reverse(texts.begin(), texts.end());
    std::reverse(forms.begin(), forms.end());
  }
  page.shown = texts.size();
  page.left_out = messages.size() - texts.size();
  for (size_t i = 0; i < texts.size(); ++i) {
    page.text += (i == 0 ? "" : "\n") + texts[i];
    page.messages.push_back(std::move(forms[i]));
  }
  if (page.shown > 0) {
    page.first_seq = page.messages.front()["seq"].get<int64_t>();
    page.last_seq = page.messages.back()["seq"].get<int64_t>();
  }
  return page;
}

std::string DescribeSession(const Session& s) {
  std::string out = s.id + "  \"" + s.title + "\"  " + std::to_string(s.message_count) +
                    " message" + (s.message_count == 1 ? "" : "s") + ", updated " +
                    FormatUtcTime(s.updated_ms, UtcTimeForm::kIsoSeconds) + ", created " +
                    FormatUtcTime(s.created_ms, UtcTimeForm::kIsoSeconds);
  if (s.archived) out += ", archived";
  if (!s.parent_id.empty()) {
    out += ", fork of " + s.parent_id + " at seq " + std::to_string(s.fork_seq);
  }
  if (!s.metadata_json.empty() && s.metadata_json != "{}") out += ", metadata " + s.metadata_json;
  out += "\n";
  if (!s.preview.empty()) out += "    " + OneLine(s.preview, 200) + "\n";
  return out;
}

}  // namespace sessiondb::server
