// The Store's secrets (store.h, docs/retention.md): the redaction of what
// the front writes, the store's setting of it, and the scan and rewrite of
// what was stored before.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/secret_scan.h"
#include "store/log_rules.h"
#include "store/secret_redaction.h"
#include "store/store_front.h"

namespace sessiondb::store {

Status StoreFront::LoadSecretRedaction() {
  const bool writable = backend_->read_only_reason().empty();
  ASSIGN_OR_RETURN(LoadedRedaction loaded, LoadRedaction(*backend_, writable));
  MutexLock lock(&redaction_mu_);
  redaction_settings_ = loaded.settings;
  redaction_on_ = options_.redact_secrets.value_or(loaded.settings.enabled);
  redactor_ = std::make_shared<const SecretRedactor>(std::move(loaded.key), loaded.settings.allow);
  return Status::Ok();
}

std::shared_ptr<const SecretRedactor> StoreFront::ActiveRedactor() const {
  MutexLock lock(&redaction_mu_);
  return redaction_on_ ? redactor_ : nullptr;
}

std::shared_ptr<const SecretRedactor> StoreFront::StoreRedactor() const {
  MutexLock lock(&redaction_mu_);
  return redactor_ != nullptr
             ? redactor_
             : std::make_shared<const SecretRedactor>("", std::vector<std::string>());
}

void StoreFront::RedactText(std::string* text) const {
  if (std::shared_ptr<const SecretRedactor> r = ActiveRedactor()) r->Redact(text);
}

std::span<const Event> StoreFront::RedactEvents(std::span<const Event> events,
                                                std::vector<Event>* redacted) const {
  std::shared_ptr<const SecretRedactor> r = ActiveRedactor();
  if (!r ||
      std::ranges::none_of(events, [&](const Event& e) { return EventHoldsSecrets(*r, e); })) {
    return events;
  }
  redacted->assign(events.begin(), events.end());
  for (Event& e : *redacted) RedactEvent(*r, &e);
  return *redacted;
}

Result<RedactionSettings> StoreFront::GetRedactionSettings() {
  MutexLock lock(&redaction_mu_);
  return redaction_settings_;
}

Status StoreFront::SetRedactionSettings(const RedactionSettings& settings) {
  RETURN_IF_ERROR(CheckWritable());
  RETURN_IF_ERROR(StoreRedactionSettings(*backend_, settings));
  return LoadSecretRedaction();
}

namespace {

// Every session of the store, archived ones too, in pages.
Result<std::vector<Session>> AllSessions(Store& store) {
  std::vector<Session> all;
  ListOptions options;
  options.limit = 1000;
  options.archived = ArchiveFilter::kAll;
  while (true) {
    ASSIGN_OR_RETURN(SessionPage page, store.ListSessions(options));
    for (Session& s : page.sessions) all.push_back(std::move(s));
    if (page.next_cursor.empty()) break;
    options.cursor = page.next_cursor;
  }
  std::ranges::sort(all, {}, &Session::id);
  return all;
}

}  // namespace

Result<std::vector<StoredSecret>> StoreFront::ScanSecrets() {
  const std::shared_ptr<const SecretRedactor> r = StoreRedactor();
  std::vector<StoredSecret> found;
  ASSIGN_OR_RETURN(std::vector<Session> sessions, AllSessions(*this));
  for (const Session& s : sessions) {
    std::vector<std::string_view> kinds;
    std::string title = s.title;
    std::string preview = s.preview;
    r->Redact(&title, &kinds);
    r->Redact(&preview, &kinds);
    for (std::string_view k : kinds) found.push_back({std::string(k), s.id, 0});
    // Its own events only: what a fork inherited is its parent's.
    ASSIGN_OR_RETURN(std::vector<Event> events, ReadEvents(s.id, s.fork_seq + 1, -1));
    for (Event& e : events) {
      kinds.clear();
      RedactEvent(*r, &e, &kinds);
      for (std::string_view k : kinds) found.push_back({std::string(k), s.id, e.seq});
    }
  }
  return found;
}

Result<RedactionReport> StoreFront::RedactStoredSecrets() {
  RETURN_IF_ERROR(CheckWritable());
  ASSIGN_OR_RETURN(std::vector<StoredSecret> found, ScanSecrets());
  const std::shared_ptr<const SecretRedactor> r = StoreRedactor();
  RedactionReport report;
  size_t i = 0;
  while (i < found.size()) {
    const std::string session_id = found[i].session_id;
    std::vector<int64_t> seqs;
    for (; i < found.size() && found[i].session_id == session_id; ++i) {
      if (seqs.empty() || seqs.back() != found[i].seq) seqs.push_back(found[i].seq);
    }
    ASSIGN_OR_RETURN(RedactionReport one,
                     RedactSessionSecrets(*backend_, session_id, seqs, *r, Actor(), Now()));
    report.events_scanned += one.events_scanned;
    report.events_rewritten += one.events_rewritten;
    report.sessions_rewritten += one.sessions_rewritten;
    report.secrets_redacted += one.secrets_redacted;
  }
  return report;
}

}  // namespace sessiondb::store
