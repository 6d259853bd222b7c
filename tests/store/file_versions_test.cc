// File versions, the code checkpoints (Store::RecordFileVersion): a file's
// content as a tool call found it and as it left it, kept once by digest,
// listed by file or by agent session, kept alive by garbage collection while
// a version names it, and forgotten with the session they belong to.
#include <algorithm>

#include "blob/sha256.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

FileVersion Version(const std::string& agent, const std::string& call, const std::string& path,
                    FileVersionPhase phase, bool exists = true) {
  return FileVersion{.agent_session = agent,
                     .tool_use_id = call,
                     .file_path = path,
                     .phase = phase,
                     .exists = exists,
                     .tool = "Write",
                     .source = "hook",
                     .project = "/src/app"};
}

class FileVersions : public BackendTest {
 protected:
  // Records `content` (ignored for an absent file), on every backend,
  // encrypted PostgreSQL namespaces included; nullopt (and a failure) when
  // refused.
  std::optional<FileVersion> Record(const FileVersion& v, std::string_view content) {
    auto r = store_->RecordFileVersion(v, content);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? std::optional<FileVersion>(*r) : std::nullopt;
  }

  std::vector<FileVersion> List(const FileVersionQuery& q) {
    auto r = store_->ListFileVersions(q);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : std::vector<FileVersion>{};
  }
};

TEST_P(FileVersions, AreKeptOnceByDigestAndReadBack) {
  auto before = Record(Version("agent-1", "call-1", "/src/app/a.py", FileVersionPhase::kBefore),
                       "print('old')\n");
  ASSERT_TRUE(before);
  auto after = Record(Version("agent-1", "call-1", "/src/app/a.py", FileVersionPhase::kAfter),
                      "print('new')\n");
  ASSERT_TRUE(after);
  EXPECT_GT(after->id, before->id);
  EXPECT_EQ(after->sha256, blob::Sha256Hex("print('new')\n"));
  EXPECT_EQ(after->size, 13);
  EXPECT_GT(after->time_ms, 0);
  auto bytes = store_->ReadBlob(after->sha256);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  EXPECT_EQ(*bytes, "print('new')\n");

  // The same call, file and phase again (a retried hook): the first row, nothing new.
  auto again = Record(Version("agent-1", "call-1", "/src/app/a.py", FileVersionPhase::kAfter),
                      "something else\n");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id, after->id);
  EXPECT_EQ(again->sha256, after->sha256);
  EXPECT_EQ(List({}).size(), 2u);

  // Another call writing the same bytes shares the blob.
  auto same = Record(Version("agent-2", "call-9", "/src/app/b.py", FileVersionPhase::kAfter),
                     "print('new')\n");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->sha256, after->sha256);
  auto stats = store_->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->blobs, 2);
}

TEST_P(FileVersions, AnAbsentFileHasNoDigest) {
  auto created =
      Record(Version("agent-1", "call-1", "/src/app/new.py", FileVersionPhase::kBefore, false), "");
  ASSERT_TRUE(created);
  EXPECT_FALSE(created->exists);
  EXPECT_TRUE(created->sha256.empty());
  std::vector<FileVersion> listed = List({.file_path = "/src/app/new.py"});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_FALSE(listed[0].exists);
  EXPECT_EQ(listed[0].phase, FileVersionPhase::kBefore);
  EXPECT_EQ(listed[0].tool_use_id, "call-1");
}

