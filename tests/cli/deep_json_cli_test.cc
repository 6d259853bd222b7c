// JSON nested too deep, fed to the real binary through every door: each
// importer, `sessiondb mcp` and the Claude Code hook. Before the cap in
// core/json_parse.h, ~60,000 levels (120 KB) overflowed the stack and killed
// the process, and ~2,000 levels were stored, after which SQLite's JSON
// functions refused the store (`ls --meta`, reindex, later imports failed).
// Each case checks the clear error or the skip with its reason, that nothing
// deeper than the cap reached the store, and that the store still serves.
#include <set>
#include <string>
#include <vector>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

// `depth` nested arrays around a 1.
std::string Deep(int depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

// The deepest nesting of arrays and objects in `text`, strings skipped.
int MaxDepth(const std::string& text) {
  int depth = 0, max = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      max = std::max(max, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return max;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class DeepJsonCli : public Cli {
 protected:
  // Imports `path` as `format`, then proves the store whole: nothing stored
  // nests deeper than a document may, and ls, ls --meta and reindex work.
  // Returns the import's stdout + stderr.
  std::string ImportAndCheck(const std::string& path, const std::string& format) {
    CliRun r = Sdb({"--json", "import", path, "--format", format});
    EXPECT_GE(r.exit_code, 0) << format << ": the import did not exit normally\n" << r.err;
    EXPECT_NE(r.exit_code, 5) << format << ": an internal error\n" << r.err;
    CliRun ls = Sdb({"--json", "ls", "--all", "--limit", "1000"});
    EXPECT_EQ(ls.exit_code, 0) << format << ": " << ls.err;
    const json listed = ls.Json();  // kept: a range-for over a temporary's member dangles
    for (const json& s : listed["sessions"]) {
      // A session an earlier import wrote, unchanged since, was read back then.
      const std::string version =
          s["id"].get<std::string>() + "@" + std::to_string(s["last_seq"].get<int64_t>());
      if (!shown_.insert(version).second) continue;
      CliRun shown = Sdb({"--json", "show", s["id"].get<std::string>()});
      EXPECT_EQ(shown.exit_code, 0) << shown.err;
      EXPECT_LT(MaxDepth(shown.out), 100)
          << format << ": session " << s["id"] << " holds JSON deeper than the cap";
    }
    CliRun meta = Sdb({"ls", "--all", "--meta", "k=v"});
    EXPECT_EQ(meta.exit_code, 0) << format << ": ls --meta fails on this store: " << meta.err;
    CliRun reindex = Sdb({"--json", "reindex"});
    EXPECT_EQ(reindex.exit_code, 0) << format << ": reindex fails on this store: " << reindex.err;
    // The store still takes new sessions and finds them by metadata.
    const std::string sid = NewSession({"--meta", "k=v"});
    EXPECT_EQ(Sdb({"append", sid, "still here"}).exit_code, 0);
    CliRun found = Sdb({"--json", "ls", "--meta", "k=v"});
    EXPECT_TRUE(Contains(found.out, sid)) << found.out << found.err;
    return r.out + r.err;
  }

  // The sessions ImportAndCheck has read back already, as "id@last_seq".
  std::set<std::string> shown_;

  // A file for each format with `deep` (raw JSON text) where the format
  // keeps a JSON value; returns the path to import.
  std::string Sample(const std::string& format, const std::string& deep) {
    const std::string d = dir_.Sub(format + "-" + std::to_string(deep.size()));
    std::filesystem::create_directories(d);
    auto write = [&](const std::string& name, const std::string& text) {
      const std::string p = d + "/" + name;
      std::ofstream(p, std::ios::binary) << text;
      return p;
    };
    if (format == "claude-code") {
      const std::string head =
          R"({"parentUuid":null,"isSidechain":false,"type":"user","sessionId":"aaaaaaaa-1111-4000-8000-000000000001","cwd":"/x","uuid":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}})";
      const std::string tool =
          R"({"parentUuid":"aaaaaaaa-0000-4000-8000-000000000001","isSidechain":false,"type":"assistant","sessionId":"aaaaaaaa-1111-4000-8000-000000000001","cwd":"/x","uuid":"aaaaaaaa-0000-4000-8000-000000000002","timestamp":"2025-01-01T00:00:01Z","message":{"id":"m1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"deep":@}}]}})";
      return write("aaaaaaaa-1111-4000-8000-000000000001.jsonl",
                   head + "\n" + Replace(tool, "@", deep) + "\n");
    }
    if (format == "codex") {
      const std::string meta =
          R"({"timestamp":"2025-10-29T00:59:38.317Z","type":"session_meta","payload":{"id":"0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7","timestamp":"2025-10-29T00:59:38.308Z","cwd":"/x","git":{"deep":@}}})";
      const std::string user =
          R"({"timestamp":"2025-10-29T00:59:39.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}})";
      const std::string call =
          R"({"timestamp":"2025-10-29T00:59:40.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"c1","arguments":@}})";
      const json args = json(std::string("{\"deep\":") + deep + "}");
      return write(
          "rollout-2025-10-29T00-59-38-0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7.jsonl",
          Replace(meta, "@", deep) + "\n" + user + "\n" + Replace(call, "@", args.dump()) + "\n");
    }
    if (format == "chatgpt") {
      const std::string conv =
          R"([{"id":"67f0c1d2-aaaa-8000-9000-0123456789ab","title":"t","create_time":1.0,"update_time":2.0,"current_node":"n1","mapping":{"n0":{"id":"n0","message":null,"parent":null,"children":["n1"]},"n1":{"id":"n1","parent":"n0","children":[],"message":{"id":"n1","author":{"role":"user","name":null,"metadata":{}},"create_time":1.0,"content":{"content_type":"text","parts":["hi"]},"status":"finished_successfully","metadata":{"deep":@},"recipient":"all"}}}}])";
      return write("conversations.json", Replace(conv, "@", deep));
    }
    if (format == "claude-ai") {
      const std::string conv =
          R"([{"uuid":"5a5a5a5a-0000-4000-8000-000000000000","name":"t","created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z","chat_messages":[{"uuid":"5a5a5a5a-0000-4000-8000-000000000001","text":"hi","sender":"human","index":0,"created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z","attachments":[],"files":[],"parent_message_uuid":"00000000-0000-4000-8000-000000000000","content":[{"type":"text","text":"hi"}]},{"uuid":"5a5a5a5a-0000-4000-8000-000000000002","text":"","sender":"assistant","index":1,"created_at":"2025-01-01T00:00:01Z","updated_at":"2025-01-01T00:00:01Z","attachments":[],"files":[],"parent_message_uuid":"5a5a5a5a-0000-4000-8000-000000000001","content":[{"type":"tool_use","name":"search","input":{"deep":@}}]}]}])";
      return write("conversations.json", Replace(conv, "@", deep));
    }
    if (format == "ac-dc") {
      const std::string dir = d + "/.ac-dc";
      std::filesystem::create_directories(dir);
      const std::string a =
          R"({"id":"1719500000000-aaaa0001","session_id":"sess_1719500000000_f0e1d2","timestamp":"2024-06-27T15:00:00Z","role":"user","content":"hi"})";
      const std::string b =
          R"({"id":"1719500001000-aaaa0002","session_id":"sess_1719500000000_f0e1d2","timestamp":"2024-06-27T15:00:01Z","role":"assistant","content":"ok","edit_results":[{"deep":@}]})";
      std::ofstream(dir + "/history.jsonl", std::ios::binary) << a << "\n"
                                                              << Replace(b, "@", deep) << "\n";
      return dir;
    }
    if (format == "pixir") {
      const std::string a =
          R"({"id":"evt_1","session_id":"ses_deep","seq":1,"ts":"2025-01-01T00:00:00Z","type":"message","data":{"role":"user","parts":[{"type":"text","text":"hi"}]}})";
      const std::string b =
          R"({"id":"evt_2","session_id":"ses_deep","seq":2,"ts":"2025-01-01T00:00:01Z","type":"message","data":{"role":"assistant","parts":[{"type":"tool_call","call_id":"c1","name":"f","arguments":{"deep":@}}],"metadata":{"deep":@}}})";
      return write("ses_deep.ndjson", a + "\n" + Replace(Replace(b, "@", deep), "@", deep) + "\n");
    }
    if (format == "agents-kt") {
      const std::string doc =
          R"({"requestId":"req-1","sessionId":"kt-1","turns":1,"toolCalls":1,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","toolCalls":[{"name":"f","arguments":{"deep":@}}]}]})";
      return write("kt-1.json", Replace(doc, "@", deep));
    }
    if (format == "extremis") {
      const std::string dir = d + "/Extremis/sessions";
      std::filesystem::create_directories(dir);
      const std::string id = "22222222-0000-4000-8000-000000000001";
      std::ofstream(dir + "/index.json")
          << R"({"version":1,"sessions":[{"id":")" << id
          << R"(","title":"t"}],"lastUpdated":"2025-01-15T10:31:04Z"})";
      const std::string session =
          R"({"id":"@ID","version":1,"extra":{"deep":@},"messages":[{"id":"33333333-0000-4000-8000-000000000001","role":"user","content":"hi","timestamp":"2025-01-15T10:30:00Z","contextData":"@CTX"}]})";
      std::string text =
          Replace(Replace(session, "@ID", id), "@CTX", blob_base64("{\"deep\":" + deep + "}"));
      std::ofstream(dir + "/" + id + ".json") << Replace(text, "@", deep);
      return dir;
    }
    if (format == "snapshot") {
      const std::string sid = "snap-source";
      // A snapshot written by sessiondb itself, with the deep value put into
      // the message's metadata and the session's.
      const std::string other = dir_.Sub("snap-store-" + std::to_string(deep.size()));
      auto at_other = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"--store", other});
        return Run(args, {.with_store = false});
      };
      EXPECT_EQ(at_other({"new", "--id", sid, "--meta", "k=v"}).exit_code, 0);
      EXPECT_EQ(at_other({"append", sid, "hi"}).exit_code, 0);
      const std::string out = d + "/snap.json";
      CliRun exported = at_other({"export", "--format", "snapshot", "--out", out});
      EXPECT_EQ(exported.exit_code, 0) << exported.err;
      std::string text = Slurp(out);
      text = Replace(text, R"("metadata":{"k":"v"})", R"("metadata":{"k":"v","deep":@})");
      text = Replace(text, R"("role":"user")", R"("metadata":{"deep":@},"role":"user")");
      text = Replace(Replace(text, "@", deep), "@", deep);
      return write("snap.json", text);
    }
    ADD_FAILURE() << "no sample for " << format;
    return "";
  }

  static std::string blob_base64(const std::string& bytes) {
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
      const unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                         (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                         static_cast<unsigned char>(bytes[i + 2]);
      out += {k[n >> 18], k[(n >> 12) & 63], k[(n >> 6) & 63], k[n & 63]};
    }
    if (i + 1 == bytes.size()) {
      const unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
      out += {k[n >> 18], k[(n >> 12) & 63], '=', '='};
    } else if (i + 2 == bytes.size()) {
      const unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                         (static_cast<unsigned char>(bytes[i + 1]) << 8);
      out += {k[n >> 18], k[(n >> 12) & 63], k[(n >> 6) & 63], '='};
    }
    return out;
  }
};

