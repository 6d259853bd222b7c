// The `sessiondb` command end to end (see cli_fixture.h for how it is run).
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

// ---- Help and usage ---------------------------------------------------------

TEST_F(Cli, HelpTeachesWithExamplesAndExitCodes) {
  CliRun r = Run({"--help"}, {.with_store = false});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.out, "Examples:")) << r.out;
  EXPECT_TRUE(Contains(r.out, "sessiondb new --title \"Bug triage\""));
  EXPECT_TRUE(Contains(r.out, "--image shot.png"));
  EXPECT_TRUE(Contains(r.out, "Exit codes"));
  EXPECT_TRUE(Contains(r.out, "$SESSIONDB_STORE"));
}

TEST_F(Cli, EveryVerbHasHelpWithAnExample) {
  for (const char* verb : {"init", "new", "ls", "show", "append", "rename", "archive", "unarchive",
                           "rm", "purge", "active", "gc", "verify", "stats"}) {
    CliRun r = Run({verb, "--help"}, {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_TRUE(Contains(r.out, std::string("sessiondb ") + verb)) << verb << ":\n" << r.out;
    EXPECT_TRUE(Contains(r.out, "Example")) << verb << ":\n" << r.out;
  }
  EXPECT_TRUE(Contains(Run({"append", "--help"}, {.with_store = false}).out, "--image"));
}

TEST_F(Cli, AnUnknownVerbOrABadOptionIsAUsageError) {
  EXPECT_EQ(Sdb({"frobnicate"}).exit_code, 1);
  EXPECT_EQ(Sdb({}).exit_code, 1);
  EXPECT_EQ(Sdb({"ls", "--limit", "0"}).exit_code, 2);  // a value out of range: invalid
  EXPECT_EQ(Sdb({"append"}).exit_code, 1);  // SESSION is required (show's defaults to `-`)
  CliRun j = Sdb({"--json", "frobnicate"});
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_EQ(j.Json()["error"]["code"], "usage");
}

// ---- The round trip ---------------------------------------------------------

TEST_F(Cli, NewAppendShowRoundTripsTextAndARealPng) {
  const std::string png_bytes = FromHex(kOnePixelPngHex);
  ASSERT_EQ(png_bytes.size(), 67u);
  const std::string png = WriteFile("shot.png", png_bytes);

  CliRun init = Sdb({"init"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out, store_ + "\n");

  CliRun created = Sdb({"--json", "new", "--title", "Screenshots", "--meta", "project=/src/app"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json session = created.Json();
  const std::string id = session["id"];
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(session["title"], "Screenshots");
  EXPECT_EQ(session["message_count"], 0);
  EXPECT_EQ(session["metadata"]["project"], "/src/app");
  EXPECT_EQ(session["archived"], false);

  CliRun a = Sdb({"--json", "append", id, "What is in this screenshot?", "--image", png});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json appended = a.Json();
  EXPECT_EQ(appended["seq"], 1);
  EXPECT_FALSE(appended["message_id"].get<std::string>().empty());
  EXPECT_GT(appended["ts_ms"].get<int64_t>(), 0);
  ASSERT_EQ(appended["resources"].size(), 1u);
  const json& res = appended["resources"][0];
  EXPECT_EQ(res["mime"], "image/png");
  EXPECT_EQ(res["width"], 1);
  EXPECT_EQ(res["height"], 1);
  EXPECT_EQ(res["size"], 67);
  EXPECT_EQ(res["content_sha256"], kOnePixelPngSha256);
  EXPECT_EQ(res["origin"], "file");
  EXPECT_EQ(res["name"], "shot.png");
  EXPECT_EQ(res["missing"], false);
  const std::string resource_id = res["resource_id"];
  EXPECT_EQ(resource_id.rfind("res_", 0), 0u);

  CliRun reply = Sdb({"append", id, "--role", "assistant", "A terminal window.", "--model", "m1"});
  ASSERT_EQ(reply.exit_code, 0) << reply.err;
  EXPECT_EQ(reply.out.rfind("seq 2, message ", 0), 0u) << reply.out;

  CliRun shown = Sdb({"show", id, "--json", "--data-uris"});  // global flag after the verb
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  json j = shown.Json();
  EXPECT_EQ(j["session"]["title"], "Screenshots");
  EXPECT_EQ(j["session"]["message_count"], 2);
  ASSERT_EQ(j["messages"].size(), 2u);
  const json& first = j["messages"][0];
  EXPECT_EQ(first["id"], appended["message_id"]);
  EXPECT_EQ(first["session_id"], id);
  EXPECT_EQ(first["seq"], 1);
  EXPECT_EQ(first["role"], "user");
  ASSERT_EQ(first["parts"].size(), 2u);
  EXPECT_EQ(first["parts"][0]["type"], "text");
  EXPECT_EQ(first["parts"][0]["text"], "What is in this screenshot?");
  EXPECT_EQ(first["parts"][1]["type"], "image");
  EXPECT_EQ(first["parts"][1]["resource"]["resource_id"], resource_id);
  EXPECT_EQ(first["parts"][1]["resource"]["content_sha256"], kOnePixelPngSha256);
  // Byte for byte: the data URI carries exactly the file that was attached.
  EXPECT_EQ(first["parts"][1]["data_uri"],
            std::string("data:image/png;base64,") + kOnePixelPngBase64);
  // Every message field is present, named as in types.h.
  for (const char* field :
       {"files", "files_modified", "edit_results", "model", "usage", "metadata", "ts_ms"}) {
    EXPECT_TRUE(first.contains(field)) << field;
  }
  EXPECT_EQ(j["messages"][1]["role"], "assistant");
  EXPECT_EQ(j["messages"][1]["model"], "m1");
  EXPECT_FALSE(j["messages"][1]["parts"][0].contains("data_uri"));

  // Without --data-uris no image bytes are inlined.
  EXPECT_FALSE(Contains(Sdb({"--json", "show", id}).out, "data_uri"));

  CliRun human = Sdb({"show", id});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(Contains(human.out, "#1  user")) << human.out;
  EXPECT_TRUE(Contains(human.out, "What is in this screenshot?"));
  EXPECT_TRUE(Contains(human.out, resource_id));
  EXPECT_TRUE(Contains(human.out, "image/png"));
  EXPECT_TRUE(Contains(human.out, "67 bytes"));
  EXPECT_TRUE(Contains(human.out, "1x1"));
  EXPECT_TRUE(Contains(human.out, kOnePixelPngSha256));
  EXPECT_TRUE(Contains(human.out, "#2  assistant"));
  EXPECT_TRUE(Contains(human.out, "A terminal window."));
  EXPECT_FALSE(Contains(human.out, "MISSING"));

  json listed = Sdb({"--json", "ls"}).Json();
  ASSERT_EQ(listed["sessions"].size(), 1u);
  EXPECT_EQ(listed["sessions"][0]["message_count"], 2);
  EXPECT_EQ(listed["sessions"][0]["preview"], "What is in this screenshot?");
}

TEST_F(Cli, ImagesComeFromDataUrisAndLinksAndFilesFromAnyPath) {
  std::string id = NewSession();
  const std::string uri = std::string("data:image/png;base64,") + kOnePixelPngBase64;
  const std::string notes = WriteFile("notes.txt", "plain notes\n");
  CliRun a = Sdb({"--json", "append", id, "three attachments", "--image", uri, "--image",
                  "https://example.com/cat.png", "--file", notes});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json res = a.Json()["resources"];
  ASSERT_EQ(res.size(), 3u);
  EXPECT_EQ(res[0]["origin"], "inline");
  EXPECT_EQ(res[0]["content_sha256"], kOnePixelPngSha256);
  EXPECT_EQ(res[1]["origin"], "link");
  EXPECT_EQ(res[1]["uri"], "https://example.com/cat.png");
  EXPECT_EQ(res[2]["origin"], "file");
  EXPECT_EQ(res[2]["size"], 12);
  EXPECT_EQ(res[2]["name"], "notes.txt");

  json parts = Sdb({"--json", "show", id}).Json()["messages"][0]["parts"];
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[1]["type"], "image");
  EXPECT_EQ(parts[2]["type"], "resource_link");
  EXPECT_EQ(parts[3]["type"], "file");
  CliRun human = Sdb({"show", id});
  EXPECT_TRUE(Contains(human.out, "not fetched")) << human.out;
  EXPECT_TRUE(Contains(human.out, "notes.txt"));
}

// ---- Text from stdin --------------------------------------------------------

TEST_F(Cli, TextIsReadFromStdinWhenAbsentOrDash) {
  std::string id = NewSession();
  ASSERT_EQ(Sdb({"append", id}, "piped question\n").exit_code, 0);
  ASSERT_EQ(Sdb({"append", id, "-", "--role", "assistant"}, "line one\nline two\n\n").exit_code, 0);
  json j = Sdb({"--json", "show", id}).Json();
  ASSERT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][0]["parts"][0]["text"], "piped question");
  EXPECT_EQ(j["session"]["title"], "piped question");
  // One trailing newline (the one echo adds) goes; the rest is the text.
  EXPECT_EQ(j["messages"][1]["parts"][0]["text"], "line one\nline two\n");
}

TEST_F(Cli, TextGivenAsAnArgumentIgnoresStdin) {
  std::string id = NewSession();
  ASSERT_EQ(Sdb({"append", id, "from the argument"}, "from stdin").exit_code, 0);
  EXPECT_EQ(Sdb({"--json", "show", id}).Json()["messages"][0]["parts"][0]["text"],
            "from the argument");
}

TEST_F(Cli, NothingToAppendFromATerminalFailsInsteadOfWaiting) {
  std::string id = NewSession();
  CliRun r = Run({"append", id}, {.stdin_is_terminal = true});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "TEXT")) << r.err;
  CliRun empty = Sdb({"append", id}, "");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(MessageCount(id), 0u);
}

