// Verbs over code checkpoints (include/sessiondb/code_checkpoints.h,
// docs/memory.md): file-history, restore, blame, and the code half of
// `rewind` (--code, --code-only; checkpoint_commands.h). The rules are the
// library's; this file reads the command line and prints.
#include "cli/checkpoint_commands.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/numeric_options.h"
#include "core/iso_time.h"
#include "sessiondb/code_checkpoints.h"

namespace sessiondb::cli {
namespace {

constexpr size_t kDiffLines = 400;

// `typed` absolute and normal against the working folder.
std::string FileArgument(const std::string& typed) {
  std::error_code error;
  const std::filesystem::path cwd = std::filesystem::current_path(error);
  return CheckpointFilePath(typed, error ? std::string() : cwd.string());
}

bool Writes(const FileRestore& f) {
  return f.action == FileRestoreAction::kRestore || f.action == FileRestoreAction::kRemove;
}

// One line per file: what happened to it (or would, with `dry_run`).
void PrintFileRestore(const FileRestore& f, bool dry_run, bool force) {
  if (!f.refused.empty() && Writes(f)) {
    std::cout << "refused    " << f.file_path << ": " << f.refused << "\n";
    return;
  }
  if (!f.conflict.empty() && !force) {
    std::cout << "conflict   " << f.file_path << ": " << f.conflict << "\n";
    return;
  }
  const std::string overwrite = f.conflict.empty() ? "" : "; overwrites a change: " + f.conflict;
  switch (f.action) {
    case FileRestoreAction::kRestore:
      std::cout << (dry_run ? "would restore " : (f.done ? "restored   " : "not restored "))
                << f.file_path << " (version id " << f.version_id << overwrite << ")\n";
      break;
    case FileRestoreAction::kRemove:
      std::cout << (dry_run ? "would remove " : (f.done ? "removed    " : "not removed "))
                << f.file_path << " (no file before the agent wrote it" << overwrite << ")\n";
      break;
    case FileRestoreAction::kUnchanged:
      std::cout << "unchanged  " << f.file_path << "\n";
      break;
    case FileRestoreAction::kUnknown:
      std::cout << "unknown    " << f.file_path
                << ": no recorded version says what it was; left as it is\n";
      break;
  }
}

// Fails with `status`, after the files: on stdout as lines, or as one JSON
// document holding both the files and the error.
void FailWithFiles(CliContext& ctx, const Status& status, const std::vector<FileRestore>& files,
                   Json doc, bool dry_run, bool force) {
  if (!ctx.options.json) {
    for (const FileRestore& f : files) PrintFileRestore(f, dry_run, force);
    return ctx.Fail(status);
  }
  Json list = Json::array();
  for (const FileRestore& f : files) list.push_back(ToJson(f, dry_run, kDiffLines));
  doc["files"] = std::move(list);
  doc["error"] = {{"code", StatusCodeName(status.code())}, {"message", status.message()}};
  std::cerr << "sessiondb: error: " << EscapeForTerminal(status.message()) << "\n";
  ctx.PrintJson(doc);
  ctx.set_exit_code(ExitCodeFor(status.code()));
}

// Records what was just written (RecordFileRestores); a failure there is a
// warning: the files are written, only their record is missing.
void RecordWrites(Store& store, const std::vector<FileRestore>& files,
                  const std::string& agent_session, std::string_view tool) {
  const Status recorded = RecordFileRestores(store, files, agent_session, tool);
  if (!recorded.ok()) {
    std::cerr << "sessiondb: warning: the files are written but not recorded as versions: "
              << EscapeForTerminal(recorded.message()) << "\n";
  }
}

// A restore of one file (the `restore` verb): printed, or written then printed.
void RunRestore(CliContext& ctx, const std::string& path, int64_t number, bool dry_run,
                bool force) {
  Store* store = ctx.OpenStore(/*create_if_missing=*/false);
  if (!store) return;
  auto planned = PlanFileRestore(*store, path, number);
  if (!planned) return ctx.Fail(planned.error());
  std::vector<FileRestore> files = {std::move(*planned)};
  Json doc = {{"path", path}, {"version", number}, {"dry_run", dry_run}};
  Status status = CheckFileRestores(files, force);
  if (status.ok() && !dry_run) status = ApplyFileRestores(files, force);
  if (!dry_run && files[0].done) {
    // Under the agent session of the version written back.
    auto versions = ReadFileHistory(*store, path, /*with_diffs=*/false);
    if (versions && number <= std::ssize(*versions)) {
      RecordWrites(*store, files, (*versions)[number - 1].placed.version.agent_session, "restore");
    }
  }
  if (!status.ok()) return FailWithFiles(ctx, status, files, std::move(doc), dry_run, force);
  if (ctx.options.json) {
    doc["file"] = ToJson(files[0], dry_run, kDiffLines);
    return ctx.PrintJson(doc);
  }
  PrintFileRestore(files[0], dry_run, force);
  if (dry_run) std::cout << FileRestoreDiff(files[0], kDiffLines);
}

void AddFileHistory(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string path;
    bool no_diff = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "file-history", "Every version of a file the agents wrote, across sessions, with diffs");
  cmd->add_option("PATH", args->path, "The file (relative to the working folder, or absolute)")
      ->required();
  cmd->add_flag("--no-diff", args->no_diff, "Leave out each version's diff");
  cmd->footer(
      "\nEach version an agent's tool call left (\"after\"), numbered 1..N in the order\n"
      "recorded, with its time, session and seq, tool, size, the prompt that led to it\n"
      "(the last user message at or before its seq) and the diff from the version\n"
      "before (at most 400 lines). `sessiondb restore PATH --version N` writes one back.\n"
      "\nExamples:\n  sessiondb file-history src/app.py\n"
      "  sessiondb file-history /home/dev/app/src/app.py --no-diff --json");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    const std::string path = FileArgument(args->path);
    auto history = ReadFileHistory(*store, path, !args->no_diff, kDiffLines);
    if (!history) return ctx.Fail(history.error());
    if (ctx.options.json) {
      Json versions = Json::array();
      for (const FileHistoryEntry& e : *history) versions.push_back(ToJson(e, !args->no_diff));
      return ctx.PrintJson({{"path", path}, {"versions", std::move(versions)}});
    }
    if (history->empty()) {
      std::cout << "no recorded versions of " << path << "\n";
      return;
    }
    ctx.StartPager();
    std::cout << path << ": " << history->size()
              << (history->size() == 1 ? " version\n" : " versions\n");
    for (const FileHistoryEntry& e : *history) {
      const PlacedFileVersion& p = e.placed;
      std::cout << "\nversion " << e.number << "  " << FormatTime(p.version.time_ms, true) << "  ";
      if (p.session_id.empty()) {
        std::cout << "agent session " << p.version.agent_session;
      } else {
        std::cout << "session " << p.session_id << " #" << p.seq;
      }
      std::cout << "  " << (p.version.tool.empty() ? "?" : p.version.tool);
      if (!p.version.source.empty()) std::cout << " (" << p.version.source << ")";
      std::cout << "  " << (p.version.exists ? FormatBytes(p.version.size) : "no file") << "\n";
      if (!e.prompt.empty()) std::cout << "  prompt: " << Shorten(e.prompt, 200) << "\n";
      std::cout << e.diff;
    }
  });
}

