// Wakes the live event streams. Routes that write a session's log call
// NotifyAppended; a stream then reads the log from its last seq, so the log
// stays the only source of events and a stream can never skip or repeat one.
// Drafts are not in the log: PublishDraft hands each stream of the session a
// copy of the draft's state, delivered once, and lost for a stream that was
// not connected (a draft event carries the whole text so far, so the next
// one makes up for it).
//
// A subscription to kAllSessions follows the session list instead (GET
// /v1/events): it is woken by any session's append and by
// NotifySessionChanged, and collects the ids named, so the stream can look
// those up even when they are not among the sessions it watches.
//
// Example (a stream's loop):
//   EventHub::Subscription sub(hub, session_id);
//   while (open) {
//     std::vector<std::string> drafts = sub.Wait(std::chrono::seconds(1));
//     ... send drafts, then the events after the last seq sent ...
//   }
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <deque>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"

namespace sessiondb::server {

class EventHub {
 public:
  class Subscription {
   public:
    Subscription(EventHub& hub, std::string session_id);
    ~Subscription();
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;

    // Waits until the session's log moved on, a draft was published, the hub
    // is closing, or `timeout` passed; returns the drafts published since the
    // last call (JSON texts, oldest first).
    std::vector<std::string> Wait(std::chrono::milliseconds timeout) EXCLUDES(hub_.mu_);
    // For kAllSessions: the ids of the sessions written since the last call
    // (at most kMaxChangedIds; beyond that the list itself tells).
    std::vector<std::string> TakeChangedSessions() EXCLUDES(hub_.mu_);

   private:
    friend class EventHub;
    EventHub& hub_;
    const std::string session_id_;
    bool woken_ GUARDED_BY(hub_.mu_) = false;
    std::deque<std::string> drafts_ GUARDED_BY(hub_.mu_);
    std::set<std::string, std::less<>> changed_ids_ GUARDED_BY(hub_.mu_);
  };

  // The session id of a subscription to every session's list entry (no
  // session has an empty id).
  static constexpr std::string_view kAllSessions = "";
  static constexpr size_t kMaxChangedIds = 256;

  void NotifyAppended(std::string_view session_id) EXCLUDES(mu_);
  // A session was created, renamed, archived or deleted (an empty id: some
  // sessions, unnamed, as after an import or a purge).
  void NotifySessionChanged(std::string_view session_id) EXCLUDES(mu_);
  void PublishDraft(std::string_view session_id, const std::string& draft_json) EXCLUDES(mu_);
  // Ends every Wait at once and makes later ones return immediately.
  void Close() EXCLUDES(mu_);
  bool closed() const EXCLUDES(mu_);
  // Streams open now.
  int subscribers() const EXCLUDES(mu_);

 private:
  // Tells the analysis that `s`'s fields, guarded by s->hub_.mu_, may be
  // used: every subscription in subscriptions_ was made on this hub, so its
  // hub_.mu_ is this mu_, which the caller holds (an alias the analysis
  // cannot see).
  void AssertSubscriptionLocked(const Subscription* s) const REQUIRES(mu_)
      SESSIONDB_THREAD_ANNOTATION(assert_capability(s->hub_.mu_));

  mutable Mutex mu_;
  CondVar changed_;
  std::set<Subscription*> subscriptions_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace sessiondb::server