TEST_P(FileVersions, ABeforeThatSaysNothingNewIsNotKeptAgain) {
  const std::string path = "/src/app/a.py";
  auto first = Record(Version("agent-1", "call-1", path, FileVersionPhase::kBefore), "v0\n");
  ASSERT_TRUE(first);
  auto wrote = Record(Version("agent-1", "call-1", path, FileVersionPhase::kAfter), "v1\n");
  ASSERT_TRUE(wrote);

  // The next edit finds the file as the last one left it: that "after" stands for it.
  auto next = Record(Version("agent-1", "call-2", path, FileVersionPhase::kBefore), "v1\n");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->id, wrote->id);
  EXPECT_EQ(next->phase, FileVersionPhase::kAfter);
  auto after2 = Record(Version("agent-1", "call-2", path, FileVersionPhase::kAfter), "v2\n");
  ASSERT_TRUE(after2);
  ASSERT_EQ(List({.file_path = path}).size(), 3u);

  // An import replaying call-2 after the hook saw it: its "after" says it all.
  auto replayed = Record(Version("agent-1", "call-2", path, FileVersionPhase::kBefore), "v1\n");
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->id, after2->id);

  // Someone else changed the file in between: that "before" is news.
  auto hand = Record(Version("agent-1", "call-3", path, FileVersionPhase::kBefore), "by hand\n");
  ASSERT_TRUE(hand);
  EXPECT_EQ(hand->phase, FileVersionPhase::kBefore);
  EXPECT_GT(hand->id, after2->id);
  auto after3 = Record(Version("agent-1", "call-3", path, FileVersionPhase::kAfter), "v3\n");
  ASSERT_TRUE(after3);

  // Another agent session finding the same bytes keeps its own "before":
  // its rewind has nothing else of the file to go back to.
  auto other = Record(Version("agent-2", "call-9", path, FileVersionPhase::kBefore), "v3\n");
  ASSERT_TRUE(other);
  EXPECT_GT(other->id, after3->id);
  auto other_after = Record(Version("agent-2", "call-9", path, FileVersionPhase::kAfter), "v4\n");
  ASSERT_TRUE(other_after);

  // After sessiondb's own write (a rewind's), the "before" is kept: a rewind
  // never stands on its own writes.
  FileVersion restore = Version("agent-2", "", path, FileVersionPhase::kAfter);
  restore.source = std::string(kCheckpointRestoreSource);
  ASSERT_TRUE(Record(restore, "v3\n"));
  auto after_restore =
      Record(Version("agent-2", "call-10", path, FileVersionPhase::kBefore), "v3\n");
  ASSERT_TRUE(after_restore);
  EXPECT_EQ(after_restore->phase, FileVersionPhase::kBefore);
  EXPECT_EQ(after_restore->tool_use_id, "call-10");
  EXPECT_EQ(List({.file_path = path}).size(), 9u);

  // A file that is still absent, as the last call left it, is no news either.
  const std::string gone = "/src/app/gone.py";
  ASSERT_TRUE(Record(Version("agent-1", "call-4", gone, FileVersionPhase::kBefore), "x\n"));
  auto removed = Record(Version("agent-1", "call-4", gone, FileVersionPhase::kAfter, false), "");
  ASSERT_TRUE(removed);
  auto still = Record(Version("agent-1", "call-5", gone, FileVersionPhase::kBefore, false), "");
  ASSERT_TRUE(still);
  EXPECT_EQ(still->id, removed->id);
}

TEST_P(FileVersions, AreListedByFileBySessionAndInPages) {
  for (int i = 0; i < 6; ++i) {
    const std::string agent = i % 2 ? "odd" : "even";
    const std::string path = i < 3 ? "/p/x.c" : "/p/y.c";
    Record(Version(agent, "call-" + std::to_string(i), path, FileVersionPhase::kAfter),
           "v" + std::to_string(i));
  }
  std::vector<FileVersion> x = List({.file_path = "/p/x.c"});
  ASSERT_EQ(x.size(), 3u);
  EXPECT_TRUE(
      std::is_sorted(x.begin(), x.end(), [](const auto& a, const auto& b) { return a.id < b.id; }));
  std::vector<FileVersion> odd = List({.agent_sessions = {"odd"}});
  ASSERT_EQ(odd.size(), 3u);
  for (const FileVersion& v : odd) EXPECT_EQ(v.agent_session, "odd");
  std::vector<FileVersion> odd_y = List({.file_path = "/p/y.c", .agent_sessions = {"odd"}});
  ASSERT_EQ(odd_y.size(), 2u);  // calls 3 and 5
  std::vector<FileVersion> page = List({.limit = 4});
  ASSERT_EQ(page.size(), 4u);
  std::vector<FileVersion> rest = List({.after_id = page.back().id});
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].tool_use_id, "call-4");
  std::vector<FileVersion> both = List({.agent_sessions = {"odd", "even"}});
  EXPECT_EQ(both.size(), 6u);
}

