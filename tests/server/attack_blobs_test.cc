// Blobs seen from outside: a namespace that names another's digest gets
// nothing (not the bytes, not whether anyone holds them), damaged bytes never
// go out as sound on any face, and a Range of a large blob costs the server a
// piece of memory, not the blob. Each against the real binary and server.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "cli/cli_fixture.h"
#include "server/server_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Store> OpenStore(const std::string& location) {
  auto opened = Store::Open(location);
  EXPECT_TRUE(opened) << opened.error().ToString();
  return opened ? std::move(*opened) : nullptr;
}

void AppendImage(Store& store, const std::string& session, const std::string& text,
                 const std::string& png) {
  ASSERT_TRUE(store.CreateSession({.id = session})) << session;
  Message m;
  m.parts = {Part::Text(text), Part::ImageFromBytes(png, "image/png")};
  auto appended = store.Append(session, m);
  ASSERT_TRUE(appended) << appended.error().ToString();
}

// `text` with every occurrence of `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The kB of the process's peak resident set (VmHWM in /proc/PID/status).
int64_t PeakRssKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmHWM:")) return std::stoll(line.substr(6));
  }
  return -1;
}

class AttackBlobs : public Cli {
 protected:
  // A part of show --json's first message.
  json FirstImagePart(const std::string& session, bool data_uris) {
    std::vector<std::string> args = {"--json", "show", session};
    if (data_uris) args.push_back("--data-uris");
    CliRun r = Sdb(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = r.Json();
    for (const json& part : j["messages"][0]["parts"]) {
      if (part.value("type", "") == "image") return part;
    }
    ADD_FAILURE() << "no image part in " << r.out;
    return json();
  }
};

// ---- A namespace never borrows another's blob by digest ----------------------

TEST_F(AttackBlobs, APostgresNamespaceCannotBorrowAnotherNamespacesBlobByDigest) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  const std::string alice = pg.uri() + "&namespace=alice";
  const std::string secret = MakePng(8, 8, "alice's secret picture");
  const std::string secret_sha = blob::Sha256Hex(secret);
  const std::string unheld = MakePng(8, 8, "bytes nobody stored");
  const std::string unheld_sha = blob::Sha256Hex(unheld);
  {
    auto a = OpenStore(alice);
    ASSERT_TRUE(a);
    AppendImage(*a, "mine", "alice's own", secret);
  }

  // The attacker's snapshot names alice's digest and one nobody holds, with
  // no bytes for either: made in an embedded store of its own, blobs cut out.
  const std::string attacker = dir_.Sub("attacker");
  {
    auto e = OpenStore(attacker);
    ASSERT_TRUE(e);
    AppendImage(*e, "borrow", "names alice's digest", secret);
    AppendImage(*e, "unheld", "names a digest nobody holds", unheld);
  }
  store_ = attacker;
  const std::string full = dir_.Sub("full.json");
  ASSERT_EQ(Sdb({"export", "--format", "snapshot", "--out", full}).exit_code, 0);
  json snapshot = json::parse(Slurp(full));
  for (json& s : snapshot["sessions"]) s["blobs"] = json::object();
  const std::string bare = WriteFile("bare.json", snapshot.dump());
  // For `copy`: the attacker's store with the blob files gone.
  for (const std::string& sha : {secret_sha, unheld_sha}) {
    ASSERT_FALSE(FindBlob(sha).empty());
    fs::remove(FindBlob(sha));
  }

  // What a namespace can learn of a digest: the part, the blob route, and the
  // warnings. The digest alice holds must read exactly as the one nobody holds.
  auto expect_nothing_borrowed = [&](const std::string& ns, const std::string& how,
                                     const std::string& warnings) {
    SCOPED_TRACE(how);
    store_ = pg.uri() + "&namespace=" + ns;
    json borrowed = FirstImagePart("borrow", /*data_uris=*/true);
    json nobody = FirstImagePart("unheld", /*data_uris=*/true);
    EXPECT_TRUE(borrowed["data_uri"].is_null()) << borrowed.dump();
    EXPECT_EQ(borrowed["resource"].value("missing", false), true) << borrowed.dump();
    EXPECT_EQ(nobody["resource"].value("missing", false), true) << nobody.dump();
    auto b = OpenStore(store_);
    ASSERT_TRUE(b);
    auto read = b->ReadBlob(secret_sha);
    ASSERT_FALSE(read) << "namespace " << ns << " read alice's bytes";
    EXPECT_EQ(read.error().code(), StatusCode::kNotFound);
    EXPECT_EQ(ReplaceAll(read.error().message(), secret_sha, "D"),
              ReplaceAll(b->ReadBlob(unheld_sha).error().message(), unheld_sha, "D"));
    EXPECT_FALSE(b->OpenBlob(secret_sha));
    EXPECT_EQ(b->Stats()->blobs, 0);
    // And a later message may not name it either: the reference was not kept.
    Part named;
    named.type = PartType::kImage;
    named.resource = Resource{};
    named.resource->resource_id = "res-x";
    named.resource->content_sha256 = secret_sha;
    named.resource->mime = "image/png";
    Message m;
    m.parts = {named};
    EXPECT_FALSE(b->Append("borrow", m));
    // The import said the same of both digests (the server's stderr is not
    // kept for a store named by a URI: its answers were compared instead).
    if (how == "upload") return;
    EXPECT_TRUE(Contains(warnings, "blob " + secret_sha + " is missing in the source")) << warnings;
    EXPECT_TRUE(Contains(warnings, "blob " + unheld_sha + " is missing in the source")) << warnings;
  };

