#include "cli/completion.h"

#include <iostream>
#include <map>
#include <string_view>
#include <utility>

#include "cli/output.h"
#include "sessiondb/store.h"

namespace sessiondb::cli {
namespace {

// The values OfferValues recorded, by option.
std::map<const CLI::Option*, std::vector<std::string>>& OfferedValues() {
  static std::map<const CLI::Option*, std::vector<std::string>> offered;
  return offered;
}

// The most session ids offered: the most recently updated ones.
constexpr int kMaxSessionsOffered = 1000;

enum class ValueKind { kFree, kWords, kFiles, kFolders, kSessions };

// What a value of `option` is, from the name its --help gives the value (a
// positional's own name): SESSION a session id; FILE, PATH, RECEIPT a file;
// DIR, STORE a folder ("DIR|URI": a folder or a URI).
ValueKind ValueKindOf(const CLI::Option& option) {
  if (OfferedValues().contains(&option)) return ValueKind::kWords;
  const std::string text = option.get_positional() ? option.get_name() : option.get_option_text();
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find('|', begin), text.size());
    const std::string_view token = std::string_view(text).substr(begin, end - begin);
    if (token == "SESSION") return ValueKind::kSessions;
    if (token == "FILE" || token == "PATH" || token == "RECEIPT") return ValueKind::kFiles;
    if (token == "DIR" || token == "STORE") return ValueKind::kFolders;
    begin = end + 1;
  }
  return ValueKind::kFree;
}

bool TakesValue(const CLI::Option& option) { return option.get_items_expected_min() > 0; }

// The option `name` of `verb` or of a verb above it (options fall through to
// them, and the global ones are the root's); nullptr if none has it.
const CLI::Option* OptionNamed(const CLI::App& verb, const std::string& name) {
  for (const CLI::App* at = &verb; at != nullptr; at = at->get_parent()) {
    if (const CLI::Option* option = at->get_option_no_throw(name)) return option;
  }
  return nullptr;
}

// The verb `name` under `verb`, or nullptr.
const CLI::App* SubcommandNamed(const CLI::App& verb, const std::string& name) {
  for (const CLI::App* sub : verb.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(name)) return sub;
  }
  return nullptr;
}

// A candidate line: "CANDIDATE" or "CANDIDATE<TAB>DESCRIPTION", the
// description on one line and made safe for the terminal that shows it.
void PrintCandidate(std::string_view candidate, std::string_view description = "") {
  std::cout << candidate;
  if (!description.empty()) std::cout << '\t' << EscapeForTerminal(Shorten(description, 70));
  std::cout << '\n';
}

// The ids of the sessions of the store the command line names, those that
// begin with `prefix`, with their titles.
void PrintSessionIds(CliContext& ctx, std::string_view prefix) {
  const std::string path = ctx.StorePath();
  if (StoreKindOf(path) != StoreKind::kEmbedded) return;  // no network on a Tab
  StoreOptions options = ctx.MakeStoreOptions(/*create_if_missing=*/false);
  options.read_only = true;
  auto store = Store::Open(path, options);
  if (!store) return;
  auto page =
      (*store)->ListSessions({.limit = kMaxSessionsOffered, .archived = ArchiveFilter::kAll});
  if (!page) return;
  for (const Session& s : page->sessions) {
    if (s.id.starts_with(prefix)) PrintCandidate(s.id, s.title);
  }
}

// The values `option` takes that begin with `current`, or what the shell
// should complete instead.
void PrintValues(const CLI::Option& option, CliContext& ctx, std::string_view current) {
  switch (ValueKindOf(option)) {
    case ValueKind::kWords:
      for (const std::string& value : OfferedValues()[&option]) {
        if (value.starts_with(current)) PrintCandidate(value);
      }
      return;
    case ValueKind::kFiles:
      std::cout << ":files\n";
      return;
    case ValueKind::kFolders:
      std::cout << ":dirs\n";
      return;
    case ValueKind::kSessions:
      PrintSessionIds(ctx, current);
      return;
    case ValueKind::kFree:
      return;
  }
}