// ---- Bad input --------------------------------------------------------------

TEST_F(Cli, AnUnknownSessionExitsThreeAndNamesIt) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  const std::vector<std::vector<std::string>> commands = {
      {"show", "no-such-session"},        {"append", "no-such-session", "hi"},
      {"rename", "no-such-session", "T"}, {"archive", "no-such-session"},
      {"unarchive", "no-such-session"},   {"rm", "no-such-session", "--yes"},
      {"active", "no-such-session"},
  };
  for (const auto& args : commands) {
    CliRun r = Sdb(args);
    EXPECT_EQ(r.exit_code, 3) << args[0];
    EXPECT_TRUE(Contains(r.err, "sessiondb: error: ")) << args[0] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "no-such-session")) << args[0] << ": " << r.err;
  }
  CliRun j = Sdb({"--json", "append", "no-such-session", "hi"});
  EXPECT_EQ(j.exit_code, 3);
  EXPECT_EQ(j.Json()["error"]["code"], "not_found");
  EXPECT_TRUE(Contains(j.Json()["error"]["message"], "no-such-session"));
  EXPECT_TRUE(Contains(j.err, "no-such-session"));
}

TEST_F(Cli, AMissingImageFileNamesThePathAndAppendsNothing) {
  std::string id = NewSession();
  ASSERT_EQ(Sdb({"append", id, "first"}).exit_code, 0);
  const std::string good = WritePng("good.png", "good");
  const std::string missing = dir_.Sub("nope.png");
  CliRun r = Sdb({"append", id, "with image", "--image", good, "--image", missing});
  EXPECT_TRUE(r.exit_code == 2 || r.exit_code == 3) << r.exit_code;
  EXPECT_TRUE(Contains(r.err, missing)) << r.err;
  EXPECT_EQ(MessageCount(id), 1u);
  json session = Sdb({"--json", "show", id}).Json()["session"];
  EXPECT_EQ(session["message_count"], 1);
  EXPECT_EQ(session["last_seq"], 1);
  EXPECT_EQ(Sdb({"--json", "stats"}).Json()["blobs"], 0);  // not even the good image
}

