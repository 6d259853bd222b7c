// `sessiondb demo`: the demo sessions `serve --demo` seeds (marked with
// "demo": true in their metadata), listed, or removed once real history is in
// the store. Only marked sessions are ever touched.
#include <iostream>
#include <memory>
#include <string>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "server/demo_history.h"

namespace sessiondb::cli {

void AddDemoCommand(CLI::App& app, CliContext& ctx) {
  auto remove = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "demo", "List the demo sessions `serve --demo` seeded, or remove them (--remove)");
  cmd->add_flag("--remove", *remove,
                "Delete every demo session (marked \"demo\": true) and nothing else");
  cmd->footer(
      "\n`serve --demo` seeds a demo history only into a store with no sessions at all, and\n"
      "marks each of its sessions with \"demo\": true in the metadata.\n"
      "\nExamples:\n  sessiondb demo\n  sessiondb demo --remove");
  cmd->callback([&ctx, remove] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    if (*remove) {
      auto removed = server::RemoveDemoHistory(*store);
      if (!removed) return ctx.Fail(removed.error());
      if (ctx.options.json) return ctx.PrintJson({{"removed", *removed}});
      std::cout << "removed " << *removed << " demo session" << (*removed == 1 ? "" : "s") << "\n";
      return;
    }
    auto demo = server::ListDemoSessions(*store);
    if (!demo) return ctx.Fail(demo.error());
    if (ctx.options.json) {
      Json out = Json::array();
      for (const Session& s : *demo) out.push_back(ToJson(s));
      return ctx.PrintJson(out);
    }
    if (demo->empty()) {
      std::cout << "no demo sessions\n";
      return;
    }
    Table t({"ID", "TITLE"});
    for (const Session& s : *demo) t.AddRow({s.id, s.title});
    t.Print(std::cout);
  });
}

}  // namespace sessiondb::cli
