// Vectors for imported history without the user asking (issue 38): after
// `sessiondb import` a vector or hybrid search finds the imported messages
// with no `sessiondb reindex` first, and search never tells the user to run
// it. An import embeds for a few seconds; a background child does the rest
// after the import has returned.
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class ImportVectorsCli : public Cli {
 protected:
  // A Claude Code transcript of two turns.
  std::string WriteTranscript() {
    const std::string session = "5e1f0c2a-1111-4222-8333-944455556666";
    json user = {
        {"type", "user"},
        {"uuid", "aaaaaaaa-0000-4000-8000-000000000001"},
        {"parentUuid", nullptr},
        {"sessionId", session},
        {"timestamp", "2025-06-01T10:00:00.000Z"},
        {"message", {{"role", "user"}, {"content", "why is the fibonacci function slow"}}}};
    json assistant = {
        {"type", "assistant"},
        {"uuid", "aaaaaaaa-0000-4000-8000-000000000002"},
        {"parentUuid", "aaaaaaaa-0000-4000-8000-000000000001"},
        {"sessionId", session},
        {"timestamp", "2025-06-01T10:00:05.000Z"},
        {"message",
         {{"role", "assistant"},
          {"content",
           json::array(
               {{{"type", "text"},
                 {"text", "Add memoization: cache each result so it is computed once."}}})}}}};
    return WriteFile(session + ".jsonl", user.dump() + "\n" + assistant.dump() + "\n");
  }

  // True when the assistant's answer (seq 2) is among the hits of a vector
  // search, by its vector: without vectors a vector search finds nothing.
  static bool FindsTheAnswer(const json& results) {
    for (const json& hit : results["hits"]) {
      if (hit["seq"] == 2 && hit["vector_rank"].get<int>() > 0) return true;
    }
    return false;
  }

  // A process that has ended (a zombie counts: a container's init may never
  // reap the re-parented child).
  static bool Ended(pid_t pid) {
    const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    return stat.empty() || paren == std::string::npos || paren + 2 >= stat.size() ||
           stat[paren + 2] == 'Z';
  }
};

TEST_F(ImportVectorsCli, AVectorSearchFindsAnImportedMessageWithNoReindex) {
  CliRun imported = Sdb({"--json", "import", WriteTranscript()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.Json()["embedded"], 2) << imported.out;
  EXPECT_EQ(imported.Json()["embedding_in_background"], 0) << imported.out;

  CliRun vector = Sdb({"--json", "search", "--mode", "vector", "memoization cache result"});
  ASSERT_EQ(vector.exit_code, 0) << vector.err;
  EXPECT_EQ(vector.Json()["pending_embeddings"], 0) << vector.out;
  EXPECT_TRUE(FindsTheAnswer(vector.Json())) << vector.out;

  // A message appended since has no vector yet: hybrid search finds it by
  // keyword and says nothing about reindexing.
  ASSERT_EQ(Sdb({"append", "5e1f0c2a-1111-4222-8333-944455556666", "memoization again"}).exit_code,
            0);
  CliRun pending = Sdb({"--json", "search", "memoization"});
  ASSERT_EQ(pending.exit_code, 0) << pending.err;
  ASSERT_EQ(pending.Json()["pending_embeddings"], 1) << pending.out;
  CliRun hybrid = Sdb({"search", "memoization"});
  ASSERT_EQ(hybrid.exit_code, 0) << hybrid.err;
  EXPECT_TRUE(Contains(hybrid.out, "again")) << hybrid.out;
  EXPECT_FALSE(Contains(hybrid.out + hybrid.err, "reindex")) << hybrid.out << hybrid.err;
  EXPECT_FALSE(Contains(hybrid.out + hybrid.err, "embedded")) << hybrid.out << hybrid.err;
}

// Past the inline time (0 s here) the import returns and a detached
// `sessiondb reindex` embeds what came in, then ends.
TEST_F(ImportVectorsCli, ALargeImportIsEmbeddedInTheBackgroundAfterItReturns) {
  CliRun imported = Run({"--json", "import", WriteTranscript()},
                        {.env = {{"SESSIONDB_INLINE_EMBED_SECONDS", "0"}}});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.Json()["embedded"], 0) << imported.out;
  EXPECT_EQ(imported.Json()["embedding_in_background"], 2) << imported.out;
  ASSERT_TRUE(imported.Json().contains("embedding_pid")) << imported.out;
  const pid_t child = imported.Json()["embedding_pid"].get<pid_t>();
  ASSERT_GT(child, 0) << imported.out;

  // The child ends by itself once it has embedded everything.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!Ended(child) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(Ended(child)) << "the background embedding is still running after 30 s";
  CliRun vector = Sdb({"--json", "search", "--mode", "vector", "memoization cache result"});
  ASSERT_EQ(vector.exit_code, 0) << vector.err;
  EXPECT_EQ(vector.Json()["pending_embeddings"], 0) << vector.out;
  EXPECT_TRUE(FindsTheAnswer(vector.Json())) << vector.out;
}

}  // namespace
}  // namespace sessiondb::testing
