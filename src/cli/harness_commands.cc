// Verbs for agent harnesses: fork, events, compact, prune, rewind, view,
// usage, drafts, project.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "api/json_forms.h"
#include "cli/checkpoint_commands.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/numeric_options.h"
#include "cli/session_ref.h"
#include "core/text_rules.h"
#include "sessiondb/projection.h"

namespace sessiondb::cli {
namespace {

constexpr size_t kSummaryPreviewChars = 120;

std::string Plural(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

void PrintEventLine(const Event& e) {
  std::cout << "#" << e.seq << "  " << FormatTime(e.ts_ms, true) << "  ";
  switch (e.type) {
    case EventType::kMessage: {
      const Message& m = e.message;
      std::cout << RoleName(m.role);
      if (m.pruned) {
        std::cout << "  (pruned)";
      } else {
        std::cout << "  " << Shorten(m.Text(), kSummaryPreviewChars);
        int attachments = 0;
        for (const Part& p : m.parts) attachments += p.resource.has_value();
        if (attachments > 0) std::cout << "  [" << Plural(attachments, "attachment") << "]";
      }
      break;
    }
    case EventType::kResourceView:
      std::cout << "resource_view  " << e.resource_view.resource_id << " (from #"
                << e.resource_view.message_seq << ")";
      if (!e.resource_view.reason.empty()) std::cout << "  \"" << e.resource_view.reason << "\"";
      if (e.resource_view.resource.missing) std::cout << "  MISSING";
      break;
    case EventType::kCompaction:
      std::cout << "compaction  of #" << e.compaction.from_seq << "..#" << e.compaction.to_seq
                << "  " << Shorten(e.compaction.summary, kSummaryPreviewChars);
      if (!e.compaction.images.empty()) {
        std::cout << "  [replaces " << Plural(std::ssize(e.compaction.images), "image") << "]";
      }
      break;
    case EventType::kRewind:
      std::cout << "rewind  to #" << e.rewind.to_seq;
      break;
  }
  std::cout << "\n";
}

void AddFork(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string parent, id, title;
    int64_t at = -1;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "fork", "Start a session from another's history up to a seq (nothing is copied)");
  cmd->add_option("SESSION", args->parent, kSessionArgHelp)->required();
  cmd->add_option("--at", args->at, "Last seq the fork inherits (default: the whole log; 0: none)")
      ->check(NumberIn(0, kMaxCount))
      ->option_text("SEQ");
  cmd->add_option("--id", args->id, "Id for the fork (default: a new UUIDv7)");
  cmd->add_option("--title", args->title, "Title (default: the inherited one)");
  cmd->footer(
      "\nExamples:\n  sessiondb fork SID --at 12 --title \"Try the other fix\"\n"
      "  NEW=$(sessiondb fork SID)");
  cmd->callback([&ctx, args] {
    const std::optional<std::string> parent_id = ctx.SessionId(args->parent);
    if (!parent_id) return;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    int64_t at = args->at;
    if (at < 0) {
      auto parent = store->GetSession(*parent_id);
      if (!parent) return ctx.Fail(parent.error());
      at = parent->last_seq;
    }
    auto fork = store->ForkSession(*parent_id, at, {.id = args->id, .title = args->title});
    if (!fork) return ctx.Fail(fork.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*fork));
    std::cout << fork->id << "\n";
  });
}

void AddEvents(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    int64_t from = 1, limit = -1;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "events", "Print a session's whole log: messages, resource views, compactions and rewinds");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  cmd->add_option("--from", args->from, "First seq")
      ->check(NumberIn(1, kMaxCount))
      ->option_text("SEQ");
  cmd->add_option("--limit", args->limit, "At most N events")
      ->check(NumberIn(0, kMaxCount))
      ->option_text("N");
  cmd->footer("\nExample:\n  sessiondb events SID --from 100 --limit 20 --json");
  cmd->callback([&ctx, args] {
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    auto events =
        ctx.OpenStore(/*create_if_missing=*/false)->ReadEvents(*id, args->from, args->limit);
    if (!events) return ctx.Fail(events.error());
    ctx.StartPager();
    if (ctx.options.json) {
      Json out = Json::array();
      for (const Event& e : *events) out.push_back(ToJson(e));
      return ctx.PrintJson({{"events", std::move(out)}});
    }
    for (const Event& e : *events) PrintEventLine(e);
  });
}

