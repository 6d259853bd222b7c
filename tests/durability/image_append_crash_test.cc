// Crash safety of image ingest: a child process appends messages of one or
// three large images given as data URIs (durable mode, so their blobs are
// staged: written while they are hashed, synced in the background, named by
// PutAll) and is killed with SIGKILL at random moments. Afterwards every
// message the store holds, acknowledged or not, has each of its images
// readable and byte-equal to what was sent; every acknowledged append is
// there; and no file under blobs/sha256/ holds bytes other than those its
// name is the hash of (a half-written blob under a final name).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "blob/data_uri.h"
#include "blob/sha256.h"
#include "durability/killed_child.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kRounds = 16;

// How many images message `i` of `round` carries, and image `k` of it: a PNG
// of 160 to 600 KiB (past the size PrepareMessage stages), whose bytes the
// parent makes again from the message's text.
int ImagesOf(int i) { return i % 3 == 0 ? 3 : 1; }

std::string ImageOf(int round, int i, int k) {
  const std::string salt =
      "r" + std::to_string(round) + "i" + std::to_string(i) + "k" + std::to_string(k);
  const size_t padding = (160 + static_cast<size_t>((round * 7 + i * 13 + k * 29) % 440)) * 1024;
  return MakePng(32, 32, salt, padding);
}

std::string TextOf(int round, int i) {
  return "round " + std::to_string(round) + " message " + std::to_string(i);
}

// Runs in the child: append forever, reporting "seq message_id\n" on `ack_fd`
// after each append returns success.
[[noreturn]] void AppendImagesUntilKilled(const std::string& dir, int ack_fd, int round) {
  auto store = Store::Open(dir);  // durable by default
  if (!store) _exit(2);
  for (int i = 0;; ++i) {
    Message m;
    m.parts.push_back(Part::Text(TextOf(round, i)));
    for (int k = 0; k < ImagesOf(i); ++k) {
      m.parts.push_back(
          Part::ImageFromDataUri(blob::MakeDataUri("image/png", ImageOf(round, i, k))));
    }
    auto r = (*store)->Append("pictures", m);
    if (!r) _exit(3);
    std::string line = std::to_string(r->seq) + " " + r->message_id + "\n";
    if (write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
  }
}

// Every file under sha256/ whose bytes do not hash to its name.
std::vector<std::string> MisnamedBlobFiles(const std::string& store_dir) {
  std::vector<std::string> bad;
  const fs::path root = fs::path(store_dir) / "blobs" / "sha256";
  for (auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (blob::Sha256Hex(bytes.str()) != e.path().filename().string()) {
      bad.push_back(e.path().string());
    }
  }
  return bad;
}

TEST(ImageAppendCrash, EveryStoredImageIsWholeAfterSigkillMidIngest) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  {
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "pictures"}));
  }
  std::mt19937 rng(20261128);
  std::uniform_int_distribution<int> delay_us(3'000, 150'000);
  std::map<int64_t, std::string> acknowledged;  // seq -> message id
  size_t image_reads = 0;                       // every round reads every stored image again

  for (int round = 0; round < kRounds; ++round) {
    const KilledChild child =
        RunChildAndKill([&](int ack_fd) { AppendImagesUntilKilled(store_dir, ack_fd, round); },
                        std::chrono::microseconds(delay_us(rng)), KillClock::kFromFirstAck);
    ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;

    std::istringstream lines(child.acks);
    int64_t seq;
    std::string id;
    while (lines >> seq >> id) acknowledged[seq] = id;

    // No final name holds a torn or foreign blob, even one no event names yet.
    EXPECT_EQ(MisnamedBlobFiles(store_dir), std::vector<std::string>()) << "round " << round;

    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store) << store.error().ToString();
    auto messages = (*store)->ReadMessages("pictures");
    ASSERT_TRUE(messages) << messages.error().ToString();
    std::map<int64_t, std::string> present;
    for (const Message& m : *messages) {
      present[m.seq] = m.id;
      // Every stored message, acknowledged or committed just before the
      // kill, has its images whole: the bytes sent, under their names.
      int msg_round = -1, msg_index = -1;
      ASSERT_EQ(std::sscanf(m.Text().c_str(), "round %d message %d", &msg_round, &msg_index), 2)
          << m.Text();
      int k = 0;
      for (const Part& p : m.parts) {
        if (p.type != PartType::kImage) continue;
        ASSERT_TRUE(p.resource) << "seq " << m.seq;
        EXPECT_FALSE(p.resource->missing) << "seq " << m.seq << " image " << k;
        auto bytes = (*store)->ReadBlob(p.resource->content_sha256, /*verify=*/true);
        ASSERT_TRUE(bytes) << "seq " << m.seq << " image " << k << ": " << bytes.error().ToString();
        EXPECT_TRUE(*bytes == ImageOf(msg_round, msg_index, k))
            << "seq " << m.seq << " image " << k << " differs from what was sent";
        ++k;
        ++image_reads;
      }
      EXPECT_EQ(k, ImagesOf(msg_index)) << "seq " << m.seq;
    }
    for (const auto& [ack_seq, ack_id] : acknowledged) {
      auto it = present.find(ack_seq);
      ASSERT_NE(it, present.end()) << "acknowledged seq " << ack_seq << " lost in round " << round;
      EXPECT_EQ(it->second, ack_id);
    }
  }
  auto store = Store::Open(store_dir);
  ASSERT_TRUE(store);
  auto report = (*store)->Verify();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->clean()) << report->missing.size() << " missing, " << report->corrupt.size()
                               << " corrupt";
  EXPECT_GT(acknowledged.size(), static_cast<size_t>(kRounds)) << "the child barely ran";
  std::cout << "acknowledged image appends across " << kRounds << " kills: " << acknowledged.size()
            << ", image reads compared byte for byte: " << image_reads << "\n";
}

}  // namespace
}  // namespace sessiondb::testing
