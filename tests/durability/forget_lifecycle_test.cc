// A seeded random walk of lifecycle operations (append, fork, trash,
// restore, delete, empty the trash, erase, reopen) checked against a model
// of what each session should read: nothing erased is readable (nor, after
// an erasure, in the stored log), nothing not erased is lost. Both backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sessiondb/forget.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

enum class State { kLive, kTrashed, kHidden, kGone };

struct ModelSession {
  State state = State::kLive;
  std::string parent;
  int64_t fork_seq = 0;
  std::vector<std::string> own;  // the words of its own messages, in seq order
  bool erased_for_good = false;  // by Erase or EmptyTrash: no byte may remain
};

class Lifecycle : public BackendTest {
 protected:
  std::map<std::string, ModelSession> model_;

  bool HasChildren(const std::string& id) const {
    for (const auto& [child, s] : model_) {
      if (s.parent == id && s.state != State::kGone) return true;
    }
    return false;
  }

  // What the session reads: its ancestors' messages up to each fork point, then its own.
  std::vector<std::string> Expected(const std::string& id) const {
    const ModelSession& s = model_.at(id);
    std::vector<std::string> out;
    if (!s.parent.empty()) {
      out = Expected(s.parent);
      out.resize(static_cast<size_t>(s.fork_seq));
    }
    out.insert(out.end(), s.own.begin(), s.own.end());
    return out;
  }

  void Gone(const std::string& id, bool for_good) {
    model_[id].state = State::kGone;
    model_[id].erased_for_good = for_good;
  }

  // The delete cascade upwards from a removed session: hidden ancestors no
  // longer read by any fork go; a trashed one stays.
  void Cascade(std::string parent, bool for_good) {
    while (!parent.empty() && model_[parent].state == State::kHidden && !HasChildren(parent)) {
      Gone(parent, for_good);
      parent = model_[parent].parent;
    }
  }

  std::vector<std::string> In(State state) const {
    std::vector<std::string> out;
    for (const auto& [id, s] : model_) {
      if (s.state == state) out.push_back(id);
    }
    return out;
  }

  void Check(const std::string& when) {
    std::set<std::string> trash;
    auto page = store_->ListSessions({.limit = 1000, .trash = true});
    ASSERT_TRUE(page) << page.error().ToString();
    for (const Session& s : page->sessions) trash.insert(s.id);
    for (const auto& [id, s] : model_) {
      SCOPED_TRACE(when + ", session " + id);
      auto got = store_->GetSession(id);
      EXPECT_EQ(got.has_value(), s.state == State::kLive);
      EXPECT_EQ(trash.count(id) > 0, s.state == State::kTrashed);
      if (s.state != State::kLive) continue;
      auto messages = store_->ReadMessages(id);
      ASSERT_TRUE(messages) << messages.error().ToString();
      std::vector<std::string> texts;
      for (const Message& m : *messages) texts.push_back(m.Text());
      EXPECT_EQ(texts, Expected(id));
    }
  }
};

