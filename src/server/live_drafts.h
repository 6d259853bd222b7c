// Drafts streamed over HTTP: each open draft has a DraftWriter (which saves
// to the store at most every 2 s, and on finish), plus the text so far, which
// every delta publishes to the session's live streams as a `draft` event.
// A draft opened by another process is not live here: deltas to it are
// refused (404), finishing or discarding it goes straight to the store.
//
// Thread-safety: every method may be called from any thread; deltas to one
// draft from several threads are applied one at a time.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/mutex.h"
#include "server/event_hub.h"
#include "sessiondb/draft_writer.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

class LiveDrafts {
 public:
  LiveDrafts(Store& store, EventHub& hub) : store_(store), hub_(hub) {}
  ~LiveDrafts() { CloseAll(); }

  Result<Draft> Open(std::string_view session_id, Role role, std::string_view model) EXCLUDES(mu_);
  // Appends to the draft's text and reasoning and tells its watchers.
  Status Delta(std::string_view draft_id, std::string_view text, std::string_view reasoning)
      EXCLUDES(mu_);
  // Appends the final message (its parts default to the streamed text) and
  // wakes the session's streams.
  Result<AppendResult> Finish(std::string_view draft_id, const Message& message) EXCLUDES(mu_);
  Status Discard(std::string_view draft_id) EXCLUDES(mu_);
  // Saves every open draft and stops their writers; they stay unfinished.
  void CloseAll() EXCLUDES(mu_);

 private:
  struct Live {
    Live(std::unique_ptr<DraftWriter> w, Draft s) : writer(std::move(w)), state(std::move(s)) {}
    Mutex mu;  // one delta at a time
    std::unique_ptr<DraftWriter> writer GUARDED_BY(mu);
    Draft state GUARDED_BY(mu);  // text and reasoning so far
  };
  std::shared_ptr<Live> Find(std::string_view draft_id) EXCLUDES(mu_);
  std::shared_ptr<Live> Take(std::string_view draft_id) EXCLUDES(mu_);
  enum class Ending { kNone, kFinished, kDiscarded };
  // Tells the session's streams the draft's state; a finished draft's event
  // carries the seq its message got (the message's own event may arrive
  // before or after it), a discarded one says so.
  void Publish(const Draft& state, Ending ending, int64_t seq);

  Store& store_;
  EventHub& hub_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<Live>, std::less<>> live_ GUARDED_BY(mu_);
};

}  // namespace sessiondb::server