TEST_F(Cli, AnImageOverTheLimitIsRefusedWithTheLimitAndTheFlagNamed) {
  std::string id = NewSession();
  const std::string png = WriteFile("big.png", MakePng(10, 10, "big", 4000));
  CliRun r = Sdb({"--max-image-bytes", "1000", "append", id, "big", "--image", png});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "the limit is")) << r.err;
  EXPECT_TRUE(Contains(r.err, "--max-image-bytes")) << r.err;
  EXPECT_EQ(MessageCount(id), 0u);
  // Sizes take units, and a raised limit lets the same image in.
  EXPECT_EQ(Sdb({"--max-image-bytes", "1MiB", "append", id, "big", "--image", png}).exit_code, 0);
}

TEST_F(Cli, ABadRoleOrMetadataIsAnInvalidArgument) {
  std::string id = NewSession();
  CliRun role = Sdb({"append", id, "hi", "--role", "wizard"});
  EXPECT_EQ(role.exit_code, 2);
  EXPECT_TRUE(Contains(role.err, "wizard")) << role.err;
  CliRun meta = Sdb({"new", "--meta", "no-equals-sign"});
  EXPECT_EQ(meta.exit_code, 2);
  EXPECT_TRUE(Contains(meta.err, "KEY=VALUE")) << meta.err;
  EXPECT_EQ(Sdb({"new", "--id", "../escape"}).exit_code, 2);
}