TEST_P(FileVersions, RefuseWhatTheyCannotKeep) {
  EXPECT_EQ(store_->RecordFileVersion(Version("a", "c", "", FileVersionPhase::kAfter), "x")
                .error()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->RecordFileVersion(Version("", "c", "/x", FileVersionPhase::kAfter), "x")
                .error()
                .code(),
            StatusCode::kInvalidArgument);
  const std::string huge(static_cast<size_t>(kMaxFileVersionBytes) + 1, 'a');
  auto too_big = store_->RecordFileVersion(Version("a", "c", "/x", FileVersionPhase::kAfter), huge);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_big.error().message().find("at most"), std::string::npos);
  EXPECT_EQ(store_->ListFileVersions({.limit = 0}).error().code(), StatusCode::kInvalidArgument);
  std::vector<std::string> many(101, "s");
  EXPECT_EQ(store_->ListFileVersions({.agent_sessions = many}).error().code(),
            StatusCode::kInvalidArgument);
  // Nothing was kept by the refusals.
  EXPECT_TRUE(List({}).empty());
}

TEST_P(FileVersions, GarbageCollectionKeepsWhatAVersionNames) {
  auto v = Record(Version("agent-1", "call-1", "/p/kept.txt", FileVersionPhase::kAfter),
                  "kept by its version\n");
  ASSERT_TRUE(v);
  auto gc = store_->CollectGarbage({.grace_ms = 0});
  ASSERT_TRUE(gc) << gc.error().ToString();
  EXPECT_EQ(gc->blobs_deleted, 0);
  auto bytes = store_->ReadBlob(v->sha256);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  EXPECT_EQ(*bytes, "kept by its version\n");
  auto verify = store_->Verify();
  ASSERT_TRUE(verify) << verify.error().ToString();
  EXPECT_TRUE(verify->missing.empty());
}

TEST_P(FileVersions, ErasingASessionErasesItsVersionsAndOnlyTheirs) {
  // An imported Claude Code session carries the agent's own session id.
  ASSERT_TRUE(store_->CreateSession(
      {.id = "imported", .metadata_json = R"({"source_session_id":"claude-1"})"}));
  ASSERT_TRUE(store_->CreateSession({.id = "other"}));
  auto mine = Record(Version("claude-1", "c1", "/p/secret.txt", FileVersionPhase::kAfter),
                     "only the erased session wrote this\n");
  auto direct = Record(Version("imported", "c2", "/p/direct.txt", FileVersionPhase::kAfter),
                       "recorded under the store's own id\n");
  auto theirs = Record(Version("other", "c3", "/p/other.txt", FileVersionPhase::kAfter),
                       "another session's file\n");
  ASSERT_TRUE(mine && direct && theirs);

  auto receipt = store_->Erase({.session_ids = {"imported"}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(ErasedCount(*receipt, "file_versions"), 2);
  std::vector<FileVersion> left = List({});
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].agent_session, "other");
  EXPECT_EQ(store_->ReadBlob(mine->sha256).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadBlob(direct->sha256).error().code(), StatusCode::kNotFound);
  auto kept = store_->ReadBlob(theirs->sha256);
  ASSERT_TRUE(kept) << kept.error().ToString();
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check) << check.error().ToString();
  EXPECT_TRUE(check->problems.empty()) << check->problems.front();
}

TEST_P(FileVersions, ErasingEverythingErasesVersionsNoSessionOwns) {
  auto v = Record(Version("hook-only", "c1", "/p/f.txt", FileVersionPhase::kAfter), "bytes\n");
  ASSERT_TRUE(v);
  auto receipt = store_->Erase({.everything = true});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_TRUE(List({}).empty());
  EXPECT_EQ(store_->ReadBlob(v->sha256).error().code(), StatusCode::kNotFound);
}

TEST_P(FileVersions, SecretsInAFileAreRedactedBeforeTheyAreKept) {
  RedactionSettings on;
  on.enabled = true;
  ASSERT_TRUE(store_->SetRedactionSettings(on).ok());
  const std::string key = "AKIA" + std::string("Q7RZ3MXK2VBN5TLW");
  auto v = Record(Version("agent-1", "c1", "/p/.env", FileVersionPhase::kAfter),
                  "AWS_ACCESS_KEY_ID=" + key + "\n");
  ASSERT_TRUE(v);
  auto bytes = store_->ReadBlob(v->sha256);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  EXPECT_EQ(bytes->find(key), std::string::npos) << *bytes;
  EXPECT_EQ(v->sha256, blob::Sha256Hex(*bytes));
}

SESSIONDB_FOR_EACH_BACKEND(FileVersions);

}  // namespace
}  // namespace sessiondb::testing