TEST_P(Lifecycle, ARandomWalkOfOperationsMatchesTheModel) {
  std::mt19937 random(34);
  int next_session = 0;
  int next_word = 0;
  auto pick = [&](const std::vector<std::string>& from) { return from[random() % from.size()]; };
  for (int op = 0; op < 240; ++op) {
    now_ms_ += 1000;
    const std::vector<std::string> live = In(State::kLive);
    const std::vector<std::string> trashed = In(State::kTrashed);
    const int kind = static_cast<int>(random() % 100);
    const std::string step = "op " + std::to_string(op);
    if (live.empty() || kind < 10) {
      const std::string id = "s" + std::to_string(next_session++);
      ASSERT_TRUE(store_->CreateSession({.id = id})) << step;
      model_[id] = {};
    } else if (kind < 45) {
      const std::string id = pick(live);
      const std::string word = "lifeword" + std::to_string(next_word++) + "z";
      Message m;
      m.role = Role::kUser;
      m.parts.push_back(Part::Text(word));
      ASSERT_TRUE(store_->Append(id, m)) << step;
      model_[id].own.push_back(word);
    } else if (kind < 55) {
      const std::string parent = pick(live);
      const int64_t length = static_cast<int64_t>(Expected(parent).size());
      const int64_t at = length == 0 ? 0 : static_cast<int64_t>(random() % (length + 1));
      const std::string id = "s" + std::to_string(next_session++);
      auto fork = store_->ForkSession(parent, at, {.id = id});
      ASSERT_TRUE(fork) << step << ": " << fork.error().ToString();
      model_[id] = {.parent = parent, .fork_seq = at};
    } else if (kind < 67) {
      const std::string id = pick(live);
      ASSERT_TRUE(store_->TrashSession(id).ok()) << step;
      model_[id].state = State::kTrashed;
    } else if (kind < 75 && !trashed.empty()) {
      const std::string id = pick(trashed);
      ASSERT_TRUE(store_->RestoreFromTrash(id)) << step;
      model_[id].state = State::kLive;
    } else if (kind < 81) {
      const std::string id = pick(live);
      ASSERT_TRUE(store_->DeleteSession(id).ok()) << step;
      if (HasChildren(id)) {
        model_[id].state = State::kHidden;
      } else {
        Gone(id, false);
        Cascade(model_[id].parent, false);
      }
    } else if (kind < 86) {
      auto receipt = store_->EmptyTrash(now_ms_);
      ASSERT_TRUE(receipt) << step << ": " << receipt.error().ToString();
      // To a fixpoint: what no fork reads is erased, then its ancestors.
      bool changed = true;
      while (changed) {
        changed = false;
        for (const std::string& id : In(State::kTrashed)) {
          if (HasChildren(id)) continue;
          Gone(id, true);
          Cascade(model_[id].parent, true);
          changed = true;
        }
      }
      for (const std::string& id : In(State::kTrashed)) model_[id].state = State::kHidden;
    } else if (kind < 94) {
      std::vector<std::string> any;
      for (const auto& [id, s] : model_) {
        if (s.state != State::kGone) any.push_back(id);
      }
      if (any.empty()) continue;
      const std::string id = pick(any);
      auto receipt = store_->Erase({.session_ids = {id}});
      ASSERT_TRUE(receipt) << step << ": " << receipt.error().ToString();
      // The session and every fork that reads it, then the cascade.
      std::vector<std::string> pending = {id};
      std::vector<std::string> erased;
      while (!pending.empty()) {
        const std::string s = pending.back();
        pending.pop_back();
        if (model_[s].state == State::kGone) continue;
        Gone(s, true);
        erased.push_back(s);
        for (const auto& [child, c] : model_) {
          if (c.parent == s && c.state != State::kGone) pending.push_back(child);
        }
      }
      Cascade(model_[id].parent, true);
      auto check = store_->VerifyErased(*receipt);
      ASSERT_TRUE(check);
      EXPECT_TRUE(check->erased()) << step << ": " << ::testing::PrintToString(check->problems);
      std::vector<std::string> got = receipt->sessions;
      std::sort(got.begin(), got.end());
      std::sort(erased.begin(), erased.end());
      EXPECT_TRUE(std::includes(got.begin(), got.end(), erased.begin(), erased.end())) << step;
    } else {
      Reopen();  // a crash between operations: what committed stays
    }
    if (op % 40 == 39) Check(step);
  }
  Check("the end");
  for (const auto& [id, s] : model_) {
    if (!s.erased_for_good) continue;
    for (const std::string& word : s.own) {
      EXPECT_FALSE(RawLogContains(word)) << word << " of erased session " << id;
    }
  }
}

SESSIONDB_FOR_EACH_BACKEND(Lifecycle);

}  // namespace
}  // namespace sessiondb::testing
