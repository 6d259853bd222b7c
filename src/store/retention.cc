// Retention policies (forget.h, docs/retention.md): the policy kept as a
// setting of the store, and a run of it over every session. The rules are
// decided here once for both backends; what a run does goes through the
// Store's own calls (SetArchived, TrashSession, Erase, EmptyTrash), so each
// of those keeps its own guarantees and its own ledger line, and the run adds
// one line of its own (action "retain", actor "policy").
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "core/project_path.h"
#include "sessiondb/forget.h"
#include "store/store_front.h"
#include "store/write_transaction.h"

namespace sessiondb::store {
namespace {

// Where the policy is kept (Backend::LoadSetting): its JSON, as
// RetentionPolicyText writes it.
constexpr std::string_view kSettingRetentionPolicy = "retention_policy";
constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;
// Days beyond this would overflow a time in milliseconds; no policy needs them.
constexpr int64_t kMaxDays = int64_t{1000} * 365;
constexpr int kListPage = 1000;

std::string RetentionPolicyText(const RetentionPolicy& policy) {
  nlohmann::json rules = nlohmann::json::array();
  for (const RetentionRule& r : policy.rules) {
    rules.push_back({{"project", r.project},
                     {"trash_after_idle_days", r.trash_after_idle_days},
                     {"keep_newest", r.keep_newest},
                     {"archive_after_idle_days", r.archive_after_idle_days},
                     {"erase_archived_after_idle_days", r.erase_archived_after_idle_days}});
  }
  return nlohmann::json{{"trash_grace_days", policy.trash_grace_days}, {"rules", rules}}.dump();
}

Result<int64_t> StoredNumber(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return int64_t{0};
  if (!it->is_number_integer()) {
    return Err(Status::Corruption(std::string("the stored retention policy's ") + key +
                                  " is not a whole number"));
  }
  return it->get<int64_t>();
}

Result<RetentionPolicy> ParseStoredPolicy(std::string_view text) {
  auto parsed = ParseJson(text);
  if (!parsed || !parsed->is_object()) {
    return Err(Status::Corruption("the stored retention policy is not a JSON object"));
  }
  RetentionPolicy policy;
  ASSIGN_OR_RETURN(policy.trash_grace_days, StoredNumber(*parsed, "trash_grace_days"));
  auto rules = parsed->find("rules");
  if (rules != parsed->end()) {
    if (!rules->is_array()) {
      return Err(Status::Corruption("the stored retention policy's rules are not a list"));
    }
    for (const nlohmann::json& r : *rules) {
      if (!r.is_object()) {
        return Err(Status::Corruption("a stored retention rule is not a JSON object"));
      }
      RetentionRule rule;
      auto project = r.find("project");
      if (project != r.end() && project->is_string()) rule.project = project->get<std::string>();
      ASSIGN_OR_RETURN(rule.trash_after_idle_days, StoredNumber(r, "trash_after_idle_days"));
      ASSIGN_OR_RETURN(rule.keep_newest, StoredNumber(r, "keep_newest"));
      ASSIGN_OR_RETURN(rule.archive_after_idle_days, StoredNumber(r, "archive_after_idle_days"));
      ASSIGN_OR_RETURN(rule.erase_archived_after_idle_days,
                       StoredNumber(r, "erase_archived_after_idle_days"));
      policy.rules.push_back(std::move(rule));
    }
  }
  return policy;
}

Status CheckDays(int64_t days, std::string_view what, std::string_view rule) {
  if (days < 0) {
    return Status::InvalidArgument(std::string(what) + " of " + std::string(rule) + " is " +
                                   std::to_string(days) + "; it cannot be negative");
  }
  if (days > kMaxDays) {
    return Status::InvalidArgument(std::string(what) + " of " + std::string(rule) + " is " +
                                   std::to_string(days) + "; the limit is " +
                                   std::to_string(kMaxDays));
  }
  return Status::Ok();
}

std::string RuleName(const RetentionRule& rule) {
  return rule.project.empty() ? std::string("the rule for every project")
                              : "the rule for project " + rule.project;
}

// The policy as stored: each rule's project normal, numbers checked, no two
// rules of one project.
Result<RetentionPolicy> CheckedPolicy(RetentionPolicy policy) {
  RETURN_IF_ERROR(CheckDays(policy.trash_grace_days, "trash_grace_days", "the policy"));
  std::set<std::string> projects;
  for (RetentionRule& rule : policy.rules) {
    if (!rule.project.empty()) rule.project = NormalProjectPath(rule.project);
    const std::string name = RuleName(rule);
    RETURN_IF_ERROR(CheckDays(rule.trash_after_idle_days, "trash_after_idle_days", name));
    RETURN_IF_ERROR(CheckDays(rule.archive_after_idle_days, "archive_after_idle_days", name));
    RETURN_IF_ERROR(
        CheckDays(rule.erase_archived_after_idle_days, "erase_archived_after_idle_days", name));
    if (rule.keep_newest < 0) {
      return Err(Status::InvalidArgument("keep_newest of " + name + " is " +
                                         std::to_string(rule.keep_newest) +
                                         "; it cannot be negative"));
    }
    if (!projects.insert(rule.project).second) {
      return Err(Status::InvalidArgument(
          "two rules name " +
          (rule.project.empty() ? std::string("every project") : "project " + rule.project) +
          "; a project has one rule"));
    }
  }
  return policy;
}

// True when `folder` holds `project` ("/src/app" holds "/src/app/lib").
bool HoldsProject(const std::string& folder, const std::string& project) {
  if (project.size() < folder.size() || project.compare(0, folder.size(), folder) != 0) {
    return false;
  }
  return project.size() == folder.size() || folder == "/" || project[folder.size()] == '/';
}

// What a run needs of a session's metadata.
struct Facts {
  std::string project;
  bool pinned = false;
};

Facts FactsOf(const Session& session) {
  Facts facts;
  auto parsed = ParseJson(session.metadata_json);
  if (!parsed || !parsed->is_object()) return facts;
  auto project = parsed->find("project");
  if (project != parsed->end() && project->is_string()) {
    facts.project = project->get<std::string>();
  }
  auto pinned = parsed->find("pinned");
  facts.pinned = pinned != parsed->end() && pinned->is_boolean() && pinned->get<bool>();
  return facts;
}

// The index of the rule that handles a session of `project`: the one with the
// longest project holding it, else the "" rule; -1 when none does.
int RuleFor(const RetentionPolicy& policy, const std::string& project) {
  int best = -1;
  size_t best_len = 0;
  for (size_t i = 0; i < policy.rules.size(); ++i) {
    const std::string& folder = policy.rules[i].project;
    if (folder.empty()) {
      if (best < 0) best = static_cast<int>(i);
      continue;
    }
    if (!project.empty() && HoldsProject(folder, project) &&
        (best < 0 || policy.rules[best].project.empty() || folder.size() > best_len)) {
      best = static_cast<int>(i);
      best_len = folder.size();
    }
  }
  return best;
}

bool IdleLongerThan(int64_t days, const Session& s, int64_t now_ms) {
  return days > 0 && now_ms - s.updated_ms > days * kDayMs;
}

void AppendUnique(const std::vector<std::string>& from, std::vector<std::string>* to) {
  for (const std::string& id : from) {
    if (std::find(to->begin(), to->end(), id) == to->end()) to->push_back(id);
  }
}

}  // namespace

Result<RetentionPolicy> StoreFront::GetRetentionPolicy() {
  ASSIGN_OR_RETURN(std::optional<std::string> text, backend_->LoadSetting(kSettingRetentionPolicy));
  if (!text) return RetentionPolicy{};
  return ParseStoredPolicy(*text);
}

Status StoreFront::SetRetentionPolicy(const RetentionPolicy& policy) {
  RETURN_IF_ERROR(CheckWritable());
  ASSIGN_OR_RETURN(RetentionPolicy checked, CheckedPolicy(policy));
  return backend_->StoreSetting(kSettingRetentionPolicy, RetentionPolicyText(checked));
}

Result<RetentionRun> StoreFront::ApplyRetention(bool dry_run) {
  if (!dry_run) RETURN_IF_ERROR(CheckWritable());
  ASSIGN_OR_RETURN(RetentionPolicy policy, GetRetentionPolicy());
  const int64_t now_ms = Now();

  // Every session, archived or not, newest first (the order keep_newest
  // counts in), and which sessions read each one's events (its forks).
  std::vector<Session> sessions;
  std::map<std::string, std::vector<std::string>> forks_of;
  for (bool trash : {false, true}) {
    ListOptions list{.limit = kListPage, .archived = ArchiveFilter::kAll, .trash = trash};
    while (true) {
      ASSIGN_OR_RETURN(SessionPage page, ListSessions(list));
      for (Session& s : page.sessions) {
        if (!s.parent_id.empty()) forks_of[s.parent_id].push_back(s.id);
        if (trash) {
          // Past its grace: EmptyTrash's, after the rules.
          if (s.trashed_ms != 0 && s.trashed_ms < now_ms - policy.trash_grace_days * kDayMs) {
            sessions.push_back(std::move(s));
          }
        } else {
          sessions.push_back(std::move(s));
        }
      }
      if (page.next_cursor.empty()) break;
      list.cursor = page.next_cursor;
    }
  }

  RetentionRun run;
  run.dry_run = dry_run;
  std::vector<std::string> trash_expired;
  std::vector<std::string> erase_wanted;
  std::vector<int64_t> kept(policy.rules.size(), 0);
  for (const Session& s : sessions) {
    if (s.trashed_ms != 0) {
      trash_expired.push_back(s.id);
      continue;
    }
    const Facts facts = FactsOf(s);
    if (facts.pinned) continue;
    const int rule_index = RuleFor(policy, facts.project);
    if (rule_index < 0) continue;
    const RetentionRule& rule = policy.rules[rule_index];
    const bool beyond_newest = rule.keep_newest > 0 && ++kept[rule_index] > rule.keep_newest;
    if (s.archived && IdleLongerThan(rule.erase_archived_after_idle_days, s, now_ms)) {
      erase_wanted.push_back(s.id);
    } else if (IdleLongerThan(rule.trash_after_idle_days, s, now_ms) || beyond_newest) {
      run.trashed.push_back(s.id);
    } else if (!s.archived && IdleLongerThan(rule.archive_after_idle_days, s, now_ms)) {
      run.archived.push_back(s.id);
    }
  }

  // A policy never leaves an orphan: an archived session is erased only when
  // every fork that reads it goes with it; otherwise it is kept for them.
  std::set<std::string> erasable(erase_wanted.begin(), erase_wanted.end());
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = erasable.begin(); it != erasable.end();) {
      auto forks = forks_of.find(*it);
      bool blocked = forks != forks_of.end() &&
                     std::any_of(forks->second.begin(), forks->second.end(),
                                 [&](const std::string& f) { return erasable.count(f) == 0; });
      if (blocked) {
        run.kept_for_forks.push_back(*it);
        it = erasable.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
  }
  for (const std::string& id : erase_wanted) {
    if (erasable.count(id) != 0) run.erased.push_back(id);
  }

  if (dry_run) {
    // What EmptyTrash would do: a trashed session that forks outside the
    // expired trash still read is kept hidden for them.
    std::set<std::string> expired(trash_expired.begin(), trash_expired.end());
    for (const std::string& id : trash_expired) {
      auto forks = forks_of.find(id);
      bool read = forks != forks_of.end() &&
                  std::any_of(forks->second.begin(), forks->second.end(),
                              [&](const std::string& f) { return expired.count(f) == 0; });
      (read ? run.kept_for_forks : run.erased).push_back(id);
    }
    return run;
  }

  for (const std::string& id : run.archived) RETURN_IF_ERROR(SetArchived(id, true));
  for (const std::string& id : run.trashed) RETURN_IF_ERROR(TrashSession(id));
  std::vector<std::string> receipts;
  if (!run.erased.empty()) {
    EraseRequest erase{.session_ids = run.erased, .reason = "policy"};
    ASSIGN_OR_RETURN(ErasureReceipt receipt, Erase(erase));
    run.receipt_id = receipt.id;
    receipts.push_back(receipt.id);
  }
  if (!trash_expired.empty()) {
    ASSIGN_OR_RETURN(ErasureReceipt receipt, EmptyTrash(now_ms - policy.trash_grace_days * kDayMs));
    AppendUnique(receipt.sessions, &run.erased);
    AppendUnique(receipt.kept_for_forks, &run.kept_for_forks);
    run.receipt_id = receipt.id;
    receipts.push_back(receipt.id);
  }

  // Every real run is recorded, one that found nothing to do too: the
  // ledger says the policy was applied and when. (serve applies the policy
  // only when a dry run finds work, so an idle store is not written hourly.)
  LedgerEntry entry;
  entry.ts_ms = Now();  // after the actions it sums up, which the ledger lists first
  entry.actor = "policy";
  entry.action = "retain";
  entry.scope = "retention policy";
  for (const std::string& id : receipts) entry.scope += ", receipt " + id;
  entry.counts = {{"archived", static_cast<int64_t>(run.archived.size())},
                  {"trashed", static_cast<int64_t>(run.trashed.size())},
                  {"erased", static_cast<int64_t>(run.erased.size())},
                  {"kept_for_forks", static_cast<int64_t>(run.kept_for_forks.size())}};
  entry.receipt_id = run.receipt_id;
  RETURN_IF_ERROR(backend_->RunWriteTransaction({}, [&](WriteTransaction& txn) -> Status {
    ASSIGN_OR_RETURN(run.ledger_id, txn.AppendLedgerEntry(entry));
    return Status::Ok();
  }));
  return run;
}

}  // namespace sessiondb::store