  // 1. `import` of the snapshot.
  store_ = pg.uri() + "&namespace=by-import";
  CliRun imported = Sdb({"import", bare});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  expect_nothing_borrowed("by-import", "import", imported.err);

  // 2. `copy` from the attacker's store.
  CliRun copied = Run({"copy", "--from", attacker, "--to", pg.uri() + "&namespace=by-copy"},
                      {.with_store = false});
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  expect_nothing_borrowed("by-copy", "copy", copied.err);

  // 3. The snapshot uploaded to a server working in a namespace.
  {
    ServerProcess server(pg.uri() + "&namespace=by-upload", {});
    ASSERT_TRUE(server.listening()) << server.log();
    auto c = server.Client();
    auto up = c->Post("/v1/import?filename=bare.json", Slurp(bare), "application/json");
    ASSERT_TRUE(up);
    ASSERT_EQ(up->status, 200) << up->body;
    auto got = c->Get("/v1/blobs/" + secret_sha);
    auto none = c->Get("/v1/blobs/" + unheld_sha);
    ASSERT_TRUE(got && none);
    EXPECT_EQ(got->status, 404);
    EXPECT_EQ(got->status, none->status);
    EXPECT_EQ(ReplaceAll(got->body, secret_sha, "D"), ReplaceAll(none->body, unheld_sha, "D"));
    EXPECT_FALSE(Contains(got->body, secret));
    auto msgs = c->Get("/v1/sessions/borrow/messages?data_uris=1");
    ASSERT_TRUE(msgs);
    EXPECT_FALSE(Contains(msgs->body, blob::Base64Encode(secret))) << msgs->body;
    server.Stop();
    expect_nothing_borrowed("by-upload", "upload", server.log());
  }

  // Alice is untouched, and a namespace that holds the blob may still name it.
  auto a = OpenStore(alice);
  ASSERT_TRUE(a);
  EXPECT_EQ(*a->ReadBlob(secret_sha), secret);
  store_ = alice;
  CliRun again = Sdb({"import", bare});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_FALSE(Contains(again.err, secret_sha)) << again.err;
  json own = FirstImagePart("borrow", /*data_uris=*/true);
  EXPECT_EQ(own.value("data_uri", ""), "data:image/png;base64," + blob::Base64Encode(secret));
}

// ---- Damaged bytes never go out as sound -------------------------------------

// Every face that emits blob bytes, once the bytes of an image of session
// "s" are damaged: each names the blob or marks the part, and none gives out
// the damaged bytes (nor the original ones under their name).
class DamagedBlobs : public AttackBlobs {
 protected:
  void Check(const std::string& png, const std::string& damaged) {
    const std::string sha = blob::Sha256Hex(png);
    const std::string bad64 = blob::Base64Encode(damaged);
    const std::string good64 = blob::Base64Encode(png);
    auto clean = [&](const std::string& text) {
      return !Contains(text, bad64) && !Contains(text, good64) && !Contains(text, damaged);
    };

    // show --data-uris: the part is marked (null data URI), the blob named.
    CliRun shown = Sdb({"--json", "show", "s", "--data-uris"});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_TRUE(clean(shown.out));
    EXPECT_TRUE(Contains(shown.err, "blob " + sha + " is damaged")) << shown.err;
    EXPECT_TRUE(shown.Json()["messages"][0]["parts"][1]["data_uri"].is_null()) << shown.out;

    // Exports: refused, naming the blob; nothing written under its digest.
    for (const std::string format : {"snapshot", "markdown", "ac-dc", "agents-kt"}) {
      const std::string out = dir_.Sub("export-" + format);
      CliRun exported = Sdb({"export", "--format", format, "--out", out});
      EXPECT_NE(exported.exit_code, 0) << format << ": " << exported.out;
      EXPECT_TRUE(Contains(exported.err, "blob " + sha + " is damaged")) << format << exported.err;
      if (fs::exists(out)) {
        for (const auto& e : fs::recursive_directory_iterator(out)) {
          if (e.is_regular_file()) {
            EXPECT_TRUE(clean(Slurp(e.path()))) << e.path();
          }
        }
      }
    }

    // project: the image is left out as MISSING (invariant 5), the blob named.
    CliRun projected = Sdb({"project", "s"});
    EXPECT_EQ(projected.exit_code, 0) << projected.err;
    EXPECT_TRUE(clean(projected.out));
    EXPECT_TRUE(Contains(projected.out, "MISSING")) << projected.out;
    EXPECT_TRUE(Contains(projected.err, "blob " + sha + " is damaged")) << projected.err;

    // The server: data URIs, the blob whole and in part; it serves on.
    ServerProcess server(store_, {});
    ASSERT_TRUE(server.listening()) << server.log();
    auto c = server.Client();
    auto msgs = c->Get("/v1/sessions/s/messages?data_uris=1");
    ASSERT_TRUE(msgs);
    EXPECT_EQ(msgs->status, 200);
    EXPECT_TRUE(clean(msgs->body));
    json part = Body(msgs)["messages"][0]["parts"][1];
    EXPECT_TRUE(part["data_uri"].is_null()) << part.dump();
    EXPECT_TRUE(Contains(part.value("data_uri_error", ""), "blob " + sha + " is damaged"))
        << part.dump();
    for (const char* range : {"", "bytes=0-0", "bytes=30-"}) {
      httplib::Headers h;
      if (*range) {
        h.emplace("Range", range);
      }
      auto r = c->Get("/v1/blobs/" + sha, h);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 500) << range;
      EXPECT_EQ(ErrorCode(r), "corruption") << range;
      EXPECT_TRUE(clean(r->body));
    }
    EXPECT_EQ(c->Get("/v1/health")->status, 200);
    server.Stop();

