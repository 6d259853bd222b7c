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
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

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
    std::vector<std::string> Wait(std::chrono::milliseconds timeout);
    // For kAllSessions: the ids of the sessions written since the last call
    // (at most kMaxChangedIds; beyond that the list itself tells).
    std::vector<std::string> TakeChangedSessions();

   private:
    friend class EventHub;
    EventHub& hub_;
    const std::string session_id_;
    bool woken_ = false;                // guarded by hub_.mu_
    std::deque<std::string> drafts_;    // guarded by hub_.mu_
    std::set<std::string, std::less<>> changed_ids_;  // guarded by hub_.mu_
  };

  // The session id of a subscription to every session's list entry (no
  // session has an empty id).
  static constexpr std::string_view kAllSessions = "";
  static constexpr size_t kMaxChangedIds = 256;

  void NotifyAppended(std::string_view session_id);
  // A session was created, renamed, archived or deleted (an empty id: some
  // sessions, unnamed, as after an import or a purge).
  void NotifySessionChanged(std::string_view session_id);
  void PublishDraft(std::string_view session_id, std::string draft_json);
  // Ends every Wait at once and makes later ones return immediately.
  void Close();
  bool closed() const;
  // Streams open now.
  int subscribers() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::set<Subscription*> subscriptions_;  // guarded by mu_
  bool closed_ = false;                    // guarded by mu_
};

}  // namespace sessiondb::server
