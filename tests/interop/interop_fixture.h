// Shared by the interop suites: embedded stores in a temporary directory
// with a fake clock, a realistic session to export (text, images, a tool
// call and its result, reasoning, usage, a resource view, a compaction, a
// fork, an archived chat, a pruned stub), and small file helpers.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "sessiondb/interop.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// The golden samples: tests/golden/interop/<format>/<name> (TESTDATA_DIR is tests/data).
inline std::filesystem::path Golden(const std::string& format, const std::string& name) {
  return std::filesystem::path(SESSIONDB_TESTDATA_DIR).parent_path() / "golden" / "interop" /
         format / name;
}

class InteropTest : public ::testing::Test {
 protected:
  // A store at dir_/<name>, opened with the fake clock.
  std::unique_ptr<Store> OpenStore(const std::string& name) {
    StoreOptions options;
    options.clock = [this] { return now_ms_ += 1000; };
    options.warn = [this](std::string_view w) { warnings_.emplace_back(w); };
    auto opened = Store::Open(dir_.Sub(name), options);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }

  static Message Msg(Role role, std::vector<Part> parts) {
    Message m;
    m.role = role;
    m.parts = std::move(parts);
    return m;
  }

  // Fills `store` with the realistic sample; returns the main session's id.
  // Sessions: "chat-main" (7 events: images, tool use, view, compaction),
  // "chat-fork" (a fork of chat-main at seq 3, with 1 own message),
  // "chat-archived" (archived, a pruned stub and its compaction).
  std::string FillSample(Store& store) {
    png_ = MakePng(4, 3, "sample-png");
    jpeg_ = MakeJpeg(8, 6, "sample-jpeg");
    EXPECT_TRUE(store.CreateSession(
        NewSession{.id = "chat-main", .metadata_json = R"({"project":"/src/app"})"}));
    Message user = Msg(Role::kUser, {Part::Text("What is in these pictures?"),
                                     Part::ImageFromBytes(png_, "image/png", "cat.png"),
                                     Part::ImageFromBytes(jpeg_, "image/jpeg", "dog.jpg")});
    auto first = store.Append("chat-main", user);
    EXPECT_TRUE(first) << first.error().ToString();
    Message tool_call = Msg(Role::kAssistant, {Part::Reasoning("Let me look closer."),
                                               Part::ToolCall("call_1", "zoom", R"({"x":1})")});
    tool_call.model = "gpt-test";
    tool_call.provider = "openai";
    tool_call.usage = Usage{.input_tokens = 120, .output_tokens = 30, .cached_tokens = 5};
    EXPECT_TRUE(store.Append("chat-main", tool_call));
    EXPECT_TRUE(
        store.Append("chat-main", Msg(Role::kTool, {Part::ToolResult("call_1", "zoomed: a cat")})));
    Message answer = Msg(Role::kAssistant, {Part::Text("A cat and a dog.")});
    answer.metadata_json = R"({"latency_ms":42})";
    EXPECT_TRUE(store.Append("chat-main", answer));
    EXPECT_TRUE(
        store.RecordResourceView("chat-main", first->resources[0].resource_id, "look again"));
    EXPECT_TRUE(store.Compact("chat-main", CompactionRequest{.from_seq = 1,
                                                             .to_seq = 4,
                                                             .summary = "Cat and dog.",
                                                             .strategy = "llm-summary",
                                                             .model = "gpt-test"}));
    EXPECT_TRUE(store.Append("chat-main", Msg(Role::kUser, {Part::Text("Thanks!")})));

    auto fork = store.ForkSession("chat-main", 3, NewSession{.id = "chat-fork"});
    EXPECT_TRUE(fork) << fork.error().ToString();
    EXPECT_TRUE(store.Append(
        "chat-fork", Msg(Role::kUser, {Part::Text("Another idea"),
                                       Part::ImageFromBytes(MakePng(2, 2, "fork"), "image/png")})));

    EXPECT_TRUE(store.CreateSession(NewSession{.id = "chat-archived", .title = "Old"}));
    EXPECT_TRUE(
        store.Append("chat-archived",
                     Msg(Role::kUser, {Part::Text("old question"),
                                       Part::ImageFromBytes(MakePng(5, 5, "old"), "image/png")})));
    EXPECT_TRUE(store.Append("chat-archived", Msg(Role::kAssistant, {Part::Text("old answer")})));
    auto c = store.Compact("chat-archived",
                           CompactionRequest{.from_seq = 1, .to_seq = 1, .summary = "asked"});
    EXPECT_TRUE(c);
    EXPECT_TRUE(store.PruneCompaction("chat-archived", c->seq));
    EXPECT_TRUE(store.SetArchived("chat-archived", true).ok());
    return "chat-main";
  }

  std::vector<Event> Events(Store& store, const std::string& id, int64_t from = 1) {
    auto e = store.ReadEvents(id, from);
    EXPECT_TRUE(e) << e.error().ToString();
    return e ? *e : std::vector<Event>{};
  }

  int64_t SessionCount(Store& store) {
    auto stats = store.Stats();
    EXPECT_TRUE(stats);
    return stats ? stats->sessions : -1;
  }

  TempDir dir_;
  int64_t now_ms_ = 1'750'000'000'000;
  std::vector<std::string> warnings_;
  std::string png_;
  std::string jpeg_;
};

}  // namespace sessiondb::testing