void AddRestore(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string path;
    int64_t version = 0;
    bool dry_run = false, force = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("restore", "Write a recorded version of a file back");
  cmd->add_option("PATH", args->path, "The file (relative to the working folder, or absolute)")
      ->required();
  cmd->add_option("--version", args->version, "The version, as `sessiondb file-history` numbers it")
      ->required()
      ->check(NumberIn(1, kMaxCount))
      ->option_text("N");
  cmd->add_flag("--dry-run", args->dry_run, "Show what would change (a diff); change nothing");
  cmd->add_flag("--force", args->force,
                "Overwrite the file even when it changed since the last recorded write");
  cmd->footer(
      "\nThe file is written atomically (a temporary file renamed over it), keeping its\n"
      "permissions; a version that is \"no file\" removes it. A file that is not what the\n"
      "last recorded write left (someone changed it since) is left alone unless --force.\n"
      "Paths through a symbolic link are refused.\n"
      "\nExamples:\n  sessiondb restore src/app.py --version 3 --dry-run\n"
      "  sessiondb restore src/app.py --version 3 --force");
  cmd->callback([&ctx, args] {
    RunRestore(ctx, FileArgument(args->path), args->version, args->dry_run, args->force);
  });
}

void AddBlame(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string path;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "blame", "Each line of a file with the agent's tool call that last wrote it");
  cmd->add_option("PATH", args->path, "The file (relative to the working folder, or absolute)")
      ->required();
  cmd->footer(
      "\nEach line shows the session and seq of the tool call that last wrote it, and the\n"
      "tool, or \"(not an agent)\" for a line written outside any recorded call (by hand,\n"
      "or before the recording began).\n"
      "\nExamples:\n  sessiondb blame src/app.py\n  sessiondb blame src/app.py --json");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    const std::string path = FileArgument(args->path);
    auto lines = BlameFile(*store, path);
    if (!lines) return ctx.Fail(lines.error());
    if (ctx.options.json) {
      Json out = Json::array();
      for (const BlameLine& l : *lines) out.push_back(ToJson(l));
      return ctx.PrintJson({{"path", path}, {"lines", std::move(out)}});
    }
    std::vector<std::string> left;
    size_t width = 0;
    for (const BlameLine& l : *lines) {
      std::string who = "(not an agent)";
      if (l.by) {
        const PlacedFileVersion& p = *l.by;
        const std::string& id = p.session_id.empty() ? p.version.agent_session : p.session_id;
        who = id.substr(0, 8) + (p.session_id.empty() ? "" : " #" + std::to_string(p.seq)) + "  " +
              (p.version.tool.empty() ? "?" : p.version.tool);
      }
      width = std::max(width, who.size());
      left.push_back(std::move(who));
    }
    ctx.StartPager();
    for (size_t i = 0; i < lines->size(); ++i) {
      left[i].resize(width, ' ');
      std::cout << left[i] << " | " << (*lines)[i].text << "\n";
    }
  });
}

}  // namespace

