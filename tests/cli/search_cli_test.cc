// The search, reindex, recall, churn and hook verbs through the real binary.
// The hook tests pipe Claude Code-shaped events through `sessiondb hook
// claude-code` exactly as Claude Code does.
#include <chrono>

#include "cli_fixture.h"
#include "held_write_lock.h"

namespace sessiondb::testing {
namespace {

class SearchCli : public Cli {
 protected:
  // A PreToolUse or PostToolUse event for a Write of `path`.
  std::string WriteEvent(const std::string& event, const std::string& path,
                         const std::string& content) {
    json e = {{"session_id", "cc-session-1"},
              {"transcript_path", dir_.Sub("t.jsonl")},
              {"cwd", "/work/project"},
              {"hook_event_name", event},
              {"tool_name", "Write"},
              {"tool_input", {{"file_path", path}, {"content", content}}}};
    if (event == "PostToolUse") e["tool_response"] = {{"success", true}};
    return e.dump();
  }

  CliRun Hook(const std::string& event_json) {
    return Run({"hook", "claude-code"}, {.input = event_json});
  }
};

// Found from outside (issue 33): while another process held the write lock,
// `sessiondb search` waited 64 s (the busy timeout) and answered 0 hits with
// an empty note. It answers at once as of the index, says what it did not
// see and why, and the next search after the lock is free finds it.
TEST_F(SearchCli, SearchAnswersAtOnceWhileAnotherProcessHoldsTheWriteLock) {
  std::string s = NewSession();
  ASSERT_EQ(Sdb({"append", s, "the first okapi"}).exit_code, 0);
  HeldWriteLock writer(store_, s, "the second okapi");
  ASSERT_TRUE(writer.holding());

  const auto start = std::chrono::steady_clock::now();
  CliRun r = Sdb({"--json", "search", "okapi", "--mode", "keyword"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = r.Json();
  ASSERT_EQ(j["hits"].size(), 1u) << r.out;
  EXPECT_EQ(j["hits"][0]["seq"], 1);
  EXPECT_EQ(j["pending_documents"], 1);
  EXPECT_TRUE(Contains(j["note"].get<std::string>(), "1 document not yet indexed")) << r.out;
  EXPECT_TRUE(Contains(j["note"].get<std::string>(), "write lock")) << r.out;
  CliRun text = Sdb({"search", "okapi", "--mode", "keyword"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Contains(text.out, "1 document not yet indexed")) << text.out;

  EXPECT_EQ(writer.Release(), 0);
  json after = Sdb({"--json", "search", "okapi", "--mode", "keyword"}).Json();
  EXPECT_EQ(after["hits"].size(), 2u);
  EXPECT_EQ(after["pending_documents"], 0);
  EXPECT_EQ(after["note"], "");
}

TEST_F(SearchCli, SearchFindsWithJsonFiltersAndModes) {
  std::string a = NewSession();
  ASSERT_EQ(Sdb({"append", a, "the gyroscope drifts when the token limit is near"}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", a, "--role", "assistant", "recalibrate the gyroscope"}).exit_code, 0);
  std::string b = NewSession();
  ASSERT_EQ(Sdb({"append", b, "nothing to see here"}).exit_code, 0);

  json k = Sdb({"--json", "search", "gyroscope", "--mode", "keyword"}).Json();
  ASSERT_EQ(k["hits"].size(), 2u);
  EXPECT_EQ(k["keyword_matches"], 2);
  for (const auto& h : k["hits"]) {
    EXPECT_EQ(h["session_id"], a);
    auto range = h["highlights"][0];
    EXPECT_EQ(h["snippet"].get<std::string>().substr(
                  range[0], range[1].get<size_t>() - range[0].get<size_t>()),
              "gyroscope");
  }
  json role = Sdb({"--json", "search", "gyroscope", "--role", "assistant"}).Json();
  ASSERT_EQ(role["hits"].size(), 1u);
  EXPECT_EQ(role["hits"][0]["role"], "assistant");
  json none = Sdb({"--json", "search", "gyroscope", "--session", b}).Json();
  EXPECT_TRUE(none["hits"].empty());

  // A search only reads: hybrid on a store nobody embedded says how far
  // behind the vectors are, and leaves them so (a second search sees the
  // same count).
  json before = Sdb({"--json", "search", "gyroscope drifts"}).Json();
  EXPECT_EQ(before["pending_embeddings"], 3);
  EXPECT_EQ(before["hits"][0]["vector_rank"], 0);
  EXPECT_EQ(Sdb({"--json", "search", "gyroscope drifts", "--mode", "vector"})
                .Json()["pending_embeddings"],
            3);

  // After `reindex`, hybrid shows both ranks.
  ASSERT_EQ(Sdb({"reindex"}).exit_code, 0);
  json h = Sdb({"--json", "search", "gyroscope drifts"}).Json();
  ASSERT_FALSE(h["hits"].empty());
  EXPECT_EQ(h["pending_embeddings"], 0);
  EXPECT_EQ(h["hits"][0]["seq"], 1);
  EXPECT_EQ(h["hits"][0]["keyword_rank"], 1);
  EXPECT_GE(h["hits"][0]["vector_rank"].get<int>(), 1);

  CliRun human = Sdb({"search", "gyroscope", "--mode", "keyword"});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_TRUE(Contains(human.out, "**gyroscope**")) << human.out;
  EXPECT_TRUE(Contains(human.out, "2 keyword matches")) << human.out;
}

TEST_F(SearchCli, HostileQueriesExitZeroAndBadFlagsSayWhy) {
  std::string a = NewSession();
  ASSERT_EQ(Sdb({"append", a, "call foo(bar) then a->b"}).exit_code, 0);
  for (const char* q : {"foo(bar)", "a->b", "\"x\"", "\"open", "NEAR(", "-", "***"}) {
    CliRun r = Sdb({"--json", "search", q});
    EXPECT_EQ(r.exit_code, 0) << q << ": " << r.err;
  }
  json code = Sdb({"--json", "search", "foo(bar)", "--mode", "keyword"}).Json();
  EXPECT_EQ(code["hits"].size(), 1u);

  CliRun mode = Sdb({"search", "x", "--mode", "fuzzy"});
  EXPECT_EQ(mode.exit_code, 2);
  EXPECT_TRUE(Contains(mode.err, "--mode is keyword, vector or hybrid")) << mode.err;
  CliRun since = Sdb({"search", "x", "--since", "yesterday"});
  EXPECT_EQ(since.exit_code, 2);
  EXPECT_TRUE(Contains(since.err, "--since takes a date")) << since.err;
}

TEST_F(SearchCli, ReindexLearnsCodeAndEmbeds) {
  std::string a = NewSession();
  ASSERT_EQ(Sdb({"append", a, "hello there"}).exit_code, 0);
  json r = Sdb({"--json", "reindex", "--keyword"}).Json();
  EXPECT_EQ(r["keyword_index"], "rebuilt");
  EXPECT_EQ(r["embedded"], 1);
  EXPECT_EQ(r["embedding_model"], "hash-384-v1");
  EXPECT_EQ(r["vector_index"], "exact scan");
  json again = Sdb({"--json", "reindex"}).Json();
  EXPECT_EQ(again["embedded"], 0);
}

TEST_F(SearchCli, HookDeniesOnceWithContextThenAllowsAndRecordsOnPost) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  const std::string code =
      "def compute_invoice_total(items):\n    return sum(i.price * i.qty for i in items)\n";
  // Post: the first write is kept.
  CliRun post = Hook(WriteEvent("PostToolUse", "/work/project/billing.py", code));
  EXPECT_EQ(post.exit_code, 0) << post.err;
  EXPECT_EQ(post.out, "");
  EXPECT_TRUE(Contains(post.err, "recorded 1 write")) << post.err;

  // Pre for a similar file: denied once, the reason holding the past code.
  const std::string next = "/work/other/invoice.py";
  const std::string similar = "def compute_invoice_total(lines):\n    pass\n";
  CliRun pre = Hook(WriteEvent("PreToolUse", next, similar));
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  json answer = json::parse(pre.out);
  EXPECT_EQ(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
  EXPECT_EQ(answer["hookSpecificOutput"]["permissionDecision"], "deny");
  std::string reason = answer["hookSpecificOutput"]["permissionDecisionReason"];
  EXPECT_TRUE(Contains(reason, "/work/project/billing.py")) << reason;
  EXPECT_TRUE(Contains(reason, "compute_invoice_total")) << reason;

  // The retry of the same write passes silently.
  CliRun retry = Hook(WriteEvent("PreToolUse", next, similar));
  EXPECT_EQ(retry.exit_code, 0);
  EXPECT_EQ(retry.out, "");
  EXPECT_TRUE(Contains(retry.err, "seen before")) << retry.err;

  // Recall shows the recorded write; churn counts it.
  json recalled =
      Run({"--json", "recall", next, "--code-file", WriteFile("n.py", similar)}, {}).Json();
  ASSERT_EQ(recalled.size(), 1u);
  EXPECT_EQ(recalled[0]["file_path"], "/work/project/billing.py");
  json churn = Sdb({"--json", "churn"}).Json();
  ASSERT_EQ(churn.size(), 1u);
  EXPECT_EQ(churn[0]["edits_30d"], 1);
  EXPECT_EQ(churn[0]["tier"], "gold");
}

TEST_F(SearchCli, HookWarnsBeforeTheThirdEditOfAFunctionToday) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  auto source = [](const std::string& body) {
    return "package svc\n\nfunc Handle(x int) int {\n\t" + body + "\n}\n";
  };
  const std::string file = WriteFile("svc.go", source("return x"));
  auto edit_event = [&](const std::string& event, int n) {
    json e = {{"session_id", "s1"},
              {"cwd", dir_.path().string()},
              {"hook_event_name", event},
              {"tool_name", "Edit"},
              {"tool_input",
               {{"file_path", file},
                {"old_string", "\treturn x"},
                {"new_string", "\treturn x + " + std::to_string(n)}}}};
    return e.dump();
  };
  // Two edits of Handle, recorded after they ran: the file on disk holds the
  // edit then (and is put back, so every edit replaces the same line).
  for (int n = 1; n <= 2; ++n) {
    WriteFile("svc.go", source("return x + " + std::to_string(n)));
    CliRun post = Hook(edit_event("PostToolUse", n));
    WriteFile("svc.go", source("return x"));
    ASSERT_EQ(post.exit_code, 0) << post.err;
    EXPECT_TRUE(Contains(post.err, "recorded 1 write")) << post.err;
  }
  CliRun pre = Hook(edit_event("PreToolUse", 3));
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  ASSERT_FALSE(pre.out.empty()) << pre.err;
  std::string reason = json::parse(pre.out)["hookSpecificOutput"]["permissionDecisionReason"];
  EXPECT_TRUE(Contains(reason, "function Handle")) << reason;
  EXPECT_TRUE(Contains(reason, "edited 2 times in the last 24 hours")) << reason;
  json churn = Sdb({"--json", "churn", "--functions"}).Json();
  ASSERT_EQ(churn.size(), 1u);
  EXPECT_EQ(churn[0]["function"], "Handle");
  EXPECT_EQ(churn[0]["edits_24h"], 2);
}

TEST_F(SearchCli, ImportedCodexPatchesJoinTheCodeMemory) {
  json meta = {
      {"type", "session_meta"},
      {"timestamp", "2026-01-01T00:00:00Z"},
      {"payload", {{"id", "rollout-1"}, {"timestamp", "2026-01-01T00:00:00Z"}, {"cwd", "/w"}}}};
  json call = {{"type", "response_item"},
               {"timestamp", "2026-01-01T00:00:01Z"},
               {"payload",
                {{"type", "custom_tool_call"},
                 {"call_id", "c1"},
                 {"name", "apply_patch"},
                 {"input",
                  "*** Begin Patch\n*** Add File: src/tally.py\n"
                  "+def tally_votes(ballots):\n+    return len(ballots)\n"
                  "*** End Patch\n"}}}};
  const std::string rollout = WriteFile("rollout.jsonl", meta.dump() + "\n" + call.dump() + "\n");
  json first = Sdb({"--json", "import", rollout, "--format", "codex"}).Json();
  EXPECT_EQ(first["code_writes_learned"], 1);
  json again = Sdb({"--json", "import", rollout, "--format", "codex"}).Json();
  EXPECT_EQ(again["code_writes_learned"], 0);
  json hits =
      Sdb({"--json", "search", "tally_votes", "--kind", "code", "--mode", "keyword"}).Json();
  ASSERT_EQ(hits["hits"].size(), 1u);
  // Recorded by absolute path: the patch's relative path against the rollout's cwd.
  EXPECT_EQ(hits["hits"][0]["file_path"], "/w/src/tally.py");
}

TEST_F(SearchCli, HookAllowsOnABrokenStoreOrBadInput) {
  // The store path is a regular file: nothing can be opened.
  const std::string not_a_store = WriteFile("plain-file", "not a database");
  CliRun broken = Run({"--store", not_a_store, "hook", "claude-code"},
                      {.input = WriteEvent("PreToolUse", "/x.py", "x = 1\n"), .with_store = false});
  EXPECT_EQ(broken.exit_code, 0);
  EXPECT_EQ(broken.out, "");
  EXPECT_TRUE(Contains(broken.err, "allowed")) << broken.err;

  // A corrupt database file.
  const std::string corrupt = dir_.Sub("corrupt");
  std::filesystem::create_directories(corrupt);
  WriteFile("corrupt/sessiondb.db", std::string(8192, 'z'));
  CliRun bad_db = Run({"--store", corrupt, "hook", "claude-code"},
                      {.input = WriteEvent("PreToolUse", "/x.py", "x = 1\n"), .with_store = false});
  EXPECT_EQ(bad_db.exit_code, 0);
  EXPECT_EQ(bad_db.out, "");
  EXPECT_EQ(Slurp(corrupt + "/sessiondb.db"), std::string(8192, 'z'));  // left alone

  for (const char* input : {"", "not json", "[1,2]", R"({"hook_event_name":"PreToolUse"})",
                            R"({"hook_event_name":"PreToolUse","tool_name":"Write"})"}) {
    CliRun r = Hook(input);
    EXPECT_EQ(r.exit_code, 0) << input;
    EXPECT_EQ(r.out, "") << input;
  }
}

TEST_F(SearchCli, HookInstallPrintsAndMergesSettings) {
  CliRun printed = Sdb({"hook", "install", "claude-code"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  json snippet = json::parse(printed.out);
  EXPECT_EQ(snippet["hooks"]["PreToolUse"][0]["matcher"], "Write|Edit|MultiEdit|NotebookEdit");
  EXPECT_EQ(snippet["hooks"]["PostToolUse"][0]["matcher"],
            "Write|Edit|MultiEdit|NotebookEdit|Bash");
  std::string command = snippet["hooks"]["PostToolUse"][0]["hooks"][0]["command"];
  EXPECT_TRUE(Contains(command, " hook claude-code")) << command;

  const std::string settings =
      WriteFile("settings.json",
                R"({"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[]}]}})");
  ASSERT_EQ(Sdb({"hook", "install", "claude-code", "--write", "--settings", settings}).exit_code,
            0);
  ASSERT_EQ(Sdb({"hook", "install", "claude-code", "--write", "--settings", settings}).exit_code,
            0);
  json merged = json::parse(Slurp(settings));
  EXPECT_EQ(merged["model"], "opus");
  ASSERT_EQ(merged["hooks"]["PreToolUse"].size(), 2u);  // theirs, and ours once
  EXPECT_EQ(merged["hooks"]["PreToolUse"][0]["matcher"], "Bash");
  EXPECT_EQ(merged["hooks"]["PostToolUse"].size(), 1u);

  const std::string broken = WriteFile("broken.json", "{not json");
  CliRun refused = Sdb({"hook", "install", "claude-code", "--write", "--settings", broken});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(Slurp(broken), "{not json");
}

}  // namespace
}  // namespace sessiondb::testing