// The options `verb` takes (its own, then those of the verbs above it, the
// global ones last) that begin with `current`.
void PrintOptions(const CLI::App& verb, std::string_view current) {
  for (const CLI::App* at = &verb; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* option : at->get_options()) {
      if (option->get_group().empty()) continue;  // hidden
      // The root's --help and --version are not a verb's (its --help is its own).
      if (at != &verb && at->get_parent() == nullptr &&
          (option->check_name("--help") || option->check_name("--version"))) {
        continue;
      }
      for (const std::string& name : option->get_lnames()) {
        if (("--" + name).starts_with(current)) {
          PrintCandidate("--" + name, option->get_description());
        }
      }
    }
  }
}

// Takes the value of a global option that says which store the session ids
// come from.
void NoteStoreOption(const CLI::Option& option, const std::string& value, CliContext& ctx) {
  if (option.check_name("--store")) ctx.options.store = value;
  if (option.check_name("--namespace")) ctx.options.namespace_name = value;
  if (option.check_name("--key-file")) ctx.options.key_file = value;
}

}  // namespace

CLI::Option* OfferValues(CLI::Option* option, std::vector<std::string> values) {
  OfferedValues()[option] = std::move(values);
  return option;
}

int CompleteCommandLine(const CLI::App& app, CliContext& ctx, std::vector<std::string> words) {
  if (!words.empty() && words.front() == "--") words.erase(words.begin());
  const std::string current = words.empty() ? "" : words.back();
  if (!words.empty()) words.pop_back();

  // Walks the words before the cursor as CLI11 would parse them: the verb
  // (and the verb under it) they name, how many of its positionals they gave,
  // and an option still waiting for its value.
  const CLI::App* verb = &app;
  size_t positionals = 0;
  bool only_positionals = false;  // after "--"
  const CLI::Option* waiting = nullptr;
  for (const std::string& word : words) {
    if (waiting != nullptr) {
      NoteStoreOption(*waiting, word, ctx);
      waiting = nullptr;
    } else if (!only_positionals && word == "--") {
      only_positionals = true;
    } else if (!only_positionals && word.size() > 1 && word[0] == '-') {
      const size_t eq = word.find('=');
      const CLI::Option* option = OptionNamed(*verb, word.substr(0, eq));
      if (option == nullptr || !TakesValue(*option)) continue;
      if (eq == std::string::npos) {
        waiting = option;
      } else {
        NoteStoreOption(*option, word.substr(eq + 1), ctx);
      }
    } else if (const CLI::App* sub = only_positionals ? nullptr : SubcommandNamed(*verb, word);
               sub != nullptr && positionals == 0) {
      verb = sub;
    } else {
      ++positionals;
    }
  }

  if (waiting != nullptr) {
    PrintValues(*waiting, ctx, current);
  } else if (!only_positionals && current.starts_with("-")) {
    PrintOptions(*verb, current);
  } else if (const std::vector<const CLI::App*> subs =
                 verb->get_subcommands([](const CLI::App*) { return true; });
             !subs.empty()) {
    for (const CLI::App* sub : subs) {
      if (sub->get_name().starts_with(current)) {
        PrintCandidate(sub->get_name(), sub->get_description());
      }
    }
  } else {
    const std::vector<const CLI::Option*> slots =
        verb->get_options([](const CLI::Option* o) { return o->get_positional(); });
    // The last positional takes every word left when it takes many.
    if (!slots.empty() && positionals >= slots.size() &&
        slots.back()->get_items_expected_max() > 1) {
      positionals = slots.size() - 1;
    }
    if (positionals < slots.size()) PrintValues(*slots[positionals], ctx, current);
  }
  std::cout.flush();
  return kExitOk;
}

}  // namespace sessiondb::cli