TEST_F(Cli, ASessionIdThatIsTakenExitsFour) {
  NewSession({"--id", "dup"});
  CliRun r = Sdb({"new", "--id", "dup"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(Contains(r.err, "dup")) << r.err;
}

TEST_F(Cli, DataUrisWithoutJsonIsRefused) {
  std::string id = NewSession();
  CliRun r = Sdb({"show", id, "--data-uris"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "--json")) << r.err;
}

// ---- Sessions ---------------------------------------------------------------

TEST_F(Cli, RenameArchiveUnarchiveAndListFilters) {
  NewSession({"--id", "alpha", "--meta", "project=/src/app"});
  NewSession({"--id", "beta"});
  CliRun renamed = Sdb({"--json", "rename", "alpha", "Alpha work"});
  ASSERT_EQ(renamed.exit_code, 0) << renamed.err;
  EXPECT_EQ(renamed.Json()["title"], "Alpha work");
  CliRun archived = Sdb({"--json", "archive", "beta"});
  ASSERT_EQ(archived.exit_code, 0) << archived.err;
  EXPECT_EQ(archived.Json()["archived"], true);

  json active = Sdb({"--json", "ls"}).Json();
  ASSERT_EQ(active["sessions"].size(), 1u);
  EXPECT_EQ(active["sessions"][0]["title"], "Alpha work");
  json only_archived = Sdb({"--json", "ls", "--archived"}).Json();
  ASSERT_EQ(only_archived["sessions"].size(), 1u);
  EXPECT_EQ(only_archived["sessions"][0]["id"], "beta");
  EXPECT_EQ(Sdb({"--json", "ls", "--all"}).Json()["sessions"].size(), 2u);
  EXPECT_EQ(Sdb({"ls", "--all", "--archived"}).exit_code, 1);
  json by_project = Sdb({"--json", "ls", "--all", "--meta", "project=/src/app"}).Json();
  ASSERT_EQ(by_project["sessions"].size(), 1u);
  EXPECT_EQ(by_project["sessions"][0]["id"], "alpha");

  CliRun table = Sdb({"ls", "--all"});
  EXPECT_TRUE(Contains(table.out, "ID")) << table.out;
  EXPECT_TRUE(Contains(table.out, "TITLE"));
  EXPECT_TRUE(Contains(table.out, "MESSAGES"));
  EXPECT_TRUE(Contains(table.out, "UPDATED"));
  EXPECT_TRUE(Contains(table.out, "ARCHIVED"));
  EXPECT_TRUE(Contains(table.out, "Alpha work"));

  CliRun unarchived = Sdb({"--json", "unarchive", "beta"});
  ASSERT_EQ(unarchived.exit_code, 0);
  EXPECT_EQ(unarchived.Json()["archived"], false);
  EXPECT_EQ(Sdb({"--json", "ls"}).Json()["sessions"].size(), 2u);
}

TEST_F(Cli, PagingWithTheCursorShowsEverySessionOnce) {
  for (int i = 0; i < 5; ++i) NewSession({"--id", "s" + std::to_string(i)});
  json first = Sdb({"--json", "ls", "--limit", "3"}).Json();
  ASSERT_EQ(first["sessions"].size(), 3u);
  ASSERT_TRUE(first["next_cursor"].is_string());
  json second = Sdb({"--json", "ls", "--limit", "3", "--cursor", first["next_cursor"]}).Json();
  ASSERT_EQ(second["sessions"].size(), 2u);
  EXPECT_TRUE(second["next_cursor"].is_null());
  std::set<std::string> ids;
  for (const auto& page : {first, second}) {
    for (const auto& s : page["sessions"]) ids.insert(s["id"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 5u);
  // People get the command for the next page.
  CliRun human = Sdb({"ls", "--limit", "3"});
  EXPECT_TRUE(Contains(human.out, "--cursor")) << human.out;
  EXPECT_TRUE(Contains(human.out, "--limit 3")) << human.out;
}

TEST_F(Cli, RmMovesASessionToTheTrashAndEraseNeedsYes) {
  std::string id = NewSession();
  CliRun trashed = Sdb({"--json", "rm", id});
  EXPECT_EQ(trashed.exit_code, 0) << trashed.err;
  EXPECT_EQ(trashed.Json()["trashed"], true);
  EXPECT_EQ(Sdb({"show", id}).exit_code, 3);
  ASSERT_EQ(Sdb({"trash", "restore", id}).exit_code, 0);
  EXPECT_EQ(Sdb({"show", id}).exit_code, 0);

  CliRun refused = Sdb({"rm", "--erase", id});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(Contains(refused.err, "--yes")) << refused.err;
  EXPECT_EQ(Sdb({"show", id}).exit_code, 0);
  CliRun erased = Sdb({"--json", "rm", "--erase", id, "--yes"});
  EXPECT_EQ(erased.exit_code, 0) << erased.err;
  EXPECT_EQ(erased.Json()["sessions"], json::array({id}));
  EXPECT_EQ(Sdb({"show", id}).exit_code, 3);
  EXPECT_EQ(Sdb({"trash", "restore", id}).exit_code, 3);
}

TEST_F(Cli, PurgeRemovesOnlyOldArchivedSessions) {
  std::string keep = NewSession();
  std::string old = NewSession();
  ASSERT_EQ(Sdb({"archive", old}).exit_code, 0);
  // Nothing is older than a day yet.
  EXPECT_EQ(Sdb({"--json", "purge", "--older-than", "1"}).Json()["purged"], 0);
  EXPECT_EQ(Sdb({"purge", "--older-than", "-1"}).exit_code, 2);
  CliRun purged = Sdb({"purge", "--older-than", "0"});
  EXPECT_EQ(purged.exit_code, 0);
  EXPECT_EQ(purged.out, "purged 1 archived session\n");
  EXPECT_EQ(Sdb({"show", old}).exit_code, 3);
  EXPECT_EQ(Sdb({"show", keep}).exit_code, 0);
}

TEST_F(Cli, ActiveSessionCanBeSetShownAndCleared) {
  std::string id = NewSession();
  CliRun none = Sdb({"active"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.out, "");  // so that $(sessiondb active) is empty
  EXPECT_TRUE(Contains(none.err, "no active session"));
  ASSERT_EQ(Sdb({"active", id}).exit_code, 0);
  EXPECT_EQ(Sdb({"active"}).out, id + "\n");
  EXPECT_EQ(Sdb({"--json", "active"}).Json()["active_session"], id);
  EXPECT_EQ(Sdb({"active", "ghost"}).exit_code, 3);
  EXPECT_EQ(Sdb({"active"}).out, id + "\n");  // a failed set changes nothing
  ASSERT_EQ(Sdb({"active", "--clear"}).exit_code, 0);
  EXPECT_TRUE(Sdb({"--json", "active"}).Json()["active_session"].is_null());
}

// ---- Reading pieces of a log ------------------------------------------------

TEST_F(Cli, ShowPagesWithFromLimitAndLast) {
  std::string id = NewSession();
  for (int i = 1; i <= 5; ++i) ASSERT_EQ(Sdb({"append", id, "m" + std::to_string(i)}).exit_code, 0);
  auto seqs = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--json", "show", id};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<int64_t> out;
    const json shown = Sdb(args).Json();
    for (const auto& m : shown["messages"]) out.push_back(m["seq"]);
    return out;
  };
  EXPECT_EQ(seqs({}), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(seqs({"--from", "4"}), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(seqs({"--from", "2", "--limit", "2"}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(seqs({"--last", "2"}), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(Sdb({"show", id, "--last", "2", "--from", "1"}).exit_code, 1);
}

// ---- Housekeeping -----------------------------------------------------------

TEST_F(Cli, StatsGcAndVerifyReportTheStore) {
  std::string a = NewSession();
  std::string b = NewSession();
  std::string png = WritePng("p.png", "stats");
  ASSERT_EQ(Sdb({"append", a, "x", "--image", png}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", b, "y", "--image", png}).exit_code, 0);
  json stats = Sdb({"--json", "stats"}).Json();
  EXPECT_EQ(stats["sessions"], 2);
  EXPECT_EQ(stats["messages"], 2);
  EXPECT_EQ(stats["blobs"], 1);  // same bytes, one blob
  EXPECT_GT(stats["total_bytes"].get<int64_t>(), 0);
  EXPECT_TRUE(Contains(Sdb({"stats"}).out, "sessions  2"));

  CliRun verified = Sdb({"--json", "verify"});
  EXPECT_EQ(verified.exit_code, 0);
  EXPECT_EQ(verified.Json()["clean"], true);
  EXPECT_EQ(verified.Json()["blobs_checked"], 1);
  EXPECT_EQ(verified.err, "");  // no progress when stderr is not a terminal

  ASSERT_EQ(Sdb({"rm", "--erase", a, "--yes"}).exit_code, 0);
  ASSERT_EQ(Sdb({"rm", "--erase", b, "--yes"}).exit_code, 0);
  json young = Sdb({"--json", "gc"}).Json();
  EXPECT_EQ(young["blobs_deleted"], 0);
  EXPECT_EQ(young["blobs_in_grace"], 1);
  json dry = Sdb({"--json", "gc", "--dry-run", "--grace-minutes", "0"}).Json();
  EXPECT_EQ(dry["blobs_deleted"], 1);
  EXPECT_EQ(dry["dry_run"], true);
  EXPECT_EQ(Sdb({"--json", "stats"}).Json()["blobs"], 1);  // a dry run deletes nothing
  json gc = Sdb({"--json", "gc", "--grace-minutes", "0"}).Json();
  EXPECT_EQ(gc["blobs_deleted"], 1);
  EXPECT_GT(gc["bytes_freed"].get<int64_t>(), 0);
  EXPECT_EQ(Sdb({"--json", "stats"}).Json()["blobs"], 0);
}

TEST_F(Cli, VerifyExitsEightAndListsAMissingBlob) {
  std::string id = NewSession();
  std::string png = WritePng("p.png", "verify-missing");
  json appended = Sdb({"--json", "append", id, "x", "--image", png}).Json();
  const std::string sha = appended["resources"][0]["content_sha256"];
  const std::string blob = FindBlob(sha);
  ASSERT_FALSE(blob.empty());
  std::filesystem::remove(blob);

  CliRun r = Sdb({"verify"});
  EXPECT_EQ(r.exit_code, 8);
  EXPECT_TRUE(Contains(r.out, "missing")) << r.out;
  EXPECT_TRUE(Contains(r.out, sha)) << r.out;
  CliRun j = Sdb({"--json", "verify"});
  EXPECT_EQ(j.exit_code, 8);
  EXPECT_EQ(j.Json()["clean"], false);
  EXPECT_EQ(j.Json()["missing"][0], sha);

  // The message still loads, and says its image is gone.
  CliRun shown = Sdb({"show", id});
  EXPECT_EQ(shown.exit_code, 0);
  EXPECT_TRUE(Contains(shown.out, "MISSING")) << shown.out;
  CliRun as_json = Sdb({"--json", "show", id, "--data-uris"});
  EXPECT_EQ(as_json.exit_code, 0);
  json part = as_json.Json()["messages"][0]["parts"][1];
  EXPECT_EQ(part["resource"]["missing"], true);
  EXPECT_FALSE(part.contains("data_uri"));
}

TEST_F(Cli, VerifyDrawsProgressOnlyOnATerminal) {
  std::string id = NewSession();
  ASSERT_EQ(Sdb({"append", id, "x", "--image", WritePng("p.png", "progress")}).exit_code, 0);
  CliRun r = Run({"--json", "verify"}, {.stderr_is_terminal = true});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "verifying blobs")) << r.err;
  EXPECT_EQ(r.Json()["clean"], true);  // stdout holds the JSON alone
}

// ---- Where the store is -----------------------------------------------------

TEST_F(Cli, TheStoreComesFromTheFlagThenTheEnvironmentThenXdgThenHome) {
  const std::string env_store = dir_.Sub("env-store");
  const std::string xdg = dir_.Sub("xdg");
  auto store_of = [&](bool with_store, std::map<std::string, std::optional<std::string>> env) {
    CliRun r = Run({"--json", "init"}, {.with_store = with_store, .env = std::move(env)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.Json()["store"].get<std::string>();
  };
  EXPECT_EQ(store_of(true, {{"SESSIONDB_STORE", env_store}, {"XDG_DATA_HOME", xdg}}), store_);
  EXPECT_EQ(store_of(false, {{"SESSIONDB_STORE", env_store}, {"XDG_DATA_HOME", xdg}}), env_store);
  EXPECT_EQ(store_of(false, {{"SESSIONDB_STORE", ""}, {"XDG_DATA_HOME", xdg}}), xdg + "/sessiondb");
  EXPECT_EQ(store_of(false, {}), home_ + "/.local/share/sessiondb");

  // A session made through the variable is found through the flag, and not elsewhere.
  CliRun made = Run({"new", "--id", "via-env"},
                    {.with_store = false, .env = {{"SESSIONDB_STORE", env_store}}});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(Run({"show", "via-env", "--store", env_store}, {.with_store = false}).exit_code, 0);
  EXPECT_EQ(Run({"show", "via-env"}, {.env = {{"SESSIONDB_STORE", env_store}}}).exit_code, 3);
}

// ---- PostgreSQL stores and copies --------------------------------------------

TEST_F(Cli, APostgresUriWorksWhereADirectoryDoesAndNamespacesKeepApart) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  auto at = [&](const std::string& ns, std::vector<std::string> args) {
    std::vector<std::string> full = {"--store", pg.uri(), "--namespace", ns};
    full.insert(full.end(), args.begin(), args.end());
    return Run(full, {.with_store = false});
  };
  CliRun init = at("alice", {"init"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out, pg.uri() + "\n");  // the URI as given, not made into a path
  CliRun made = at("alice", {"new", "--id", "pg-chat"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string png_path = dir_.Sub("pic.png");
  { std::ofstream(png_path, std::ios::binary) << MakePng(8, 6, "cli-pg"); }
  CliRun appended = at("alice", {"append", "pg-chat", "hello from postgres", "--image", png_path});
  ASSERT_EQ(appended.exit_code, 0) << appended.err;
  CliRun shown = at("alice", {"show", "pg-chat", "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(Contains(shown.out, "hello from postgres"));
  EXPECT_TRUE(Contains(shown.out, "image/png"));
  // Bob's namespace, in the same database, does not see Alice's session.
  EXPECT_EQ(at("bob", {"show", "pg-chat"}).exit_code, 3);
  // The variable names the namespace when the flag does not.
  CliRun via_env = Run({"--store", pg.uri(), "show", "pg-chat"},
                       {.with_store = false, .env = {{"SESSIONDB_NAMESPACE", "alice"}}});
  EXPECT_EQ(via_env.exit_code, 0) << via_env.err;
  EXPECT_EQ(at("alice", {"verify"}).exit_code, 0);

  // Search, the hook, recall and churn work on PostgreSQL, each namespace
  // seeing only its own.
  CliRun found = at("alice", {"--json", "search", "hello", "--mode", "keyword"});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_EQ(json::parse(found.out)["hits"].size(), 1u) << found.out;
  const json write = {{"session_id", "pg-chat"},
                      {"cwd", "/work/project"},
                      {"hook_event_name", "PostToolUse"},
                      {"tool_name", "Write"},
                      {"tool_input",
                       {{"file_path", "/work/project/hello.py"},
                        {"content", "def hello():\n    return 'postgres'\n"}}},
                      {"tool_response", {{"success", true}}}};
  CliRun hooked = Run({"--store", pg.uri(), "--namespace", "alice", "hook", "claude-code"},
                      {.input = write.dump(), .with_store = false});
  EXPECT_EQ(hooked.exit_code, 0) << hooked.err;
  CliRun churn = at("alice", {"--json", "churn"});
  ASSERT_EQ(churn.exit_code, 0) << churn.err;
  ASSERT_EQ(json::parse(churn.out).size(), 1u) << churn.out;
  EXPECT_EQ(json::parse(churn.out)[0]["file_path"], "/work/project/hello.py");
  CliRun code =
      at("alice", {"--json", "search", "postgres", "--kind", "code", "--mode", "keyword"});
  EXPECT_EQ(json::parse(code.out)["hits"].size(), 1u) << code.out;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--json", "search", "hello", "--mode", "keyword"},
           {"--json", "search", "postgres", "--kind", "code", "--mode", "keyword"}}) {
    CliRun other = at("bob", args);
    ASSERT_EQ(other.exit_code, 0) << other.err;
    EXPECT_TRUE(json::parse(other.out)["hits"].empty()) << other.out;
  }
  CliRun bob_churn = at("bob", {"--json", "churn"});
  ASSERT_EQ(bob_churn.exit_code, 0) << bob_churn.err;
  EXPECT_TRUE(json::parse(bob_churn.out).empty()) << bob_churn.out;
}

TEST_F(Cli, CopyMovesAStoreToPostgresAndBackAndResumes) {
  const std::string id = NewSession({"--id", "to-copy"});
  ASSERT_EQ(Sdb({"append", id, "first words"}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", id, "--role", "assistant", "a reply"}).exit_code, 0);
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  CliRun there = Run({"--json", "copy", "--from", store_, "--to", pg.uri()}, {.with_store = false});
  ASSERT_EQ(there.exit_code, 0) << there.err;
  EXPECT_EQ(there.Json()["sessions_copied"], 1);
  EXPECT_EQ(there.Json()["messages_copied"], 2);
  CliRun again = Run({"copy", "--from", store_, "--to", pg.uri()}, {.with_store = false});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(Contains(again.out, "1 were there already")) << again.out;

  const std::string back = dir_.Sub("back");
  CliRun home = Run({"copy", "--from", pg.uri(), "--to", back}, {.with_store = false});
  ASSERT_EQ(home.exit_code, 0) << home.err;
  CliRun original = Sdb({"show", id, "--json"});
  CliRun returned = Run({"--store", back, "show", id, "--json"}, {.with_store = false});
  ASSERT_EQ(returned.exit_code, 0) << returned.err;
  EXPECT_EQ(returned.out, original.out);

  // A source that does not exist is named, and nothing is created for it.
  CliRun missing =
      Run({"copy", "--from", dir_.Sub("nowhere"), "--to", back}, {.with_store = false});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("nowhere")));
}

TEST_F(Cli, ReadingAStoreThatDoesNotExistSaysToRunInitAndCreatesNothing) {
  CliRun r = Sdb({"ls"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(Contains(r.err, "sessiondb init")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(store_));
}

}  // namespace
}  // namespace sessiondb::testing