    // Nothing else changed: the message reads, verify names the blob.
    CliRun plain = Sdb({"--json", "show", "s"});
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(plain.Json()["messages"][0]["parts"][0]["text"], "look");
    CliRun verified = Sdb({"--json", "verify"});
    EXPECT_TRUE(Contains(verified.out, sha)) << verified.out;
  }

  std::string png_ = MakePng(16, 16, "about to be damaged");
  std::string damaged_ = [this] {
    std::string d = png_;
    d[20] = 'X';
    return d;
  }();
};

TEST_F(DamagedBlobs, AreNamedAndNeverHandedOutByAnyFaceOfTheEmbeddedStore) {
  {
    auto s = OpenStore(store_);
    ASSERT_TRUE(s);
    AppendImage(*s, "s", "look", png_);
  }
  const std::string path = FindBlob(blob::Sha256Hex(png_));
  ASSERT_FALSE(path.empty());
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('X');
  }
  ASSERT_EQ(Slurp(path), damaged_);
  Check(png_, damaged_);
}

TEST_F(DamagedBlobs, AreNamedAndNeverHandedOutByAnyFaceOfAPostgresStore) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  store_ = pg.uri();
  {
    auto s = OpenStore(store_);
    ASSERT_TRUE(s);
    AppendImage(*s, "s", "look", png_);
  }
  pg.Query("UPDATE blobs SET bytes = set_byte(bytes, 20, 88)");
  Check(png_, damaged_);
}

// ---- A Range costs a piece, not the blob -------------------------------------

void ExpectRangeReadsStayBounded(const std::string& store) {
  constexpr int64_t kBlobBytes = int64_t{64} << 20;
  constexpr int kReaders = 16;
  std::string bytes(static_cast<size_t>(kBlobBytes), '\0');
  for (size_t i = 0; i < bytes.size(); i += 4096) bytes[i] = static_cast<char>(i / 4096);
  const std::string sha = blob::Sha256Hex(bytes);
  {
    auto s = OpenStore(store);
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->CreateSession({.id = "big"}));
    Message m;
    m.parts = {Part::FileFromBytes(bytes, "application/octet-stream", "big.bin")};
    auto appended = s->Append("big", m);
    ASSERT_TRUE(appended) << appended.error().ToString();
  }
  ServerProcess server(store, {});
  ASSERT_TRUE(server.listening()) << server.log();
  ASSERT_EQ(server.Client()->Get("/v1/health")->status, 200);
  const int64_t before_kb = PeakRssKb(server.pid());
  ASSERT_GT(before_kb, 0);

  std::atomic<int> served{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&, i] {
      auto c = server.Client();
      const int64_t at = kBlobBytes - 1 - i * 4096;
      auto r = c->Get("/v1/blobs/" + sha,
                      {{"Range", "bytes=" + std::to_string(at) + "-" + std::to_string(at)}});
      if (r && r->status == 206 && r->body == bytes.substr(static_cast<size_t>(at), 1)) ++served;
    });
  }
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(served.load(), kReaders);
  const int64_t grew_kb = PeakRssKb(server.pid()) - before_kb;
  // Whole blobs in memory would be kReaders x 64 MiB; a piece each is < 1 MiB.
  EXPECT_LT(grew_kb, 32 * 1024) << "the peak RSS grew by " << grew_kb << " kB";
  // And the whole blob still comes out whole.
  auto whole = server.Client()->Get("/v1/blobs/" + sha);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->status, 200);
  EXPECT_TRUE(whole->body == bytes);
}

TEST_F(AttackBlobs, ConcurrentRangeReadsOfALargeBlobKeepTheEmbeddedServerSmall) {
  ExpectRangeReadsStayBounded(store_);
}

TEST_F(AttackBlobs, ConcurrentRangeReadsOfALargeBlobKeepThePostgresServerSmall) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  ExpectRangeReadsStayBounded(pg.uri());
}

}  // namespace
}  // namespace sessiondb::testing