// The text of --summary, --summary-file or stdin.
Result<std::string> SummaryText(const std::string& summary, const std::string& file) {
  if (!summary.empty()) return summary;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Err(Status::NotFound("cannot read summary file " + file));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  if (!isatty(STDIN_FILENO)) return std::string(std::istreambuf_iterator<char>(std::cin), {});
  return Err(Status::InvalidArgument(
      "a compaction needs its summary: --summary TEXT, --summary-file FILE, or pipe it on stdin"));
}

void PrintPrune(const PruneReport& r) {
  std::cout << "pruned " << Plural(r.events_pruned, "message") << ", deleted "
            << Plural(r.blobs_deleted, "blob") << " (" << FormatBytes(r.bytes_freed) << ")\n";
}

void AddCompact(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session, summary, summary_file, strategy, model, limitations;
    int64_t from = 0, to = 0;
    bool prune = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "compact", "Record a summary that stands in for a range of events in projections");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  cmd->add_option("--from", args->from, "First seq the summary covers")
      ->required()
      ->check(NumberIn(1, kMaxCount))
      ->option_text("SEQ");
  cmd->add_option("--to", args->to, "Last seq it covers")
      ->required()
      ->check(NumberIn(1, kMaxCount))
      ->option_text("SEQ");
  auto* summary = cmd->add_option("--summary", args->summary, "The summary text");
  cmd->add_option("--summary-file", args->summary_file, "Read the summary from a file")
      ->excludes(summary)
      ->option_text("FILE");
  cmd->add_option("--strategy", args->strategy, "How it was made, e.g. llm-summary");
  cmd->add_option("--model", args->model, "The model that wrote it");
  cmd->add_option("--limitations", args->limitations, "What the summary cannot tell");
  cmd->add_flag("--prune", args->prune,
                "Then erase the covered messages' text and their unshared blobs (see `prune`)");
  cmd->footer(
      "\nExamples:\n  sessiondb compact SID --from 1 --to 900 --summary-file s.md "
      "--model gpt-5 --strategy llm-summary\n"
      "  summarize.sh | sessiondb compact SID --from 1 --to 900 --prune");
  cmd->callback([&ctx, args] {
    auto text = SummaryText(args->summary, args->summary_file);
    if (!text) return ctx.Fail(text.error());
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    auto event = store->Compact(*id, {.from_seq = args->from,
                                      .to_seq = args->to,
                                      .summary = *text,
                                      .strategy = args->strategy,
                                      .model = args->model,
                                      .limitations = args->limitations});
    if (!event) return ctx.Fail(event.error());
    std::optional<PruneReport> pruned;
    if (args->prune) {
      auto r = store->PruneCompaction(*id, event->seq);
      if (!r) return ctx.Fail(r.error());
      pruned = *r;
    }
    if (ctx.options.json) {
      Json out = ToJson(*event);
      if (pruned) out["pruned"] = ToJson(*pruned);
      return ctx.PrintJson(out);
    }
    std::cout << "compaction #" << event->seq << " stands in for #" << args->from << "..#"
              << args->to << "\n";
    if (!event->compaction.images.empty()) {
      std::cout << "limitations: " << event->compaction.limitations << "\n";
    }
    if (pruned) PrintPrune(*pruned);
  });
}

void AddPrune(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    int64_t seq = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "prune",
      "Erase the text and unshared blobs of the messages a compaction covers (irreversible)");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  cmd->add_option("SEQ", args->seq, "Seq of the compaction event (see `sessiondb events`)")
      ->required()
      ->check(NumberIn(1, kMaxCount));
  cmd->footer(
      "\nThe messages stay in the log as pruned stubs (role, id, time); events a fork\n"
      "inherited from its parent are the parent's and are not touched.\n"
      "\nExample:\n  sessiondb prune SID 901");
  cmd->callback([&ctx, args] {
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    auto r = ctx.OpenStore(/*create_if_missing=*/false)->PruneCompaction(*id, args->seq);
    if (!r) return ctx.Fail(r.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*r));
    PrintPrune(*r);
  });
}