void RunCodeRewind(CliContext& ctx, const RewindRequest& request) {
  Store* store = ctx.OpenStore(/*create_if_missing=*/false);
  if (!store) return;
  auto plan = PlanCodeRewind(*store, request.session_id, request.to_seq);
  if (!plan) return ctx.Fail(plan.error());
  const bool conversation = request.scope == RewindScope::kCode;
  Json doc = {{"session_id", plan->session_id},
              {"to_seq", plan->to_seq},
              {"scope", conversation ? "code" : "code-only"},
              {"dry_run", request.dry_run},
              {"forced", request.force}};
  Status status = CheckFileRestores(plan->files, request.force);
  if (status.ok() && !request.dry_run) status = ApplyFileRestores(plan->files, request.force);
  if (!request.dry_run) RecordWrites(*store, plan->files, plan->agent_session, "rewind");
  if (!status.ok()) {
    return FailWithFiles(ctx, status, plan->files, std::move(doc), request.dry_run, request.force);
  }
  std::optional<Event> event;
  std::optional<Session> session;
  if (conversation && !request.dry_run) {
    auto rewound = store->Rewind(plan->session_id, plan->to_seq);
    if (!rewound) {
      return FailWithFiles(ctx, rewound.error(), plan->files, std::move(doc), false, request.force);
    }
    event = std::move(*rewound);
    auto read = store->GetSession(plan->session_id);
    if (!read) return ctx.Fail(read.error());
    session = std::move(*read);
  }
  if (ctx.options.json) {
    Json files = Json::array();
    for (const FileRestore& f : plan->files)
      files.push_back(ToJson(f, request.dry_run, kDiffLines));
    doc["files"] = std::move(files);
    if (event) doc["event"] = ToJson(*event);
    if (session) doc["session"] = ToJson(*session);
    return ctx.PrintJson(doc);
  }
  if (request.dry_run) ctx.StartPager();
  if (plan->files.empty()) {
    std::cout << "no file versions of " << plan->session_id << " after #" << plan->to_seq << "\n";
  }
  for (const FileRestore& f : plan->files) {
    PrintFileRestore(f, request.dry_run, request.force);
    if (request.dry_run) std::cout << FileRestoreDiff(f, kDiffLines);
  }
  if (request.dry_run && conversation) {
    std::cout << "conversation: the view of " << plan->session_id << " would end at #"
              << plan->to_seq << "\n";
  }
  if (event && session) {
    std::cout << "rewind #" << event->seq << ": the view of " << session->id << " ends at #"
              << plan->to_seq << " (" << session->message_count
              << (session->message_count == 1 ? " message)\n" : " messages)\n");
  }
}

void AddCheckpointCommands(CLI::App& app, CliContext& ctx) {
  AddFileHistory(app, ctx);
  AddRestore(app, ctx);
  AddBlame(app, ctx);
}

}  // namespace sessiondb::cli
