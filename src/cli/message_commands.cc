// Verbs that write and read a session's messages: append, show.
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/numeric_options.h"
#include "cli/served_reads.h"
#include "cli/session_ref.h"
#include "core/text_rules.h"
#include "core/tool_call_text.h"

namespace sessiondb::cli {
namespace {

constexpr size_t kPartPreviewChars = 200;

// `path` made absolute, so the resource's uri still names the file when read
// from another directory; as given if that fails.
std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

// An --image argument: a data URI, an http(s) link (kept as a descriptor,
// never fetched), or a file path.
Part ImagePart(const std::string& arg) {
  if (arg.starts_with("data:")) return Part::ImageFromDataUri(arg);
  if (arg.starts_with("http://") || arg.starts_with("https://")) return Part::Link(arg);
  return Part::ImageFromFile(AbsolutePath(arg));
}

// All of stdin, less one trailing newline (the one `echo` and heredocs add).
std::string ReadStdin() {
  std::string text(std::istreambuf_iterator<char>(std::cin), {});
  if (text.ends_with('\n')) text.pop_back();
  if (text.ends_with('\r')) text.pop_back();
  return text;
}

// Text indented by `indent` on every line.
std::string Indent(const std::string& text, const std::string& indent) {
  std::string out = indent;
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

// One line per attachment: kind, id, mime, size, WxH, name, sha256, MISSING.
void PrintResource(std::string_view kind, const Resource& r) {
  std::cout << "    [" << kind << "] " << r.resource_id;
  if (r.origin == Origin::kRemoteLink) {
    std::cout << "  " << r.uri << "  (link, not fetched)";
    if (!r.mime.empty()) std::cout << "  " << r.mime;
    if (r.size > 0) std::cout << "  " << FormatBytes(r.size);
  } else {
    std::cout << "  " << (r.mime.empty() ? "?" : r.mime) << "  " << FormatBytes(r.size);
    if (r.width > 0) std::cout << "  " << r.width << "x" << r.height;
    if (!r.name.empty()) std::cout << "  \"" << r.name << "\"";
    std::cout << "  sha256:" << r.content_sha256;
  }
  if (r.missing) std::cout << "  MISSING";
  std::cout << "\n";
}

// A block of a tool call under its line: a long one (IsLongOutput) cut to
// its first lines, with what was left out (`--json` has it all).
void PrintToolBlock(const ToolTextBlock& b) {
  constexpr size_t kShownLines = 20, kShownBytes = 2048;
  if (!b.caption.empty()) std::cout << "      " << b.caption << ":\n";
  std::string_view text = b.text;
  size_t cut = text.size();
  if (IsLongOutput(text)) {
    cut = 0;
    for (size_t lines = 0; lines < kShownLines && cut < text.size() && cut < kShownBytes; ++lines) {
      const size_t end = text.find('\n', cut);
      cut = end == std::string_view::npos ? text.size() : end + 1;
    }
    cut = std::min(cut, kShownBytes);
    // Never in the middle of a UTF-8 character.
    while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
      --cut;
    }
  }
  std::string shown(text.substr(0, cut));
  if (shown.ends_with('\n')) shown.pop_back();
  std::cout << Indent(shown, "      ") << "\n";
  if (cut < text.size()) {
    const size_t more = CountLines(text.substr(cut));
    std::cout << "      \xE2\x80\xA6 " << more << " more line" << (more == 1 ? "" : "s")
              << " (--json shows all)\n";
  }
}

// A message's parts; a tool call with its result (found by `pairing` in this
// or a later message) under it, a result shown so only pointing up to it.
void PrintMessage(const Message& m, ToolResultPairing& pairing) {
  std::cout << "#" << m.seq << "  " << RoleName(m.role) << "  " << FormatTime(m.ts_ms, true);
  if (!m.model.empty()) std::cout << "  " << m.model;
  std::cout << "\n";
  for (const Part& p : m.parts) {
    switch (p.type) {
      case PartType::kText:
        std::cout << Indent(p.text, "    ") << "\n";
        break;
      case PartType::kReasoning:
        std::cout << "    [reasoning] " << Shorten(p.text, kPartPreviewChars) << "\n";
        break;
      case PartType::kImage:
      case PartType::kFile:
      case PartType::kResourceLink:
        if (p.resource) {
          PrintResource(p.type == PartType::kResourceLink ? "link" : PartTypeName(p.type),
                        *p.resource);
        }
        break;
      case PartType::kToolCall: {
        const ToolCallText t = DescribeToolCall(p, pairing.TakeResultFor(p));
        std::cout << "    [tool_call " << p.tool_call_id << "] " << p.tool_name;
        if (!t.summary.empty()) std::cout << ": " << t.summary;
        std::cout << "\n";
        for (const ToolTextBlock& b : t.blocks) PrintToolBlock(b);
        break;
      }
      case PartType::kToolResult:
        std::cout << "    [tool_result " << p.tool_call_id << (p.is_error ? ", error" : "") << "]";
        if (pairing.TakenWithCall(p)) {
          std::cout << " shown with its call above\n";
          break;
        }
        std::cout << "\n";
        for (const ToolTextBlock& b : DescribeToolResult(p).blocks) PrintToolBlock(b);
        break;
    }
  }
  if (!m.files_modified.empty()) {
    std::cout << "    [files modified]";
    for (const auto& f : m.files_modified) std::cout << " " << f;
    std::cout << "\n";
  }
}

// The Store numbers a message's parts in order, text first ("image part 2:
// cannot read ..."); the person numbers the flags they typed, so the first
// --image is "image 1". `status` with the Store's "<type> part N" at the
// start of its message replaced by `typed_names[N - 1]`; unchanged when its
// message does not start that way.
Status NamedAsTyped(const Status& status, const std::vector<std::string>& typed_names) {
  const std::string& message = status.message();
  const size_t word = message.find(" part ");
  if (word == std::string::npos || word == 0 ||
      message.find_first_of(" :", 0) != word) {  // the type is one word before " part "
    return status;
  }
  const size_t digits = word + std::string_view(" part ").size();
  size_t end = digits;
  while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
  if (end == digits || end - digits > 6) return status;
  const size_t index = std::stoul(message.substr(digits, end - digits));
  if (index == 0 || index > typed_names.size()) return status;
  return Status(status.code(), typed_names[index - 1] + message.substr(end));
}

void AddAppend(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session, text, role = "user", model, provider;
    std::vector<std::string> images, files;
    std::vector<int64_t> tokens;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("append", "Append a message (text, images, files) to a session");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  auto* text = cmd->add_option(
      "TEXT", args->text,
      "Message text; '-' reads stdin; absent reads stdin when it is not a terminal");
  OfferValues(
      cmd->add_option("--role", args->role, "system, user, assistant or tool (default user)"),
      {"system", "user", "assistant", "tool"})
      ->option_text("ROLE");
  cmd->add_option("--image", args->images,
                  "Image: a file, a data: URI, or an http(s) URL (kept as a link, never fetched); "
                  "repeatable")
      ->option_text("FILE|URI|URL");
  cmd->add_option("--file", args->files,
                  "File to attach (stored as an image when it is one); repeatable")
      ->option_text("FILE");
  cmd->add_option("--model", args->model, "Model that produced the message");
  cmd->add_option("--provider", args->provider, "Provider that served it (openai, anthropic...)");
  cmd->add_option("--tokens", args->tokens,
                  "Provider usage of the turn: input,output[,cached[,reasoning[,cache_write]]] "
                  "tokens (input counts the cached reads and cache writes; docs/usage.md)")
      ->delimiter(',')
      ->expected(2, 5)
      ->check(NumberIn(0, kMaxCount))
      ->option_text("IN,OUT[,CACHED[,REASONING[,CACHE_WRITE]]]");
  cmd->footer(
      "\nExamples:\n"
      "  sessiondb append SID \"What is this?\" --image shot.png\n"
      "  sessiondb append SID --role assistant \"It is a cat.\" --model claude-sonnet-4 \\\n"
      "      --provider anthropic --tokens 1200,80,1000\n"
      "  cat question.md | sessiondb append SID --file report.pdf\n"
      "  sessiondb append SID -- \"--flags look like options; put text after --\"");
  cmd->callback([&ctx, args, text] {
    auto role = ParseRole(args->role);
    if (!role) return ctx.Fail(role.error());
    std::string body;
    if (text->count() > 0 && args->text != "-") {
      body = args->text;
    } else if (text->count() > 0 || !isatty(STDIN_FILENO)) {
      body = ReadStdin();
    }
    if (body.empty() && args->images.empty() && args->files.empty()) {
      return ctx.Fail(Status::InvalidArgument(
          "nothing to append: give TEXT, pipe the text on stdin, or attach --image/--file"));
    }
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    Message m;
    m.role = *role;
    m.model = args->model;
    m.provider = args->provider;
    if (!args->tokens.empty()) {
      const auto& t = args->tokens;
      m.usage = Usage{.input_tokens = t[0],
                      .output_tokens = t[1],
                      .cached_tokens = t.size() > 2 ? t[2] : 0,
                      .reasoning_tokens = t.size() > 3 ? t[3] : 0,
                      .cache_write_tokens = t.size() > 4 ? t[4] : 0};
    }
    // What each part is called on the command line, for the errors below.
    std::vector<std::string> typed_names;
    if (!body.empty()) {
      m.parts.push_back(Part::Text(std::move(body)));
      typed_names.push_back("the message text");
    }
    for (size_t i = 0; i < args->images.size(); ++i) {
      m.parts.push_back(ImagePart(args->images[i]));
      typed_names.push_back("image " + std::to_string(i + 1));
    }
    for (size_t i = 0; i < args->files.size(); ++i) {
      m.parts.push_back(Part::FileFromFile(AbsolutePath(args->files[i])));
      typed_names.push_back("file " + std::to_string(i + 1));
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    auto r = store->Append(*id, m);
    if (!r) return ctx.Fail(NamedAsTyped(r.error(), typed_names));
    if (ctx.options.json) return ctx.PrintJson(ToJson(*r));
    std::cout << "seq " << r->seq << ", message " << r->message_id << "\n";
    for (const Resource& res : r->resources) {
      PrintResource(res.origin == Origin::kRemoteLink ? "link" : "stored", res);
    }
  });
}

void AddShow(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session = "-";
    int64_t from = 1, limit = -1, last = -1;
    bool data_uris = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("show", "Print a session's messages and their attachments");
  cmd->add_option("SESSION", args->session,
                  "Session id, a unique prefix of one, or - (the default) for the active one");
  auto* from = cmd->add_option("--from", args->from, "First seq to show")
                   ->check(NumberIn(1, kMaxCount))
                   ->option_text("SEQ");
  auto* limit = cmd->add_option("--limit", args->limit, "At most N messages")
                    ->check(NumberIn(0, kMaxCount))
                    ->option_text("N");
  cmd->add_option("--last", args->last, "Only the last N messages")
      ->check(NumberIn(0, kMaxCount))
      ->excludes(from)
      ->excludes(limit)
      ->option_text("N");
  cmd->add_flag("--data-uris", args->data_uris,
                "With --json: give each image part its bytes as \"data_uri\"");
  cmd->footer(
      "\nExamples:\n  sessiondb show --last 10\n  sessiondb show 0192f3a1\n  sessiondb show SID "
      "--from 40 --limit 20\n"
      "  sessiondb show SID --json --data-uris > chat.json");
  cmd->callback([&ctx, args] {
    if (AnsweredByResidentServer(ctx)) return;
    if (args->data_uris && !ctx.options.json) {
      return ctx.Fail(Status::InvalidArgument(
          "--data-uris only changes JSON output; add --json (images are megabytes of base64)"));
    }
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    auto session = store->GetSession(*id);
    if (!session) return ctx.Fail(session.error());
    auto messages = args->last >= 0 ? store->ReadLastMessages(*id, args->last)
                                    : store->ReadMessages(*id, args->from, args->limit);
    if (!messages) return ctx.Fail(messages.error());
    ctx.StartPager();

    if (!ctx.options.json) {
      std::cout << session->title << "  (" << session->id << ", " << session->message_count
                << " message" << (session->message_count == 1 ? "" : "s")
                << (session->archived ? ", archived" : "") << ")\n";
      ToolResultPairing pairing;
      for (const Message& m : *messages) pairing.Add(m);
      for (const Message& m : *messages) {
        std::cout << "\n";
        PrintMessage(m, pairing);
      }
      return;
    }
    Json out = Json::array();
    for (const Message& m : *messages) {
      Json jm = ToJson(m);
      for (size_t i = 0; args->data_uris && i < m.parts.size(); ++i) {
        const Part& p = m.parts[i];
        if (p.type != PartType::kImage || !p.resource || p.resource->missing) continue;
        auto uri = store->ReadDataUri(*p.resource);
        if (uri) {
          jm["parts"][i]["data_uri"] = std::move(*uri);
        } else {
          // The blob went away or went bad since the read: say so, keep the rest.
          std::cerr << "sessiondb: warning: image " << p.resource->resource_id << " of message #"
                    << m.seq << ": " << uri.error().message() << "\n";
          jm["parts"][i]["data_uri"] = nullptr;
        }
      }
      out.push_back(std::move(jm));
    }
    ctx.PrintJson({{"session", ToJson(*session)}, {"messages", std::move(out)}});
  });
}

}  // namespace

void AddMessageCommands(CLI::App& app, CliContext& ctx) {
  AddAppend(app, ctx);
  AddShow(app, ctx);
}

}  // namespace sessiondb::cli