void AddRewind(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    int64_t to = -1;
    bool code = false, code_only = false, conversation_only = false;
    bool dry_run = false, force = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "rewind", "End a session's view at a seq (and, with --code, restore its agent's files)");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  // CLI11 refuses a SEQ that is negative or not a number before the store
  // is opened; one past the end is the store's to refuse (kInvalidArgument).
  cmd->add_option("--to", args->to, "Last seq left in the view (0: none; see `sessiondb events`)")
      ->required()
      ->check(NumberIn(0, kMaxCount))
      ->option_text("SEQ");
  auto* code = cmd->add_flag("--code", args->code,
                             "Also restore the files the agent wrote after SEQ (then the "
                             "conversation)");
  auto* code_only =
      cmd->add_flag("--code-only", args->code_only, "Restore the files only; the view stays");
  auto* conversation_only = cmd->add_flag("--conversation-only", args->conversation_only,
                                          "Rewind the conversation only (the default)");
  code->excludes(code_only)->excludes(conversation_only);
  code_only->excludes(conversation_only);
  cmd->add_flag("--dry-run", args->dry_run,
                "Print what would happen, with each file's diff; change nothing");
  cmd->add_flag("--force", args->force,
                "Overwrite files changed since the agent's last write (--code, --code-only)");
  cmd->footer(
      "\nMessages after SEQ leave the session's view: `show`, `tail`, projections,\n"
      "exports and the faces no longer see them, and messages appended later follow\n"
      "SEQ. The log keeps everything, with the rewind as an event of its own.\n"
      "\nWith --code, each file the session's agent wrote after SEQ goes back to what it\n"
      "was at SEQ (a file it created is removed), then the conversation is rewound.\n"
      "A file changed since the agent's last write (by someone else) is a conflict:\n"
      "without --force nothing at all is changed. Paths through a symbolic link are\n"
      "refused. See `sessiondb file-history` and docs/memory.md.\n"
      "\nExamples:\n  sessiondb rewind SID --to 12\n  sessiondb rewind SID --to 0 --json\n"
      "  sessiondb rewind SID --to 12 --code --dry-run");
  cmd->callback([&ctx, args] {
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    if (args->code || args->code_only) {
      return RunCodeRewind(ctx, {.session_id = *id,
                                 .to_seq = args->to,
                                 .scope = args->code ? RewindScope::kCode : RewindScope::kCodeOnly,
                                 .dry_run = args->dry_run,
                                 .force = args->force});
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (args->dry_run) {
      auto session = store->GetSession(*id);
      if (!session) return ctx.Fail(session.error());
      if (args->to > session->last_seq) {
        return ctx.Fail(Status::InvalidArgument(
            "seq " + std::to_string(args->to) + " is outside 0.." +
            std::to_string(session->last_seq) + " of session " + session->id));
      }
      if (ctx.options.json) {
        return ctx.PrintJson({{"session_id", session->id},
                              {"to_seq", args->to},
                              {"scope", "conversation"},
                              {"dry_run", true}});
      }
      std::cout << "conversation: the view of " << session->id << " would end at #" << args->to
                << "\n";
      return;
    }
    auto event = store->Rewind(*id, args->to);
    if (!event) return ctx.Fail(event.error());
    auto session = store->GetSession(*id);
    if (!session) return ctx.Fail(session.error());
    if (ctx.options.json) {
      return ctx.PrintJson({{"event", ToJson(*event)}, {"session", ToJson(*session)}});
    }
    std::cout << "rewind #" << event->seq << ": the view of " << session->id << " ends at #"
              << args->to << " (" << Plural(session->message_count, "message") << ")\n";
  });
}

