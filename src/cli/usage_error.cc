#include "cli/usage_error.h"

#include <optional>
#include <vector>

#include "cli/verb_suggestion.h"

namespace sessiondb::cli {
namespace {

// The deepest verb the parse reached ("rotate" under "key"), else `app`.
const CLI::App& DeepestParsed(const CLI::App& app) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  return parsed.empty() ? app : DeepestParsed(*parsed.back());
}

// "sessiondb key rotate": the words that name `verb`.
std::string CommandOf(const CLI::App& verb) {
  std::string out = verb.get_name();
  for (const CLI::App* up = verb.get_parent(); up != nullptr; up = up->get_parent()) {
    out = up->get_name() + " " + out;
  }
  return out;
}

// The long option names `verb` takes: its own and, since options fall
// through to the verbs above it, theirs (the global options at the root).
std::vector<std::string> LongOptionNames(const CLI::App& verb) {
  std::vector<std::string> names;
  for (const CLI::App* at = &verb; at != nullptr; at = at->get_parent()) {
    for (const CLI::Option* option : at->get_options()) {
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    }
  }
  return names;
}

// The option `name` ("--limit", or a positional's "SESSION") of `verb` or a
// verb above it; nullptr if none has it.
const CLI::Option* FindOption(const CLI::App& verb, const std::string& name) {
  for (const CLI::App* at = &verb; at != nullptr; at = at->get_parent()) {
    if (const CLI::Option* option = at->get_option_no_throw(name)) return option;
  }
  return nullptr;
}

// What an option's value is called in its --help ("N", "FILE"), else its type ("TEXT").
std::string ValueName(const CLI::Option& option) {
  return option.get_option_text().empty() ? option.get_type_name() : option.get_option_text();
}

// `message` about `verb`, with where its options are listed and, when there
// are any, the `similar` names (`noun`s) on lines of their own.
UsageError UsageAbout(const CLI::App& verb, std::string message, std::string_view noun = "",
                      const std::vector<std::string>& similar = {}) {
  UsageError error;
  error.text = "sessiondb: " + message;
  if (!message.ends_with(".")) error.text += ".";
  error.text += " See '" + CommandOf(verb) + " --help'.\n" + MostSimilar(noun, similar);
  error.message = std::move(message);
  return error;
}

// " for 'sessiondb ls'"; nothing for the root, whose options are global.
std::string ForVerb(const CLI::App& verb) {
  return verb.get_parent() == nullptr ? "" : " for '" + CommandOf(verb) + "'";
}

// " of 'sessiondb ls'"; nothing for the root.
std::string OfVerb(const CLI::App& verb) {
  return verb.get_parent() == nullptr ? "" : " of '" + CommandOf(verb) + "'";
}

UsageError UnknownOption(const CLI::App& verb, const std::string& typed) {
  // "--limt=5": the option is "--limt".
  const std::string name = typed.substr(0, typed.find('='));
  return UsageAbout(verb, "unknown option '" + name + "'" + ForVerb(verb), "option",
                    SimilarNames(name, LongOptionNames(verb)));
}

// `verb` needs one of its own verbs ("sessiondb key" needs new, status...):
// either none was given, or the word given (the first of `extras` that is
// not an option) is none of them.
UsageError MissingVerb(const CLI::App& verb, const std::vector<std::string>& extras) {
  std::vector<std::string> names;
  for (const CLI::App* sub : verb.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  for (const std::string& word : extras) {
    if (word.starts_with("-")) continue;
    return UsageAbout(verb, "'" + word + "' is not a '" + CommandOf(verb) + "' command", "command",
                      SimilarNames(word, names));
  }
  if (verb.get_parent() == nullptr) return UsageAbout(verb, "no command given");
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return UsageAbout(verb, "'" + CommandOf(verb) + "' needs a command: " + list);
}

// The digits at the start of `text` as a number, if there are any (and not too many).
std::optional<int> LeadingNumber(std::string_view text) {
  int n = 0;
  size_t i = 0;
  for (; i < text.size() && i < 6 && text[i] >= '0' && text[i] <= '9'; ++i)
    n = n * 10 + (text[i] - '0');
  return i == 0 ? std::nullopt : std::optional<int>(n);
}

// An option given too few or too many values, from CLI11's words for it:
// "NAME: N required TYPE missing" (a value left out), "NAME: At least N
// required but received M", "NAME: At Most N required but received M".
struct ValueCount {
  std::string option;
  std::string bound;     // "a value", "at least 2 values", "at most 4 values"
  std::string received;  // ", got 1", or empty
};
std::optional<ValueCount> ValueCountProblem(const std::string& what) {
  const size_t colon = what.find(": ");
  if (colon == std::string::npos) return std::nullopt;
  ValueCount out{.option = what.substr(0, colon)};
  std::string_view rest = std::string_view(what).substr(colon + 2);
  std::string_view bound = "at least ";
  if (rest.starts_with("At least ") || rest.starts_with("At Most ")) {
    if (rest.starts_with("At Most ")) bound = "at most ";
    rest.remove_prefix(rest.find(' ', 3) + 1);
    const std::optional<int> n = LeadingNumber(rest);
    const size_t received = rest.find(" required but received ");
    if (!n || received == std::string_view::npos) return std::nullopt;
    out.bound = std::string(bound) + std::to_string(*n) + (*n == 1 ? " value" : " values");
    out.received = ", got " + std::string(rest.substr(received + 23));
    return out;
  }
  const std::optional<int> n = LeadingNumber(rest);
  if (!n || !rest.ends_with(" missing") || rest.find(" required ") == std::string_view::npos) {
    return std::nullopt;
  }
  out.bound = *n <= 1 ? "a value" : "at least " + std::to_string(*n) + " values";
  return out;
}

}  // namespace

UsageError DescribeParseError(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App& verb = DeepestParsed(app);
  const std::string what = error.what();
  // What the parse left over, in the order typed (the message lists it backwards).
  const std::vector<std::string> extras = app.remaining(/*recurse=*/true);

  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    for (const std::string& extra : extras) {
      if (extra.size() > 1 && extra[0] == '-') return UnknownOption(verb, extra);
    }
    if (!extras.empty()) {
      return UsageAbout(verb, "unexpected argument '" + extras.front() + "'" + ForVerb(verb));
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    if (what == "A subcommand is required") return MissingVerb(verb, extras);
    if (what.ends_with(" is required")) {
      const std::string name = what.substr(0, what.size() - std::string(" is required").size());
      if (const CLI::Option* option = FindOption(verb, name)) {
        const std::string needed =
            option->get_positional() ? name : name + " " + ValueName(*option);
        return UsageAbout(verb, "'" + CommandOf(verb) + "' needs " + needed);
      }
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    if (const std::optional<ValueCount> count = ValueCountProblem(what)) {
      const CLI::Option* option = FindOption(verb, count->option);
      const std::string value = option != nullptr ? " (" + ValueName(*option) + ")" : "";
      return UsageAbout(verb, "option '" + count->option + "'" + OfVerb(verb) +
                                  (count->bound.starts_with("at most") ? " takes " : " needs ") +
                                  count->bound + value + count->received);
    }
  }
  UsageError usage = UsageAbout(verb, what);
  // A value the option's check refused ("--to -1", "--port 0x2") is an
  // invalid argument, like one the library refuses; the rest is usage.
  usage.invalid_argument = dynamic_cast<const CLI::ValidationError*>(&error) != nullptr ||
                           dynamic_cast<const CLI::ConversionError*>(&error) != nullptr;
  return usage;
}

UsageError UnknownGlobalOption(const CLI::App& app, std::string_view typed) {
  return UnknownOption(app, std::string(typed));
}

}  // namespace sessiondb::cli