const std::vector<std::string> kFormats = {"claude-code", "codex",    "chatgpt",
                                           "claude-ai",   "ac-dc",    "pixir",
                                           "agents-kt",   "extremis", "snapshot"};

// One test per format, each on a store of its own, so that the formats run
// side by side and a failure names its format.
class DeepJsonImport : public DeepJsonCli, public ::testing::WithParamInterface<std::string> {};

// 60,000 levels: the stack overflow. 2,000: SQLite's own limit, what
// poisoned the store. 100: under the document cap, over a stored value's.
TEST_P(DeepJsonImport, TheImporterRefusesDeepJsonAndTheStoreStillServes) {
  const std::string& format = GetParam();
  // An import refused whole makes no store: ImportAndCheck reads one after each.
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  for (int depth : {60000, 2000, 100}) {
    SCOPED_TRACE(format + " at depth " + std::to_string(depth));
    const std::string said = ImportAndCheck(Sample(format, Deep(depth)), format);
    // Past the document cap the record (or the file) is refused by name;
    // under it, a value the store would keep is skipped or left out, which
    // ImportAndCheck proves by reading everything back.
    if (depth > 128) {
      EXPECT_TRUE(Contains(said, "nested deeper than")) << said;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryImporter, DeepJsonImport, ::testing::ValuesIn(kFormats),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST_F(DeepJsonCli, McpAnswersADeepPingWithAnErrorAndServesTheNextRequest) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);  // mcp serves an existing store
  const std::string deep_ping =
      R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + Deep(60000) + "}}\n";
  const std::string ping = R"({"jsonrpc":"2.0","id":2,"method":"ping"})"
                           "\n";
  CliRun r = Run({"mcp"}, {.input = deep_ping + ping});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  const json a = json::parse(first, nullptr, false);
  ASSERT_TRUE(a.is_object()) << r.out;
  EXPECT_EQ(a["error"]["code"], -32700) << first;
  EXPECT_TRUE(Contains(a["error"]["message"].get<std::string>(), "nested deeper than")) << first;
  const json b = json::parse(second, nullptr, false);
  ASSERT_TRUE(b.is_object()) << r.out;
  EXPECT_EQ(b["id"], 2);
  EXPECT_TRUE(b.contains("result")) << second;
}

TEST_F(DeepJsonCli, TheHookAllowsADeepEventAndExitsZero) {
  const std::string event =
      R"({"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/tmp/x","content":)" +
      Deep(60000) + "}}";
  CliRun r = Run({"hook", "claude-code"}, {.input = event});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "") << "a deep event must not deny the tool call";
}

}  // namespace
}  // namespace sessiondb::testing
