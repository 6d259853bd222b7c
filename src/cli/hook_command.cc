#include "cli/hook_command.h"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "cli/hook_server.h"
#include "cli/output.h"
#include "cli/shell_words.h"
#include "sessiondb/memory.h"
#include "sessiondb/store.h"

namespace sessiondb::cli {

Status OpenHookStore(CliContext& ctx, std::unique_ptr<Store>* store,
                     std::unique_ptr<CodeMemory>* memory) {
  // A hook must not fail the agent: a missing store is created.
  const std::string path = ctx.StorePath();
  StoreOptions options = ctx.MakeStoreOptions(/*create_if_missing=*/true);
  // The hook writes no event: its writes (code writes, seen keys, file
  // versions) survive the hook being killed, not a power loss, like the
  // index's own connection they go through (docs/memory.md). Durable mode
  // would add the fsync of the blob folder an embedded store's open does,
  // and one per checkpoint, on every call before and after each write.
  if (!IsDatabaseUri(path)) options.durability = Durability::kProcessCrashSafe;
  auto opened = Store::Open(path, options).and_then([store](std::unique_ptr<Store> s) {
    *store = std::move(s);
    // One thread uses both: the memory reads and writes on the store's
    // connection, so the schema is read once (a tenth of the call's CPU).
    return CodeMemory::Open(**store, {.share_store_connection = true});
  });
  if (!opened) {
    return Status(opened.error().code(),
                  "cannot open the store at " + path + ": " + opened.error().message());
  }
  *memory = std::move(*opened);
  return Status::Ok();
}

namespace {

// Prints an answer as the hook does: stdout for the agent, the log on
// stderr unless $SESSIONDB_HOOK_QUIET is set.
void PrintAnswer(const HookAnswer& answer) {
  std::cout << answer.stdout_text << std::flush;
  if (!answer.log.empty() && std::getenv("SESSIONDB_HOOK_QUIET") == nullptr) {
    std::cerr << answer.log << "\n";
  }
}

}  // namespace

void RunClaudeCodeHook(CliContext& ctx, std::string_view seen_mode, bool leave_store_open,
                       bool checkpoints, bool resident) {
  ctx.set_exit_code(kExitOk);  // whatever happens: a hook never fails the agent
  std::string too_big;
  const std::optional<std::string> event = ReadHookEvent(std::cin, &too_big);
  if (!event) {  // never buffered whole; the call goes on, as on any error
    std::cerr << "hook: " << too_big << "; allowed\n";
    return;
  }
  // A resident server of this store answers first (hook_server.h); without
  // one, the call is answered here.
  std::string log;
  Result<HookServerPlace> place = HookServerPlaceFor(ctx, /*make_folder=*/false);
  if (place) {
    HookAnswer answer;
    std::string why;
    const HookServerReply reply = AskHookServer(
        *place, {.seen_mode = std::string(seen_mode), .checkpoints = checkpoints, .event = *event},
        &answer, &why);
    if (reply == HookServerReply::kAnswered) return PrintAnswer(answer);
    if (reply == HookServerReply::kLostAfterSending) {
      std::cerr << why << "\n";
      return;
    }
    if (!why.empty()) log = "hook: " + why + "\n";
  }
  std::unique_ptr<Store> store;  // before memory: it must outlive it
  std::unique_ptr<CodeMemory> memory;
  auto seen = ParseSeenKeyMode(seen_mode);
  if (!seen) {
    log += "hook: " + seen.error().message() + "; using content";
  }
  const Status opened = OpenHookStore(ctx, &store, &memory);
  if (!opened.ok()) {
    if (!log.empty() && log.back() != '\n') log += "\n";
    log += "hook: " + opened.message();
  }
  // Checkpoints need the store itself, opened even when its code memory
  // could not be.
  HookAnswer answer =
      HandleClaudeCodeHook(*event, memory.get(), seen ? *seen : SeenKeyMode::kContent,
                           checkpoints ? store.get() : nullptr);
  if (!log.empty()) std::cerr << log << (log.back() == '\n' ? "" : "\n");
  PrintAnswer(answer);
  // Started after this call's answer: the store exists by then, and the
  // agent's next call finds the server (or this one's twin, started by a
  // call at the same moment: the second server exits).
  if (resident && opened.ok()) {
    if (!place && place.error().code() != StatusCode::kNotFound) {
      std::cerr << "hook: no resident server: " << place.error().message() << "\n";
    } else {
      StartHookServer(ctx);
    }
  }
  if (!leave_store_open) return;  // closed here, memory first
  // The fast path's process ends after this with _Exit. Closing the last
  // connection of an embedded store would checkpoint its WAL into the
  // database on every call; left to the process's end (as a kill would
  // leave them), the WAL is checkpointed by the first commit of the call
  // that finds it past 64 pages (WalCheckpointer::kInheritedFrames), once
  // per many calls.
  (void)memory.release();
  (void)store.release();
}

namespace {

enum class Taken {
  kNo,       // the word is not this option
  kYes,      // taken
  kRefused,  // it is, but left to CLI11: repeated, or no plain value
};

// Takes the value of option `name` at argv[*i] ("--name VALUE" or
// "--name=VALUE") into *value, moving *i past it.
Taken TakeValue(int argc, char** argv, int* i, std::string_view name,
                std::optional<std::string>* value) {
  const std::string_view arg = argv[*i];
  if (arg.substr(0, name.size()) != name) return Taken::kNo;
  std::string_view rest = arg.substr(name.size());
  if (!rest.empty() && rest[0] != '=') return Taken::kNo;
  if (value->has_value()) return Taken::kRefused;  // repeated: CLI11's rules, not ours
  std::string_view given;
  if (!rest.empty()) {
    given = rest.substr(1);
  } else {
    if (*i + 1 >= argc) return Taken::kRefused;
    given = argv[*i + 1];
  }
  // An empty value, or one that looks like an option: how CLI11 reads it is its own.
  if (given.empty() || given[0] == '-') return Taken::kRefused;
  if (rest.empty()) ++*i;
  *value = std::string(given);
  return Taken::kYes;
}

}  // namespace

std::optional<int> RunHookFastPath(int argc, char** argv) {
  std::optional<std::string> store, name_space, seen;
  bool json = false, fast = false, no_pager = false, no_checkpoints = false, resident = false;
  int verbs = 0;  // 1 after `hook`, 2 after `claude-code`
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.empty()) return std::nullopt;
    if (arg[0] != '-') {
      if (verbs == 0 && arg == "hook") {
        verbs = 1;
      } else if (verbs == 1 && arg == "claude-code") {
        verbs = 2;
      } else {
        return std::nullopt;
      }
      continue;
    }
    // Global options before `hook` or after `claude-code` (CLI11's fallthrough).
    if (verbs == 1) return std::nullopt;
    Taken taken = TakeValue(argc, argv, &i, "--store", &store);
    if (taken == Taken::kNo) taken = TakeValue(argc, argv, &i, "--namespace", &name_space);
    // --seen is claude-code's own option: CLI11 takes it only after the verb.
    if (taken == Taken::kNo && verbs == 2) taken = TakeValue(argc, argv, &i, "--seen", &seen);
    if (taken == Taken::kRefused) return std::nullopt;
    if (taken == Taken::kYes) continue;
    bool* flag = arg == "--json"       ? &json
                 : arg == "--fast"     ? &fast
                 : arg == "--no-pager" ? &no_pager
                 // claude-code's own flag, like --seen: only after the verb.
                 : arg == "--no-checkpoints" && verbs == 2 ? &no_checkpoints
                 : arg == "--resident" && verbs == 2       ? &resident
                                                           : nullptr;
    if (flag == nullptr || *flag) return std::nullopt;  // another option, or a repeated flag
    *flag = true;
  }
  if (verbs != 2) return std::nullopt;
  CliContext ctx;
  ctx.options.store = store.value_or("");
  ctx.options.namespace_name = name_space.value_or("");
  ctx.options.json = json;
  ctx.options.fast = fast;
  ctx.options.no_pager = no_pager;
  RunClaudeCodeHook(ctx, seen.value_or("content"), /*leave_store_open=*/true, !no_checkpoints,
                    resident);
  return ctx.ExitCodeAfterFlush();
}

}  // namespace sessiondb::cli
