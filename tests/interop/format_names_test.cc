// The import and export formats' names: every value has one, it parses back,
// and a name that is none of them is refused with the list of valid ones
// (what the CLI, the HTTP API and MCP answer for --format or "format").
#include <string>

#include "gtest/gtest.h"
#include "sessiondb/interop.h"

namespace sessiondb {
namespace {

constexpr ImportFormat kEveryImportFormat[] = {
    ImportFormat::kSnapshot, ImportFormat::kAcdc,    ImportFormat::kExtremis,
    ImportFormat::kAgentsKt, ImportFormat::kPixir,   ImportFormat::kClaudeCode,
    ImportFormat::kCodex,    ImportFormat::kChatGpt, ImportFormat::kClaudeAi,
};
constexpr ExportFormat kEveryExportFormat[] = {
    ExportFormat::kSnapshot, ExportFormat::kAcdc,  ExportFormat::kAgentsKt,
    ExportFormat::kMarkdown, ExportFormat::kJsonl,
};

TEST(ImportFormatNames, EveryFormatRoundTripsThroughItsName) {
  std::vector<std::string_view> names;
  for (ImportFormat f : kEveryImportFormat) {
    names.push_back(ImportFormatName(f));
    auto parsed = ParseImportFormat(ImportFormatName(f));
    ASSERT_TRUE(parsed) << ImportFormatName(f);
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(names, ImportFormats());
  EXPECT_EQ(names,
            (std::vector<std::string_view>{"snapshot", "ac-dc", "extremis", "agents-kt", "pixir",
                                           "claude-code", "codex", "chatgpt", "claude-ai"}));
}

TEST(ImportFormatNames, AnUnknownNameIsRefusedWithTheValidOnes) {
  for (std::string_view name : {"", "Snapshot", "claude_code", "markdown"}) {
    auto parsed = ParseImportFormat(name);
    ASSERT_FALSE(parsed) << name;
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.error().message(),
              "unknown import format '" + std::string(name) +
                  "'; expected one of: snapshot, ac-dc, extremis, agents-kt, pixir, claude-code, "
                  "codex, chatgpt, claude-ai");
  }
}

TEST(ExportFormatNames, EveryFormatRoundTripsThroughItsName) {
  std::vector<std::string_view> names;
  for (ExportFormat f : kEveryExportFormat) {
    names.push_back(ExportFormatName(f));
    auto parsed = ParseExportFormat(ExportFormatName(f));
    ASSERT_TRUE(parsed) << ExportFormatName(f);
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(names, ExportFormats());
  EXPECT_EQ(names,
            (std::vector<std::string_view>{"snapshot", "ac-dc", "agents-kt", "markdown", "jsonl"}));
}

TEST(ExportFormatNames, AnUnknownNameIsRefusedWithTheValidOnes) {
  for (std::string_view name : {"", "codex", "JSONL", "md"}) {
    auto parsed = ParseExportFormat(name);
    ASSERT_FALSE(parsed) << name;
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.error().message(),
              "unknown export format '" + std::string(name) +
                  "'; expected one of: snapshot, ac-dc, agents-kt, markdown, jsonl");
  }
}

}  // namespace
}  // namespace sessiondb
