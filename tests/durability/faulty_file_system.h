// FaultyFileSystem: a FileSystem (sessiondb/file_system.h) over the real one
// that counts write boundaries (every create, append, sync, close, rename,
// remove, mkdir and directory sync) and, at one of them, fails the call as
// ENOSPC or EIO would, or crashes the process after dropping what was never
// synced, as a power loss would. The fault-injection tests sweep it across
// every boundary of a workload.
//
// Thread-safety: calls may come from several threads (blob writes).
#pragma once

#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "sessiondb/file_system.h"

namespace sessiondb::testing {

enum class Fault { kNoSpace, kIoError, kCrash };

// A FileSystem over the real one that counts write boundaries and injects
// `fault` at boundary `at` (1-based; 0 never). For a crash it first empties
// every file whose appended bytes were not all synced, then _exit()s.
class FaultyFileSystem final : public FileSystem {
 public:
  FaultyFileSystem(int64_t at, Fault fault) : at_(at), fault_(fault) {}

  // Moves the fault to the `n`-th boundary from now (1: the next one).
  void FailAfter(int64_t n) { at_ = count_.load() + n; }

  int64_t boundaries() const { return count_.load(); }
  bool injected() const { return injected_.load(); }
  std::string injected_at() const {
    std::lock_guard lock(mu_);
    return injected_at_;
  }

  Result<std::unique_ptr<WritableFile>> Create(const std::string& path, bool exclusive,
                                               int mode) override {
    RETURN_IF_ERROR(Boundary("create " + path));
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, real_->Create(path, exclusive, mode));
    Track(path, /*synced=*/false);
    return std::unique_ptr<WritableFile>(new File(this, path, std::move(file)));
  }
  Status Rename(const std::string& from, const std::string& to) override {
    RETURN_IF_ERROR(Boundary("rename " + to));
    RETURN_IF_ERROR(real_->Rename(from, to));
    std::lock_guard lock(mu_);
    auto it = unsynced_.find(from);
    if (it != unsynced_.end()) {
      unsynced_.erase(it);
      unsynced_.insert(to);
    }
    return Status::Ok();
  }
  Status Remove(const std::string& path) override {
    RETURN_IF_ERROR(Boundary("remove " + path));
    return real_->Remove(path);
  }
  Status CreateDirectory(const std::string& path, int mode) override {
    RETURN_IF_ERROR(Boundary("mkdir " + path));
    return real_->CreateDirectory(path, mode);
  }
  Status SyncDirectory(const std::string& path) override {
    RETURN_IF_ERROR(Boundary("sync directory " + path));
    return real_->SyncDirectory(path);
  }

 private:
  class File final : public WritableFile {
   public:
    File(FaultyFileSystem* fs, std::string path, std::unique_ptr<WritableFile> real)
        : fs_(fs), path_(std::move(path)), real_(std::move(real)) {}
    Status Append(std::string_view bytes) override {
      RETURN_IF_ERROR(fs_->Boundary("append " + path_));
      fs_->Track(path_, /*synced=*/false);
      return real_->Append(bytes);
    }
    Status Sync() override {
      RETURN_IF_ERROR(fs_->Boundary("sync " + path_));
      RETURN_IF_ERROR(real_->Sync());
      fs_->Track(path_, /*synced=*/true);
      return Status::Ok();
    }
    Status Close() override {
      RETURN_IF_ERROR(fs_->Boundary("close " + path_));
      return real_->Close();
    }

   private:
    FaultyFileSystem* fs_;
    const std::string path_;
    std::unique_ptr<WritableFile> real_;
  };

  void Track(const std::string& path, bool synced) {
    std::lock_guard lock(mu_);
    if (synced) {
      unsynced_.erase(path);
    } else {
      unsynced_.insert(path);
    }
  }

  Status Boundary(const std::string& what) {
    if (++count_ != at_) return Status::Ok();
    injected_ = true;
    {
      std::lock_guard lock(mu_);
      injected_at_ = what;
    }
    switch (fault_) {
      case Fault::kNoSpace:
        return Status::Io("cannot write (" + what + "): No space left on device (injected)");
      case Fault::kIoError:
        return Status::Io("cannot write (" + what + "): Input/output error (injected)");
      case Fault::kCrash: {
        // A power loss keeps what was synced; bytes never synced are gone.
        std::lock_guard lock(mu_);
        for (const std::string& path : unsynced_) (void)::truncate(path.c_str(), 0);
        _exit(0);
      }
    }
    return Status::Ok();
  }

  FileSystem* const real_ = FileSystem::Default();
  std::atomic<int64_t> at_;
  const Fault fault_;
  std::atomic<int64_t> count_{0};
  std::atomic<bool> injected_{false};
  mutable std::mutex mu_;
  std::set<std::string> unsynced_;  // guarded by mu_
  std::string injected_at_;         // guarded by mu_
};

}  // namespace sessiondb::testing
