#include "ingest_pipeline_floor.h"

#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "stats.h"

namespace sessiondb::bench {

// The same piece size as the store's staged writer (message_preparer.cc).
constexpr size_t kPieceBytes = 128 * 1024;

// Writes the pieces of one file at a time as they become ready, asking the
// kernel to write each out at once, then fdatasyncs the file. One thread for
// the whole run: the floor pays no thread start per image.
class PieceWriter {
 public:
  PieceWriter() : thread_([this] { Run(); }) {}
  ~PieceWriter() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // A new file: `fd` will receive `size` bytes of `bytes`, announced by Ready.
  void Start(int fd, const char* bytes, size_t size) {
    std::lock_guard lock(mu_);
    fd_ = fd;
    bytes_ = bytes;
    size_ = size;
    ready_ = 0;
    synced_ = false;
    ok_ = true;
  }
  void Ready(size_t n) {
    {
      std::lock_guard lock(mu_);
      ready_ = n;
    }
    cv_.notify_all();
  }
  // Blocks until the file is written and synced; false if a call failed.
  bool WaitSynced() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return synced_; });
    return ok_;
  }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    // Of the current file; a new one starts only after the last piece of
    // the one before, which resets it.
    size_t written = 0;
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || (fd_ >= 0 && ready_ > written); });
      if (stop_) return;
      const int fd = fd_;
      const size_t end = ready_;
      const char* bytes = bytes_;
      const size_t size = size_;
      lock.unlock();
      const bool last = end == size;
      bool ok = ::pwrite(fd, bytes + written, end - written, static_cast<off_t>(written)) ==
                static_cast<ssize_t>(end - written);
      ok = ok && ::sync_file_range(fd, static_cast<off_t>(written),
                                   static_cast<off_t>(end - written), SYNC_FILE_RANGE_WRITE) == 0;
      if (last) ok = ::fdatasync(fd) == 0 && ok;
      written = end;
      lock.lock();
      if (!ok) ok_ = false;
      if (last) {
        synced_ = true;
        fd_ = -1;
        written = 0;
        cv_.notify_all();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  int fd_ = -1;                  // guarded by mu_
  const char* bytes_ = nullptr;  // guarded by mu_
  size_t size_ = 0;              // guarded by mu_
  size_t ready_ = 0;             // guarded by mu_
  bool synced_ = false;          // guarded by mu_
  bool ok_ = true;               // guarded by mu_
  bool stop_ = false;            // guarded by mu_
  std::thread thread_;
};

struct PipelinedIngestFloor::State {
  explicit State(const std::string& dir, size_t images)
      : scene(std::filesystem::path(dir) / "pipelined-ingest-floor", images) {}
  FloorScene scene;
  PieceWriter writer;
  size_t next = 0;  // the image Ingest takes next: its temp name and log page
  int64_t bytes = 0;
};

PipelinedIngestFloor::PipelinedIngestFloor(const std::string& dir, size_t images)
    : state_(std::make_unique<State>(dir, images)) {}

PipelinedIngestFloor::~PipelinedIngestFloor() = default;

int64_t PipelinedIngestFloor::Ingest(const std::string& data_uri) {
  State& st = *state_;
  const int64_t t = NowNs();
  const std::string_view payload = std::string_view(data_uri).substr(data_uri.find(',') + 1);
  Result<size_t> size = blob::Base64DecodedSize(payload);
  // An empty image would leave the writer nothing to wait for.
  if (!size || *size == 0) throw std::runtime_error("floor: bad base64 in a workload data URI");
  std::string decoded(*size, '\0');
  const size_t i = st.next++;
  const std::string temp = st.scene.tmp(std::to_string(i));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
  if (fd < 0) throw std::runtime_error("floor: cannot create " + temp);
  st.writer.Start(fd, decoded.data(), decoded.size());
  if (!blob::Base64DecodeInto(payload, decoded.data(), kPieceBytes, [&st](size_t n) {
         st.writer.Ready(n);
       }).ok()) {
    throw std::runtime_error("floor: bad base64 in a workload data URI");
  }
  const std::string final_path = st.scene.final_folder() + "/" + blob::Sha256Hex(decoded);
  if (!st.writer.WaitSynced()) throw std::runtime_error("floor: cannot write " + temp);
  ::close(fd);
  if (::rename(temp.c_str(), final_path.c_str()) != 0) {
    throw std::runtime_error("floor: cannot rename " + temp);
  }
  SyncDirectory(st.scene.final_folder());
  st.scene.Commit(i);
  st.bytes += static_cast<int64_t>(decoded.size());
  return NowNs() - t;
}

int64_t PipelinedIngestFloor::bytes() const { return state_->bytes; }

void PipelinedIngestFloor::CheckStored() const {
  // Every image under its name with all of its bytes, or the figure means
  // nothing (the workload's images are all different).
  size_t files = 0;
  int64_t stored = 0;
  for (const auto& e : std::filesystem::directory_iterator(state_->scene.final_folder())) {
    ++files;
    stored += static_cast<int64_t>(e.file_size());
  }
  if (files != state_->next || stored != state_->bytes) {
    throw std::runtime_error("floor: the pipelined ingest did not store every image whole");
  }
}

DurableWriteFloor MeasurePipelinedImageIngest(const std::string& dir,
                                              const std::vector<std::string>& data_uris) {
  PipelinedIngestFloor floor(dir, data_uris.size());
  std::vector<int64_t> ns;
  ns.reserve(data_uris.size());
  const int64_t start = NowNs();
  for (const std::string& uri : data_uris) ns.push_back(floor.Ingest(uri));
  const double seconds = static_cast<double>(NowNs() - start) / 1e9;
  floor.CheckStored();
  const int64_t bytes = floor.bytes();
  DurableWriteFloor out;
  out.latency = {static_cast<int>(ns.size()), PercentileUs(ns, 50), PercentileUs(ns, 99),
                 MedianMs(ns)};
  out.mib_per_s = static_cast<double>(bytes) / (1024.0 * 1024.0) / seconds;
  return out;
}

}  // namespace sessiondb::bench
