// Forgetting on purpose, from Python (forget.h, docs/python.md): the trash,
// erasure with its receipt, the check of a receipt, the ledger and the
// retention policy. Receipts, ledger entries, policies and runs are plain
// dicts (JSON-ready, as the HTTP API spells them); a receipt is the dict of
// ErasureReceiptToJson, and verify_erased takes it back as a dict or as that
// JSON text. Each engine call releases the GIL (PyStore::Run).
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "py_store.h"
#include "sessiondb/forget.h"
#include "sessiondb/store.h"
#include "support.h"

namespace sessiondb::python {

namespace {

constexpr int64_t kMsPerDay = int64_t{24} * 60 * 60 * 1000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

py::dict CountsDict(const std::vector<std::pair<std::string, int64_t>>& counts) {
  py::dict out;
  for (const auto& [kind, n] : counts) out[py::str(kind)] = n;
  return out;
}

// The receipt as the dict its canonical JSON gives.
py::object ReceiptDict(const ErasureReceipt& receipt) {
  return JsonToPy(ErasureReceiptToJson(receipt), py::dict());
}

// A receipt from what erase() returned (a dict) or its JSON text (str or
// bytes). Text is read and written again compact, keys in the order they
// came: the receipt's parser takes the order of its counts from the text as
// its canonical form spells it, so a receipt pretty-printed (json.dumps'
// spaces, indent=2) still checks.
ErasureReceipt ReceiptOf(py::handle value) {
  std::string json;
  if (PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr())) {
    const std::string text =
        PyUnicode_Check(value.ptr()) ? TextOf(value, "the receipt") : BytesOf(value);
    py::object parsed;
    try {
      parsed = JsonToPy(text, py::none());
    } catch (py::error_already_set& e) {
      ThrowInvalid("the receipt is not JSON: " + std::string(py::str(e.value())));
    }
    if (!PyDict_Check(parsed.ptr())) ThrowInvalid("the receipt is not a JSON object");
    json = PyToJson(parsed);
  } else if (PyDict_Check(value.ptr())) {
    json = PyToJson(value);
  } else {
    ThrowInvalid("a receipt is the dict erase() returned or its JSON text, not " + TypeName(value));
  }
  return Unwrap(ParseErasureReceipt(json));
}

// `before` of erase(): None (no bound), ms since the epoch (an int), or a
// datetime (its timestamp(): a naive one is local time, as Python reads it).
int64_t BeforeMsOf(py::handle before) {
  if (before.is_none()) return 0;
  if (PyLong_Check(before.ptr()) && !PyBool_Check(before.ptr())) {
    return CountOf(before, "before (ms since the epoch)");
  }
  if (py::hasattr(before, "timestamp")) {
    const double seconds = py::cast<double>(before.attr("timestamp")());
    if (!std::isfinite(seconds) || seconds < 0) {
      ThrowInvalid("before is before 1970; erase takes a time since the epoch");
    }
    return static_cast<int64_t>(std::llround(seconds * 1000.0));
  }
  ThrowInvalid("before must be None, a datetime or ms since the epoch (an int), not " +
               TypeName(before));
}

// One message of erase(messages=...): a (session_id, seq) pair or a dict
// {"session_id": ..., "seq": ...}.
MessageRef MessageRefOf(py::handle item) {
  MessageRef ref;
  if (PyDict_Check(item.ptr())) {
    py::dict d = py::reinterpret_borrow<py::dict>(item);
    if (!d.contains("session_id") || !d.contains("seq")) {
      ThrowInvalid("a message to erase is {'session_id': ..., 'seq': ...}");
    }
    ref.session_id = TextOf(d["session_id"], "session_id");
    ref.seq = CountOf(d["seq"], "seq");
    return ref;
  }
  if (PyTuple_Check(item.ptr()) || PyList_Check(item.ptr())) {
    py::sequence pair = py::reinterpret_borrow<py::sequence>(item);
    if (py::len(pair) != 2) ThrowInvalid("a message to erase is a (session_id, seq) pair");
    ref.session_id = TextOf(pair[0], "session_id");
    ref.seq = CountOf(pair[1], "seq");
    return ref;
  }
  ThrowInvalid("a message to erase is a (session_id, seq) pair or a dict, not " + TypeName(item));
}

// A number of a policy dict: an int >= 0 under `key`, `fallback` when absent.
int64_t PolicyNumber(const py::dict& d, const char* key, int64_t fallback) {
  if (!d.contains(key)) return fallback;
  return CountOf(d[key], key);
}

void RefuseUnknownKeys(const py::dict& d, std::initializer_list<std::string_view> known,
                       std::string_view what) {
  for (auto item : d) {
    std::string key = py::str(item.first);
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (!found) ThrowInvalid("unknown key '" + key + "' in " + std::string(what));
  }
}

RetentionPolicy PolicyOf(py::handle value) {
  if (!PyDict_Check(value.ptr())) {
    ThrowInvalid("a retention policy is a dict, not " + TypeName(value));
  }
  py::dict d = py::reinterpret_borrow<py::dict>(value);
  RefuseUnknownKeys(d, {"trash_grace_days", "rules"}, "the retention policy");
  RetentionPolicy policy;
  policy.trash_grace_days = PolicyNumber(d, "trash_grace_days", policy.trash_grace_days);
  if (d.contains("rules")) {
    for (py::handle item : py::reinterpret_borrow<py::iterable>(d["rules"])) {
      if (!PyDict_Check(item.ptr())) ThrowInvalid("a retention rule is a dict");
      py::dict r = py::reinterpret_borrow<py::dict>(item);
      RefuseUnknownKeys(r,
                        {"project", "trash_after_idle_days", "keep_newest",
                         "archive_after_idle_days", "erase_archived_after_idle_days"},
                        "a retention rule");
      RetentionRule rule;
      if (r.contains("project")) rule.project = TextOf(r["project"], "project");
      rule.trash_after_idle_days = PolicyNumber(r, "trash_after_idle_days", 0);
      rule.keep_newest = PolicyNumber(r, "keep_newest", 0);
      rule.archive_after_idle_days = PolicyNumber(r, "archive_after_idle_days", 0);
      rule.erase_archived_after_idle_days = PolicyNumber(r, "erase_archived_after_idle_days", 0);
      policy.rules.push_back(std::move(rule));
    }
  }
  return policy;
}

py::dict PolicyDict(const RetentionPolicy& policy) {
  py::list rules;
  for (const RetentionRule& rule : policy.rules) {
    py::dict r;
    r["project"] = rule.project;
    r["trash_after_idle_days"] = rule.trash_after_idle_days;
    r["keep_newest"] = rule.keep_newest;
    r["archive_after_idle_days"] = rule.archive_after_idle_days;
    r["erase_archived_after_idle_days"] = rule.erase_archived_after_idle_days;
    rules.append(r);
  }
  py::dict out;
  out["trash_grace_days"] = policy.trash_grace_days;
  out["rules"] = rules;
  return out;
}

py::dict LedgerEntryDict(const LedgerEntry& e) {
  py::dict out;
  out["id"] = e.id;
  out["ts_ms"] = e.ts_ms;
  out["actor"] = e.actor;
  out["action"] = e.action;
  out["scope"] = e.scope;
  out["counts"] = CountsDict(e.counts);
  out["receipt_id"] = e.receipt_id;
  out["receipt_digest"] = e.receipt_digest;
  return out;
}

}  // namespace

