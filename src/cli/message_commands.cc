// Verbs that write and read a session's messages: append, show.
#include <unistd.h>

#include <iostream>
#include <iterator>
#include <memory>

#include "cli/commands.h"

namespace sessiondb::cli {
namespace {

using nlohmann::json;

// An --image argument: a data URI, an http(s) link, or a file path.
Part ImagePart(const std::string& arg) {
  if (arg.rfind("data:", 0) == 0) return Part::ImageFromDataUri(arg);
  if (arg.rfind("http://", 0) == 0 || arg.rfind("https://", 0) == 0) return Part::Link(arg);
  return Part::ImageFromFile(arg);
}

std::string Shorten(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 safe
  return text.substr(0, cut) + "…";
}

void PrintResource(const char* kind, const Resource& r) {
  std::cout << "    [" << kind << " " << r.resource_id;
  if (!r.mime.empty()) std::cout << " " << r.mime;
  if (r.origin == Origin::kRemoteLink) {
    std::cout << " " << r.uri << " (link, not fetched)";
  } else {
    std::cout << " " << FormatBytes(r.size);
    if (r.width) std::cout << " " << r.width << "x" << r.height;
    if (!r.name.empty()) std::cout << " \"" << r.name << "\"";
    std::cout << " sha256:" << r.content_sha256.substr(0, 12);
  }
  if (r.missing) std::cout << " MISSING";
  std::cout << "]\n";
}

void PrintMessage(const Message& m) {
  std::cout << "#" << m.seq << " " << RoleName(m.role) << "  " << FormatTime(m.ts_ms);
  if (!m.model.empty()) std::cout << "  (" << m.model << ")";
  std::cout << "\n";
  for (const Part& p : m.parts) {
    switch (p.type) {
      case PartType::kText: {
        std::string line;
        for (char c : p.text) {
          line += c;
          if (c == '\n') line += "    ";
        }
        std::cout << "    " << line << "\n";
        break;
      }
      case PartType::kReasoning:
        std::cout << "    [reasoning] " << Shorten(p.text, 200) << "\n";
        break;
      case PartType::kImage:
        PrintResource("image", *p.resource);
        break;
      case PartType::kFile:
        PrintResource("file", *p.resource);
        break;
      case PartType::kResourceLink:
        PrintResource("link", *p.resource);
        break;
      case PartType::kToolCall:
        std::cout << "    [tool_call " << p.tool_call_id << "] " << p.tool_name << "("
                  << Shorten(p.arguments_json, 200) << ")\n";
        break;
      case PartType::kToolResult:
        std::cout << "    [tool_result " << p.tool_call_id << (p.is_error ? " error" : "") << "] "
                  << Shorten(p.text, 200) << "\n";
        break;
    }
  }
}

void AddAppend(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session, text, role = "user", model;
    std::vector<std::string> images, files;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("append", "Append a message (text, images, files) to a session");
  cmd->add_option("SESSION", args->session, "Session id")->required();
  cmd->add_option("TEXT", args->text, "Message text; '-' or absent reads stdin (when piped)");
  cmd->add_option("--role", args->role, "system, user, assistant or tool")->capture_default_str();
  cmd->add_option("--image", args->images, "Image file, data: URI or http(s) link; repeatable");
  cmd->add_option("--file", args->files, "File to attach (kept as an image if it is one)");
  cmd->add_option("--model", args->model, "Model that produced the message");
  cmd->callback([&ctx, args] {
    auto role = ParseRole(args->role);
    if (!role) return ctx.Fail(role.error());
    std::string text = args->text;
    if ((text.empty() || text == "-") && !isatty(STDIN_FILENO)) {
      text.assign(std::istreambuf_iterator<char>(std::cin), {});
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    } else if (text == "-") {
      text.clear();
    }
    Message m;
    m.role = *role;
    m.model = args->model;
    if (!text.empty()) m.parts.push_back(Part::Text(text));
    for (const auto& image : args->images) m.parts.push_back(ImagePart(image));
    for (const auto& file : args->files) m.parts.push_back(Part::FileFromFile(file));
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    auto r = store->Append(args->session, m);
    if (!r) return ctx.Fail(r.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*r));
    std::cout << "seq " << r->seq << ", message " << r->message_id << "\n";
    for (const Resource& res : r->resources) PrintResource("stored", res);
  });
}

void AddShow(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    int64_t from = 1, limit = -1, last = -1;
    bool data_uris = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("show", "Print a session's messages");
  cmd->add_option("SESSION", args->session, "Session id")->required();
  auto* from = cmd->add_option("--from", args->from, "First seq to show");
  cmd->add_option("--limit", args->limit, "At most this many messages");
  cmd->add_option("--last", args->last, "Only the last N messages")->excludes(from);
  cmd->add_flag("--data-uris", args->data_uris, "With --json: inline each image as a data URI");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    auto session = store->GetSession(args->session);
    if (!session) return ctx.Fail(session.error());
    auto messages = args->last >= 0 ? store->ReadLastMessages(args->session, args->last)
                                    : store->ReadMessages(args->session, args->from, args->limit);
    if (!messages) return ctx.Fail(messages.error());
    if (!ctx.options.json) {
      std::cout << session->title << "  (" << session->id << ", " << session->message_count
                << " messages" << (session->archived ? ", archived" : "") << ")\n\n";
      for (const Message& m : *messages) PrintMessage(m);
      return;
    }
    json out = json::array();
    for (const Message& m : *messages) {
      json jm = ToJson(m);
      for (size_t i = 0; args->data_uris && i < m.parts.size(); ++i) {
        const Part& p = m.parts[i];
        if (p.type != PartType::kImage || !p.resource || p.resource->missing) continue;
        auto uri = store->ReadDataUri(*p.resource);
        if (uri) jm["parts"][i]["data_uri"] = *uri;
      }
      out.push_back(std::move(jm));
    }
    ctx.PrintJson({{"session", ToJson(*session)}, {"messages", out}});
  });
}

}  // namespace

void AddMessageCommands(CLI::App& app, CliContext& ctx) {
  AddAppend(app, ctx);
  AddShow(app, ctx);
}

}  // namespace sessiondb::cli
