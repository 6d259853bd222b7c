#include "server/live_drafts.h"

#include "api/json_forms.h"

namespace sessiondb::server {

Result<Draft> LiveDrafts::Open(std::string_view session_id, Role role, std::string_view model) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<DraftWriter> writer,
      DraftWriter::Open(&store_, session_id, {.role = role, .model = std::string(model)}));
  Draft state;
  state.id = writer->draft_id();
  state.session_id = std::string(session_id);
  state.role = role;
  state.model = std::string(model);
  // The stored row has the times; the rest is what we were given.
  ASSIGN_OR_RETURN(std::vector<Draft> stored, store_.ListDrafts(session_id));
  for (const Draft& d : stored) {
    if (d.id == state.id) state = d;
  }
  Draft opened = state;
  auto live = std::make_shared<Live>(std::move(writer), std::move(state));
  MutexLock lock(&mu_);
  live_[opened.id] = std::move(live);
  return opened;
}

std::shared_ptr<LiveDrafts::Live> LiveDrafts::Find(std::string_view draft_id) {
  MutexLock lock(&mu_);
  auto it = live_.find(draft_id);
  return it == live_.end() ? nullptr : it->second;
}

std::shared_ptr<LiveDrafts::Live> LiveDrafts::Take(std::string_view draft_id) {
  MutexLock lock(&mu_);
  auto it = live_.find(draft_id);
  if (it == live_.end()) return nullptr;
  std::shared_ptr<Live> live = std::move(it->second);
  live_.erase(it);
  return live;
}

void LiveDrafts::Publish(const Draft& d, Ending ending, int64_t seq) {
  Json event = {{"draft_id", d.id},
                {"session_id", d.session_id},
                {"role", RoleName(d.role)},
                {"model", d.model},
                {"text", d.text},
                {"reasoning", d.reasoning},
                {"done", ending != Ending::kNone},
                {"discarded", ending == Ending::kDiscarded},
                {"seq", seq}};
  hub_.PublishDraft(d.session_id, event.dump(-1, ' ', false, Json::error_handler_t::replace));
}

Status LiveDrafts::Delta(std::string_view draft_id, std::string_view text,
                         std::string_view reasoning) {
  std::shared_ptr<Live> live = Find(draft_id);
  if (!live) {
    return Status::NotFound("draft '" + std::string(draft_id) +
                            "' is not open in this server (finished, discarded, or opened by "
                            "another process); open one with POST /v1/sessions/{id}/drafts");
  }
  MutexLock lock(&live->mu);
  if (!live->writer) return Status::NotFound("draft '" + std::string(draft_id) + "' is finished");
  if (!text.empty()) live->writer->AppendText(text);
  if (!reasoning.empty()) live->writer->AppendReasoning(reasoning);
  live->state.text += text;
  live->state.reasoning += reasoning;
  Publish(live->state, Ending::kNone, 0);
  return Status::Ok();
}

Result<AppendResult> LiveDrafts::Finish(std::string_view draft_id, const Message& message) {
  std::shared_ptr<Live> live = Take(draft_id);
  if (!live) {
    ASSIGN_OR_RETURN(AppendResult r, store_.FinishDraft(draft_id, message));
    return r;
  }
  MutexLock lock(&live->mu);
  Result<AppendResult> r = live->writer->Finish(message);
  live->writer.reset();
  if (r) {
    Publish(live->state, Ending::kFinished, r->seq);
    hub_.NotifyAppended(live->state.session_id);
  }
  return r;
}

Status LiveDrafts::Discard(std::string_view draft_id) {
  if (std::shared_ptr<Live> live = Take(draft_id)) {
    MutexLock lock(&live->mu);
    RETURN_IF_ERROR(live->writer->Close());
    live->writer.reset();
    Publish(live->state, Ending::kDiscarded, 0);
  }
  return store_.DiscardDraft(draft_id);
}

void LiveDrafts::CloseAll() {
  std::map<std::string, std::shared_ptr<Live>, std::less<>> all;
  {
    MutexLock lock(&mu_);
    all.swap(live_);
  }
  for (auto& [id, live] : all) {
    MutexLock lock(&live->mu);
    if (live->writer) (void)live->writer->Close();
    live->writer.reset();
  }
}

}  // namespace sessiondb::server
