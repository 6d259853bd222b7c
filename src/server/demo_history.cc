#include "server/demo_history.h"

#include <algorithm>
#include <string>

#include "core/json_parse.h"

namespace sessiondb::server {

namespace {

// A 64x48 PNG: sky, sun and a green hill.
constexpr const char* kDemoPicture =
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAEAAAAAwCAIAAAAuKetIAAAAtklEQVR42u3Vuw2AMAyEYc/"
    "EEAzBENRMwhBMwhDU1GwAAwQROw/nUE662vq/"
    "yjJv568nBBBAAAHdAu5jCvcPwGt6GkMA600GAurU6w0EEEAAAX0B+MgCwLpf/"
    "ovW60+1AXwwrEdaAoqMAAIIIIAAAqIbltE6CEBCt79EKnW7ScQhvSpD3NIrMcS/"
    "vqxBmtQXZDQG5DMgADkGFECyAQiQxoADWA2IAJMBFKA34AKUBmiAxoAOiBoez4ZvsmUEy0sAAAAASUVORK5CYII=";

Message Say(Role role, std::string text) {
  Message m;
  m.role = role;
  m.parts.push_back(Part::Text(std::move(text)));
  return m;
}

}  // namespace

Result<int> SeedDemoHistory(Store& store) {
  ASSIGN_OR_RETURN(SessionPage existing,
                   store.ListSessions({.limit = 1, .archived = ArchiveFilter::kAll}));
  if (!existing.sessions.empty()) return 0;

  ASSIGN_OR_RETURN(Session archived, store.CreateSession({.title = "Old experiment: tabs or spaces",
                                                          .metadata_json = R"({"demo":true})"}));
  RETURN_IF_ERROR(store.Append(archived.id, Say(Role::kUser, "Tabs or spaces?")));
  RETURN_IF_ERROR(
      store.Append(archived.id, Say(Role::kAssistant, "Whatever your formatter says.")));
  RETURN_IF_ERROR(store.SetArchived(archived.id, true));

  ASSIGN_OR_RETURN(
      Session picture,
      store.CreateSession({.title = "What is in this picture?",
                           .metadata_json = R"({"demo":true,"project":"/home/demo/photos"})"}));
  Message ask = Say(Role::kUser, "What is in this picture?");
  ask.parts.push_back(Part::ImageFromDataUri(kDemoPicture));
  RETURN_IF_ERROR(store.Append(picture.id, ask));
  RETURN_IF_ERROR(store.Append(
      picture.id, Say(Role::kAssistant,
                      "A small landscape: a **blue sky**, a yellow sun in the top right corner "
                      "and a green hill in the foreground.")));

  ASSIGN_OR_RETURN(
      Session build,
      store.CreateSession({.title = "Why does the build fail?",
                           .metadata_json = R"({"demo":true,"project":"/home/demo/app"})"}));
  RETURN_IF_ERROR(
      store.Append(build.id, Say(Role::kSystem, "You are a careful coding assistant.")));
  RETURN_IF_ERROR(store.Append(
      build.id,
      Say(Role::kUser, "The build fails with `undefined reference to parse_config`. Why?")));
  Message look = Say(Role::kAssistant, "Let me look at the build file first.");
  look.parts.push_back(Part::ToolCall("call_1", "read_file", R"({"path":"CMakeLists.txt"})"));
  look.model = "demo-model";
  RETURN_IF_ERROR(store.Append(build.id, look));
  Message result;
  result.role = Role::kTool;
  result.parts.push_back(Part::ToolResult(
      "call_1", "add_executable(app main.cc)\ntarget_link_libraries(app PRIVATE fmt)"));
  RETURN_IF_ERROR(store.Append(build.id, result));
  Message answer = Say(Role::kAssistant,
                       "## The cause\n\n`config.cc` is never compiled, so the linker cannot find "
                       "`parse_config`.\n\n## The fix\n\nAdd it to the executable:\n\n"
                       "```cmake\nadd_executable(app main.cc config.cc)\n```\n\n"
                       "- rebuild with `cmake --build build`\n- run the tests again");
  answer.model = "demo-model";
  answer.usage = Usage{.input_tokens = 812, .output_tokens = 96};
  ASSIGN_OR_RETURN(AppendResult fixed, store.Append(build.id, answer));
  RETURN_IF_ERROR(store.Append(build.id, Say(Role::kUser, "That worked, thank you!")));

  ASSIGN_OR_RETURN(
      Session fork,
      store.ForkSession(build.id, fixed.seq - 1,
                        {.title = "Why does the build fail? (try a glob instead)",
                         .metadata_json = R"({"demo":true,"project":"/home/demo/app"})"}));
  RETURN_IF_ERROR(store.Append(
      fork.id, Say(Role::kAssistant,
                   "Another way: `file(GLOB SOURCES *.cc)` then `add_executable(app "
                   "${SOURCES})`; simpler, but CMake will not notice new files by itself.")));

  ASSIGN_OR_RETURN(Session long_one, store.CreateSession({.title = "Planning the release",
                                                          .metadata_json = R"({"demo":true})"}));
  for (int i = 1; i <= 6; ++i) {
    RETURN_IF_ERROR(store.Append(long_one.id, Say(i % 2 ? Role::kUser : Role::kAssistant,
                                                  "Release checklist item " + std::to_string(i) +
                                                      ": " + (i % 2 ? "what is left?" : "done."))));
  }
  RETURN_IF_ERROR(store.Compact(long_one.id, {.from_seq = 1,
                                              .to_seq = 4,
                                              .summary = "Items 1 to 4 of the release checklist "
                                                         "were reviewed and are done.",
                                              .strategy = "llm-summary",
                                              .model = "demo-model"}));
  RETURN_IF_ERROR(store.Append(long_one.id, Say(Role::kUser, "Ship it.")));
  return 5;
}

bool IsDemoSession(const Session& session) {
  if (session.metadata_json.empty()) return false;
  Result<nlohmann::json> metadata = ParseJson(session.metadata_json);
  if (!metadata || !metadata->is_object()) return false;
  auto it = metadata->find(kDemoMetadataKey);
  return it != metadata->end() && it->is_boolean() && it->get<bool>();
}

Result<std::vector<Session>> ListDemoSessions(Store& store) {
  // A full scan: the list filter compares metadata as text, which the two
  // backends spell differently for a JSON `true` ("1" and "true").
  std::vector<Session> demo;
  ListOptions page{.limit = 1000, .archived = ArchiveFilter::kAll};
  do {
    ASSIGN_OR_RETURN(SessionPage sessions, store.ListSessions(page));
    for (Session& s : sessions.sessions) {
      if (IsDemoSession(s)) demo.push_back(std::move(s));
    }
    page.cursor = std::move(sessions.next_cursor);
  } while (!page.cursor.empty());
  // Forks first: a session is deleted after those forked from it.
  std::stable_partition(demo.begin(), demo.end(),
                        [](const Session& s) { return !s.parent_id.empty(); });
  return demo;
}

Result<int> RemoveDemoHistory(Store& store) {
  ASSIGN_OR_RETURN(std::vector<Session> demo, ListDemoSessions(store));
  int removed = 0;
  for (const Session& s : demo) {
    RETURN_IF_ERROR(store.DeleteSession(s.id));
    ++removed;
  }
  return removed;
}

}  // namespace sessiondb::server
