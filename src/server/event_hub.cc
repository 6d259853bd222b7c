#include "server/event_hub.h"

namespace sessiondb::server {

// A stream that falls this far behind on drafts keeps only the newest: each
// holds the whole text so far.
constexpr size_t kMaxQueuedDrafts = 64;

EventHub::Subscription::Subscription(EventHub& hub, std::string session_id)
    : hub_(hub), session_id_(std::move(session_id)) {
  std::lock_guard lock(hub_.mu_);
  hub_.subscriptions_.insert(this);
}

EventHub::Subscription::~Subscription() {
  std::lock_guard lock(hub_.mu_);
  hub_.subscriptions_.erase(this);
}

std::vector<std::string> EventHub::Subscription::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(hub_.mu_);
  hub_.changed_.wait_for(lock, timeout, [this] { return woken_ || hub_.closed_; });
  woken_ = false;
  std::vector<std::string> drafts(std::make_move_iterator(drafts_.begin()),
                                  std::make_move_iterator(drafts_.end()));
  drafts_.clear();
  return drafts;
}

std::vector<std::string> EventHub::Subscription::TakeChangedSessions() {
  std::lock_guard lock(hub_.mu_);
  std::vector<std::string> ids(changed_ids_.begin(), changed_ids_.end());
  changed_ids_.clear();
  return ids;
}

void EventHub::NotifyAppended(std::string_view session_id) {
  {
    std::lock_guard lock(mu_);
    for (Subscription* s : subscriptions_) {
      if (s->session_id_ == session_id) s->woken_ = true;
    }
  }
  NotifySessionChanged(session_id);
}

void EventHub::NotifySessionChanged(std::string_view session_id) {
  {
    std::lock_guard lock(mu_);
    for (Subscription* s : subscriptions_) {
      if (s->session_id_ != kAllSessions) continue;
      if (!session_id.empty() && s->changed_ids_.size() < kMaxChangedIds) {
        s->changed_ids_.emplace(session_id);
      }
      s->woken_ = true;
    }
  }
  changed_.notify_all();
}

void EventHub::PublishDraft(std::string_view session_id, std::string draft_json) {
  {
    std::lock_guard lock(mu_);
    for (Subscription* s : subscriptions_) {
      if (s->session_id_ != session_id) continue;
      if (s->drafts_.size() >= kMaxQueuedDrafts) s->drafts_.pop_front();
      s->drafts_.push_back(draft_json);
      s->woken_ = true;
    }
  }
  changed_.notify_all();
}

void EventHub::Close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  changed_.notify_all();
}

bool EventHub::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

int EventHub::subscribers() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(subscriptions_.size());
}

}  // namespace sessiondb::server