void BindForget(py::class_<PyStore>& cls) {
  cls.def(
         "trash_session",
         [](PyStore& self, const std::string& id) {
           self.Run([&](Store& s) { Check(s.TrashSession(id)); });
         },
         py::arg("id"),
         "Moves the session to the trash: hidden from lists, reads by id and search until "
         "restore_from_trash; forks of it keep working. NotFound for a missing session or one "
         "already in the trash.")
      .def(
          "restore_from_trash",
          [](PyStore& self, const std::string& id) {
            return self.Run([&](Store& s) { return Unwrap(s.RestoreFromTrash(id)); });
          },
          py::arg("id"),
          "Takes the session out of the trash, as it was, and returns it. NotFound when it is "
          "not in the trash.")
      .def(
          "list_trash",
          [](PyStore& self, int limit, const std::string& cursor) {
            ListOptions options{.limit = limit, .cursor = cursor, .trash = true};
            SessionPage page = self.Run([&](Store& s) { return Unwrap(s.ListSessions(options)); });
            return py::make_tuple(py::cast(std::move(page.sessions)), page.next_cursor);
          },
          py::arg("limit") = 50, py::arg("cursor") = "",
          "One page of the trash, most recently updated first: (sessions, next_cursor), each "
          "with trashed_ms set. Store.trash() iterates every page.")
      .def(
          "empty_trash",
          [](PyStore& self, std::optional<int64_t> older_than_days) {
            if (older_than_days && *older_than_days < 0) {
              ThrowInvalid("older_than_days is " + std::to_string(*older_than_days) +
                           "; it must be 0 or more");
            }
            ErasureReceipt receipt = self.Run([&](Store& s) {
              // None: the policy's grace, as `sessiondb trash empty` and
              // POST /v1/trash/empty without a body take it.
              const int64_t days = older_than_days
                                       ? *older_than_days
                                       : Unwrap(s.GetRetentionPolicy()).trash_grace_days;
              // 0 days: everything in the trash, what went there this millisecond too.
              const int64_t now = NowMs();
              return Unwrap(s.EmptyTrash(days == 0 ? now + 1 : now - days * kMsPerDay));
            });
            return ReceiptDict(receipt);
          },
          py::arg("older_than_days") = py::none(),
          "Erases for good the sessions trashed more than older_than_days ago (0: all of the "
          "trash; None: the retention policy's trash_grace_days) and returns the erasure's "
          "receipt (a dict).")
      .def(
          "erase",
          [](PyStore& self, const std::vector<std::string>& session_ids, const std::string& project,
             py::object before, bool everything, py::iterable messages, const std::string& reason) {
            EraseRequest request;
            request.session_ids = session_ids;
            request.project = project;
            request.before_ms = BeforeMsOf(before);
            request.everything = everything;
            for (py::handle item : messages) request.messages.push_back(MessageRefOf(item));
            request.reason = reason;
            ErasureReceipt receipt = self.Run([&](Store& s) { return Unwrap(s.Erase(request)); });
            return ReceiptDict(receipt);
          },
          py::arg("session_ids") = std::vector<std::string>{}, py::kw_only(),
          py::arg("project") = "", py::arg("before") = py::none(), py::arg("everything") = false,
          py::arg("messages") = py::tuple(), py::arg("reason") = "",
          "Erases for good, all or nothing, what is selected (the parts add up): sessions by "
          "id, a project, sessions last updated before `before` (a datetime or ms), "
          "everything, or single messages ((session_id, seq) pairs). Returns the receipt (a "
          "dict, never content). InvalidArgument when nothing is selected; NotFound for a "
          "named session or message that does not exist.")
      .def(
          "verify_erased",
          [](PyStore& self, py::object receipt_arg) {
            ErasureReceipt receipt = ReceiptOf(receipt_arg);
            ErasureCheck check =
                self.Run([&](Store& s) { return Unwrap(s.VerifyErased(receipt)); });
            py::dict out;
            out["erased"] = check.erased();
            out["digest_ok"] = check.digest_ok;
            out["problems"] = py::cast(check.problems);
            out["checks"] = check.checks;
            return out;
          },
          py::arg("receipt"),
          "Checks a receipt (the dict erase() returned, or its JSON text) against the store: "
          "{'erased', 'digest_ok', 'problems', 'checks'}.")
      .def(
          "ledger",
          [](PyStore& self, int64_t limit, int64_t before_id) {
            LedgerQuery query{.limit = limit, .before_id = before_id};
            std::vector<LedgerEntry> entries =
                self.Run([&](Store& s) { return Unwrap(s.ReadLedger(query)); });
            py::list out;
            for (const LedgerEntry& e : entries) out.append(LedgerEntryDict(e));
            return out;
          },
          py::arg("limit") = 100, py::arg("before_id") = 0,
          "The ledger of forgetting, newest first: dicts of id, ts_ms, actor, action, scope, "
          "counts, receipt_id, receipt_digest (never content). before_id pages back.")
      .def_property(
          "retention_policy",
          [](PyStore& self) {
            RetentionPolicy policy =
                self.Run([&](Store& s) { return Unwrap(s.GetRetentionPolicy()); });
            return PolicyDict(policy);
          },
          [](PyStore& self, py::object value) {
            RetentionPolicy policy = PolicyOf(value);
            self.Run([&](Store& s) { Check(s.SetRetentionPolicy(policy)); });
          },
          "The retention policy, a dict: {'trash_grace_days': 30, 'rules': [{'project', "
          "'trash_after_idle_days', 'keep_newest', 'archive_after_idle_days', "
          "'erase_archived_after_idle_days'}]}. Assign a dict to set it (absent numbers are 0, "
          "the grace 30).")
      .def(
          "apply_retention",
          [](PyStore& self, bool dry_run) {
            RetentionRun run =
                self.Run([&](Store& s) { return Unwrap(s.ApplyRetention(dry_run)); });
            py::dict out;
            out["dry_run"] = run.dry_run;
            out["archived"] = py::cast(run.archived);
            out["trashed"] = py::cast(run.trashed);
            out["erased"] = py::cast(run.erased);
            out["kept_for_forks"] = py::cast(run.kept_for_forks);
            out["receipt_id"] = run.receipt_id;
            out["ledger_id"] = run.ledger_id;
            return out;
          },
          py::arg("dry_run") = true,
          "Applies the retention policy now (dry_run=True: says what it would do, changes and "
          "records nothing): {'dry_run', 'archived', 'trashed', 'erased', 'kept_for_forks', "
          "'receipt_id', 'ledger_id'}.");
}

}  // namespace sessiondb::python
