#include "cli/hook_settings.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/json_access.h"
#include "core/json_parse.h"

namespace sessiondb::cli {

namespace {

using nlohmann::json;

// The matchers our entries use, and the one earlier versions wrote (so a
// reinstall or an uninstall finds those too).
constexpr std::string_view kMatchers[] = {"Write|Edit|MultiEdit|NotebookEdit",
                                          "Write|Edit|MultiEdit|NotebookEdit|Bash",
                                          "Write|Edit|MultiEdit"};
constexpr std::string_view kCommandTail = " hook claude-code";
constexpr std::string_view kResidentCommandTail = " hook claude-code --resident";

// [begin, end) in the settings text.
struct Span {
  size_t begin = 0;
  size_t end = 0;
};

// An object or array of the text: where it opens and closes, and its items
// (an object's items are whole members, `"key": value`).
struct Container {
  size_t open = 0;
  size_t close = 0;
  std::vector<Span> items;
  std::vector<Span> values;       // the value of each item (the item itself in an array)
  std::vector<std::string> keys;  // an object's keys, decoded
};

// The scanner below walks text that ParseJson has already accepted, so it
// only has to find boundaries, never to reject anything. It does not recurse.

size_t SkipSpace(std::string_view t, size_t p) {
  while (p < t.size() && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r')) ++p;
  return p;
}

// Where the top-level object opens: past a UTF-8 byte order mark, which the
// parser accepts, and white space.
size_t RootStart(std::string_view t) { return SkipSpace(t, t.starts_with("\xEF\xBB\xBF") ? 3 : 0); }

// The end of the string token that opens at `p`.
size_t StringEnd(std::string_view t, size_t p) {
  for (++p; p < t.size(); ++p) {
    if (t[p] == '\\') {
      ++p;
    } else if (t[p] == '"') {
      return p + 1;
    }
  }
  return t.size();
}

// The end of the value that starts at `p`.
size_t ValueEnd(std::string_view t, size_t p) {
  if (t[p] == '"') return StringEnd(t, p);
  if (t[p] == '{' || t[p] == '[') {
    int depth = 0;
    while (p < t.size()) {
      const char c = t[p];
      if (c == '"') {
        p = StringEnd(t, p);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return p + 1;
      ++p;
    }
    return t.size();
  }
  while (p < t.size() && std::strchr(",]} \t\r\n", t[p]) == nullptr) ++p;
  return p;
}

// The object or array whose value starts at `p`.
Container Scan(std::string_view t, size_t p) {
  Container c;
  c.open = p;
  const bool object = t[p] == '{';
  size_t q = SkipSpace(t, p + 1);
  while (q < t.size() && t[q] != '}' && t[q] != ']') {
    const size_t begin = q;
    if (object) {
      const size_t key_end = StringEnd(t, q);
      Result<json> key = ParseJson(t.substr(q, key_end - q));
      c.keys.push_back(key && key->is_string() ? key->get<std::string>() : "");
      q = SkipSpace(t, SkipSpace(t, key_end) + 1);  // past the ':'
    }
    const size_t value_end = ValueEnd(t, q);
    if (value_end <= q) break;  // cannot happen in parsed text; never loop on it
    c.items.push_back({begin, value_end});
    c.values.push_back({q, value_end});
    q = SkipSpace(t, value_end);
    if (q < t.size() && t[q] == ',') q = SkipSpace(t, q + 1);
  }
  c.close = q;
  return c;
}

// The index of the member named `key` (the last, as the parser keeps), if any.
std::optional<size_t> FindKey(const Container& object, std::string_view key) {
  for (size_t i = object.keys.size(); i-- > 0;) {
    if (object.keys[i] == key) return i;
  }
  return std::nullopt;
}

// Removes the items of `c` marked in `remove` with the separators that joined
// them, so that removing what AppendItem added gives back the text before it.
void RemoveItems(std::string& text, const Container& c, const std::vector<bool>& remove) {
  const size_t n = c.items.size();
  size_t first_kept = 0;
  while (first_kept < n && remove[first_kept]) ++first_kept;
  std::vector<Span> cuts;
  if (first_kept == n) {
    if (n > 0) cuts.push_back({c.open + 1, c.items[n - 1].end});
  } else {
    if (first_kept > 0) cuts.push_back({c.items[0].begin, c.items[first_kept].begin});
    for (size_t i = first_kept + 1; i < n; ++i) {
      if (remove[i]) cuts.push_back({c.items[i - 1].end, c.items[i].end});
    }
  }
  std::sort(cuts.begin(), cuts.end(), [](Span a, Span b) { return a.begin > b.begin; });
  for (Span cut : cuts) text.erase(cut.begin, cut.end - cut.begin);
}

// Appends `item` to `c`, spaced like the item before it.
void AppendItem(std::string& text, const Container& c, const std::string& item) {
  const size_t n = c.items.size();
  if (n == 0) {
    text.insert(c.open + 1, item);
    return;
  }
  const size_t after_separator =
      n == 1 ? c.open + 1 : SkipSpace(text, c.items[n - 2].end) + 1;  // past the ','
  const std::string space = text.substr(after_separator, c.items[n - 1].begin - after_separator);
  text.insert(c.items[n - 1].end, "," + space + item);
}

Status NotObject(std::string_view what) {
  return Status::InvalidArgument(std::string(what) + " is not a JSON object");
}

// The settings as JSON, checked for the shapes the edits rely on.
Status CheckShape(std::string_view settings) {
  ASSIGN_OR_RETURN(json parsed, ParseJson(settings));
  if (!parsed.is_object()) return NotObject("the settings");
  auto hooks = parsed.find("hooks");
  if (hooks == parsed.end()) return Status::Ok();
  if (!hooks->is_object()) return NotObject("\"hooks\"");
  for (const char* event : kHookEvents) {
    auto list = hooks->find(event);
    if (list != hooks->end() && !list->is_array()) {
      return Status::InvalidArgument(std::string("\"hooks\".\"") + event +
                                     "\" is not a JSON array");
    }
  }
  return Status::Ok();
}

std::string Quoted(std::string_view key) { return json(std::string(key)).dump(); }

// The "hooks" object of the root, if it has one.
std::optional<Container> HooksObject(std::string_view text, const Container& root) {
  const std::optional<size_t> hooks = FindKey(root, "hooks");
  if (!hooks) return std::nullopt;
  return Scan(text, root.values[*hooks].begin);
}

// Removes our entries from each event array; returns how many per event.
std::vector<int> RemoveOurs(std::string& text) {
  std::vector<int> removed;
  for (const char* event : kHookEvents) {
    int count = 0;
    const Container root = Scan(text, RootStart(text));
    if (std::optional<Container> hooks = HooksObject(text, root)) {
      if (std::optional<size_t> at = FindKey(*hooks, event)) {
        const Container list = Scan(text, hooks->values[*at].begin);
        std::vector<bool> ours(list.items.size(), false);
        for (size_t i = 0; i < list.items.size(); ++i) {
          const Span v = list.values[i];
          Result<json> entry = ParseJson(std::string_view(text).substr(v.begin, v.end - v.begin));
          ours[i] = entry && IsSessiondbHookEntry(*entry);
          count += ours[i] ? 1 : 0;
        }
        if (count > 0) RemoveItems(text, list, ours);
      }
    }
    removed.push_back(count);
  }
  return removed;
}

}  // namespace

bool IsSessiondbHookEntry(const json& entry) {
  if (!entry.is_object()) return false;
  auto matcher = entry.find("matcher");
  auto hooks = entry.find("hooks");
  if (matcher == entry.end() || !matcher->is_string() ||
      std::find(std::begin(kMatchers), std::end(kMatchers), matcher->get<std::string>()) ==
          std::end(kMatchers) ||
      hooks == entry.end() || !hooks->is_array() || hooks->size() != 1) {
    return false;
  }
  const json& hook = (*hooks)[0];
  if (!hook.is_object() || MemberOr(hook, "type", "") != "command") return false;
  auto command_field = hook.find("command");
  if (command_field == hook.end() || !command_field->is_string()) return false;
  const std::string command = command_field->get<std::string>();
  if (!command.ends_with(kCommandTail) && !command.ends_with(kResidentCommandTail)) return false;
  // The program: the first shell word, quoted or not; its file name.
  std::string program;
  if (command.starts_with('\'')) {
    program = command.substr(1, command.find('\'', 1) - 1);
  } else {
    program = command.substr(0, command.find(' '));
  }
  const size_t slash = program.rfind('/');
  return (slash == std::string::npos ? program : program.substr(slash + 1)) == "sessiondb";
}

Result<SettingsEdit> InstallHookEntries(std::string_view settings, const json& entries) {
  RETURN_IF_ERROR(CheckShape(settings));
  SettingsEdit edit{.text = std::string(settings)};
  for (int n : RemoveOurs(edit.text)) edit.removed += n;
  auto item_of = [&entries](const char* event) {
    auto it = entries.find(event);
    return it != entries.end() && it->is_array() && !it->empty() ? (*it)[0].dump() : "{}";
  };
  for (const char* event : kHookEvents) {
    const std::string item = item_of(event);
    const Container root = Scan(edit.text, RootStart(edit.text));
    std::optional<Container> hooks = HooksObject(edit.text, root);
    if (!hooks) {
      std::string members;
      for (const char* e : kHookEvents) {
        members += (members.empty() ? "" : ", ") + Quoted(e) + ": [" + item_of(e) + "]";
      }
      AppendItem(edit.text, root, Quoted("hooks") + ": {" + members + "}");
      break;  // every event at once
    }
    if (std::optional<size_t> at = FindKey(*hooks, event)) {
      AppendItem(edit.text, Scan(edit.text, hooks->values[*at].begin), item);
    } else {
      AppendItem(edit.text, *hooks, Quoted(event) + ": [" + item + "]");
    }
  }
  return edit;
}

Result<SettingsEdit> RemoveHookEntries(std::string_view settings) {
  RETURN_IF_ERROR(CheckShape(settings));
  SettingsEdit edit{.text = std::string(settings)};
  const std::vector<int> removed = RemoveOurs(edit.text);
  for (int n : removed) edit.removed += n;
  if (edit.removed == 0) return edit;
  // The arrays our removal emptied, then "hooks" if that emptied it.
  const Container root = Scan(edit.text, RootStart(edit.text));
  std::optional<Container> hooks = HooksObject(edit.text, root);
  if (!hooks) return edit;
  std::vector<bool> emptied(hooks->items.size(), false);
  bool any = false;
  for (size_t e = 0; e < std::size(kHookEvents); ++e) {
    std::optional<size_t> at = FindKey(*hooks, kHookEvents[e]);
    if (!at || removed[e] == 0) continue;
    if (Scan(edit.text, hooks->values[*at].begin).items.empty()) emptied[*at] = any = true;
  }
  if (!any) return edit;
  const bool hooks_emptied = std::count(emptied.begin(), emptied.end(), true) ==
                             static_cast<std::ptrdiff_t>(hooks->items.size());
  RemoveItems(edit.text, *hooks, emptied);
  if (hooks_emptied) {
    const Container again = Scan(edit.text, RootStart(edit.text));
    std::vector<bool> drop(again.items.size(), false);
    drop[*FindKey(again, "hooks")] = true;
    RemoveItems(edit.text, again, drop);
  }
  return edit;
}

}  // namespace sessiondb::cli
