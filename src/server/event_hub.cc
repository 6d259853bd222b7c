#include "server/event_hub.h"

#include <cassert>

namespace sessiondb::server {

// A stream that falls this far behind on drafts keeps only the newest: each
// holds the whole text so far.
constexpr size_t kMaxQueuedDrafts = 64;

EventHub::Subscription::Subscription(EventHub& hub, std::string session_id)
    : hub_(hub), session_id_(std::move(session_id)) {
  MutexLock lock(&hub_.mu_);
  hub_.subscriptions_.insert(this);
}

EventHub::Subscription::~Subscription() {
  MutexLock lock(&hub_.mu_);
  hub_.subscriptions_.erase(this);
}

std::vector<std::string> EventHub::Subscription::Wait(std::chrono::milliseconds timeout) {
  MutexLock lock(&hub_.mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!woken_ && !hub_.closed_) {
    if (!hub_.changed_.WaitUntil(&hub_.mu_, deadline)) break;
  }
  woken_ = false;
  std::vector<std::string> drafts(std::make_move_iterator(drafts_.begin()),
                                  std::make_move_iterator(drafts_.end()));
  drafts_.clear();
  return drafts;
}

std::vector<std::string> EventHub::Subscription::TakeChangedSessions() {
  MutexLock lock(&hub_.mu_);
  std::vector<std::string> ids(changed_ids_.begin(), changed_ids_.end());
  changed_ids_.clear();
  return ids;
}

void EventHub::NotifyAppended(std::string_view session_id) {
  {
    MutexLock lock(&mu_);
    for (Subscription* s : subscriptions_) {
      AssertSubscriptionLocked(s);
      if (s->session_id_ == session_id) s->woken_ = true;
    }
  }
  NotifySessionChanged(session_id);
}

void EventHub::NotifySessionChanged(std::string_view session_id) {
  {
    MutexLock lock(&mu_);
    for (Subscription* s : subscriptions_) {
      AssertSubscriptionLocked(s);
      if (s->session_id_ != kAllSessions) continue;
      if (!session_id.empty() && s->changed_ids_.size() < kMaxChangedIds) {
        s->changed_ids_.emplace(session_id);
      }
      s->woken_ = true;
    }
  }
  changed_.SignalAll();
}

void EventHub::PublishDraft(std::string_view session_id, const std::string& draft_json) {
  {
    MutexLock lock(&mu_);
    for (Subscription* s : subscriptions_) {
      AssertSubscriptionLocked(s);
      if (s->session_id_ != session_id) continue;
      if (s->drafts_.size() >= kMaxQueuedDrafts) s->drafts_.pop_front();
      s->drafts_.push_back(draft_json);
      s->woken_ = true;
    }
  }
  changed_.SignalAll();
}

void EventHub::Close() {
  {
    MutexLock lock(&mu_);
    closed_ = true;
  }
  changed_.SignalAll();
}

bool EventHub::closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

int EventHub::subscribers() const {
  MutexLock lock(&mu_);
  return static_cast<int>(subscriptions_.size());
}

void EventHub::AssertSubscriptionLocked(const Subscription* s) const {
  assert(&s->hub_ == this);
  (void)s;
}

}  // namespace sessiondb::server