void AddView(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session, resource, reason;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "view", "Record a resource view: the next projection sends that resource in full, once");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  cmd->add_option("RESOURCE", args->resource, "Resource id (res_...)")->required();
  cmd->add_option("--reason", args->reason, "Why it is viewed again");
  cmd->footer(
      "\nExample:\n  sessiondb view SID res_0192... --reason \"compare with the new screenshot\"");
  cmd->callback([&ctx, args] {
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    auto e = ctx.OpenStore(/*create_if_missing=*/false)
                 ->RecordResourceView(*id, args->resource, args->reason);
    if (!e) return ctx.Fail(e.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*e));
    PrintEventLine(*e);
  });
}

void AddDrafts(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session, finish, discard;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "drafts", "List a session's unfinished drafts (streamed output a writer never finished)");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  auto* finish =
      cmd->add_option("--finish", args->finish, "Append this draft as a message, as it is")
          ->option_text("DRAFT");
  cmd->add_option("--discard", args->discard, "Delete this draft")
      ->excludes(finish)
      ->option_text("DRAFT");
  cmd->footer("\nExamples:\n  sessiondb drafts SID\n  sessiondb drafts SID --finish draft_0192...");
  cmd->callback([&ctx, args] {
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!args->finish.empty()) {
      auto r = store->FinishDraft(args->finish, {});
      if (!r) return ctx.Fail(r.error());
      if (ctx.options.json) return ctx.PrintJson(ToJson(*r));
      std::cout << "seq " << r->seq << ", message " << r->message_id << "\n";
      return;
    }
    if (!args->discard.empty()) {
      if (Status s = store->DiscardDraft(args->discard); !s.ok()) return ctx.Fail(s);
      if (ctx.options.json) return ctx.PrintJson({{"discarded", args->discard}});
      std::cout << "discarded " << args->discard << "\n";
      return;
    }
    auto drafts = store->ListDrafts(*id);
    if (!drafts) return ctx.Fail(drafts.error());
    ctx.StartPager();
    if (ctx.options.json) {
      Json out = Json::array();
      for (const Draft& d : *drafts) out.push_back(ToJson(d));
      return ctx.PrintJson({{"drafts", std::move(out)}});
    }
    if (drafts->empty()) {
      std::cout << "No unfinished drafts.\n";
      return;
    }
    for (const Draft& d : *drafts) {
      std::cout << d.id << "  " << RoleName(d.role) << "  saved " << FormatTime(d.updated_ms, true)
                << "  incomplete, " << FormatBytes(std::ssize(d.text)) << "\n    "
                << Shorten(d.text, kSummaryPreviewChars) << "\n";
    }
  });
}

void AddProject(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session, format = "openai-chat";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "project", "Print the provider request messages for a session, built from its log");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  OfferValues(cmd->add_option("--format", args->format,
                              "openai-chat (default), openai-responses or anthropic"),
              {"openai-chat", "openai-responses", "anthropic"})
      ->option_text("FORMAT");
  cmd->footer(
      "\nImages go in full on the newest user turn and after a `view`, as descriptors\n"
      "otherwise; compactions stand in for what they cover. Add the model and the\n"
      "parameters yourself.\n"
      "\nExamples:\n  sessiondb project SID --format anthropic\n"
      "  sessiondb project SID | jq '.messages | length'");
  cmd->callback([&ctx, args] {
    auto format = ParseProviderFormat(args->format);
    if (!format) return ctx.Fail(format.error());
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    auto body =
        ProjectSession(*ctx.OpenStore(/*create_if_missing=*/false), *id, {.format = *format});
    if (!body) return ctx.Fail(body.error());
    ctx.StartPager();
    // Already JSON, with or without --json: print it as it is.
    std::cout << *body << "\n";
  });
}

}  // namespace

void AddHarnessCommands(CLI::App& app, CliContext& ctx) {
  AddFork(app, ctx);
  AddEvents(app, ctx);
  AddCompact(app, ctx);
  AddPrune(app, ctx);
  AddRewind(app, ctx);
  AddView(app, ctx);
  AddDrafts(app, ctx);
  AddProject(app, ctx);
}

}  // namespace sessiondb::cli
