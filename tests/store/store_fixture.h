// A store in a fresh directory, with a controllable clock and captured
// warnings, for the store test suites.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  StoreOptions Options() {
    StoreOptions options;
    options.clock = [this] { return now_ms_; };
    options.warn = [this](std::string_view w) {
      std::lock_guard lock(warn_mu_);
      warnings_.emplace_back(w);
    };
    return options;
  }

  void Reopen() { Reopen(Options()); }
  void Reopen(const StoreOptions& options) {
    store_.reset();
    auto opened = Store::Open(dir_.Sub("store"), options);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }

  std::string NewSessionId(const std::string& id = "") {
    auto s = store_->CreateSession(NewSession{.id = id});
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? s->id : "";
  }

  AppendResult AppendText(const std::string& session, const std::string& text,
                          Role role = Role::kUser) {
    Message m;
    m.role = role;
    m.parts.push_back(Part::Text(text));
    auto r = store_->Append(session, m);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : AppendResult{};
  }

  // Regular files under the blob folder, i.e. the stored blobs.
  size_t BlobFileCount() const {
    size_t n = 0;
    std::filesystem::path root = std::filesystem::path(dir_.Sub("store")) / "blobs" / "sha256";
    if (!std::filesystem::exists(root)) return 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(root)) n += e.is_regular_file();
    return n;
  }

  std::string StoreDir() const { return dir_.Sub("store"); }

  TempDir dir_;
  int64_t now_ms_ = 1'700'000'000'000;
  std::mutex warn_mu_;
  std::vector<std::string> warnings_;
  std::unique_ptr<Store> store_;
};

}  // namespace sessiondb::testing
