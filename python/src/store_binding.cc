// sessiondb.Store (the C++ half; python/sessiondb/__init__.py adds the
// iterators and the friendlier append): sessions, messages, the harness
// (forks, events, compaction, prune, resource views, drafts, usage), blobs,
// housekeeping and projections. Each engine call releases the GIL (PyStore::Run).
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>

#include "checkpoint_binding.h"
#include "parts.h"
#include "py_store.h"
#include "sessiondb/projection.h"
#include "sessiondb/store.h"
#include "support.h"

namespace sessiondb::python {

namespace {

ArchiveFilter ArchiveFilterOf(const std::string& name) {
  if (name == "active") return ArchiveFilter::kActive;
  if (name == "archived") return ArchiveFilter::kArchived;
  if (name == "all") return ArchiveFilter::kAll;
  ThrowInvalid("unknown archived filter '" + name + "'; expected one of: active, archived, all");
}

std::unique_ptr<PyStore> OpenStore(py::handle location_arg, const std::string& durability,
                                   std::optional<int64_t> max_image_bytes,
                                   std::optional<int> max_images_per_message,
                                   std::optional<int64_t> max_file_bytes, bool create_if_missing,
                                   bool read_only, std::optional<int> busy_timeout_ms,
                                   const std::string& namespace_name,
                                   std::optional<int> max_connections, const std::string& actor,
                                   py::handle key_file) {
  std::string location = py::str(py::module_::import("os").attr("fspath")(location_arg));
  StoreOptions options;
  if (durability == "durable") {
    options.durability = Durability::kDurable;
  } else if (durability == "process-crash-safe" || durability == "process_crash_safe") {
    options.durability = Durability::kProcessCrashSafe;
  } else {
    ThrowInvalid("unknown durability '" + durability +
                 "'; expected one of: durable, process-crash-safe");
  }
  if (max_image_bytes) options.max_image_bytes = *max_image_bytes;
  if (max_images_per_message) options.max_images_per_message = *max_images_per_message;
  if (max_file_bytes) options.max_file_bytes = *max_file_bytes;
  options.create_if_missing = create_if_missing;
  options.read_only = read_only;
  if (busy_timeout_ms) options.busy_timeout_ms = *busy_timeout_ms;
  options.namespace_name = namespace_name;
  if (max_connections) options.max_connections = *max_connections;
  options.actor = actor;
  // None: $SESSIONDB_KEY_FILE, as every face (docs/encryption.md).
  if (!key_file.is_none()) {
    options.key_file = py::str(py::module_::import("os").attr("fspath")(key_file));
  }
  std::unique_ptr<Store> store;
  {
    py::gil_scoped_release release;
    store = Unwrap(Store::Open(location, options));
  }
  return std::make_unique<PyStore>(location, std::move(store));
}

NewSession NewSessionOf(const std::optional<std::string>& id,
                        const std::optional<std::string>& title, py::handle metadata) {
  NewSession request;
  if (id) request.id = *id;
  if (title) request.title = *title;
  if (!metadata.is_none()) request.metadata_json = PyToJson(metadata);
  return request;
}

// The metrics of a usage row or total, as GET /v1/usage spells them.
void PutUsageMetrics(py::dict& d, const UsageMetrics& m) {
  d["turns"] = m.turns;
  d["input_tokens"] = m.usage.input_tokens;
  d["output_tokens"] = m.usage.output_tokens;
  d["cached_tokens"] = m.usage.cached_tokens;
  d["cache_write_tokens"] = m.usage.cache_write_tokens;
  d["reasoning_tokens"] = m.usage.reasoning_tokens;
  d["cost_usd"] = m.cost_usd;
  d["unpriced_turns"] = m.unpriced_turns;
}

// GET /v1/usage's shape: currency, group, rows (only the grouped keys), total.
py::dict UsageSummaryDict(const UsageSummary& s, const std::vector<UsageGroup>& group) {
  py::list names, rows;
  for (UsageGroup g : group) names.append(std::string(UsageGroupName(g)));
  for (const UsageRow& r : s.rows) {
    py::dict row;
    for (UsageGroup g : group) {
      switch (g) {
        case UsageGroup::kDay:
          row["day"] = r.day;
          break;
        case UsageGroup::kMonth:
          row["month"] = r.month;
          break;
        case UsageGroup::kProject:
          row["project"] = r.project;
          break;
        case UsageGroup::kModel:
          row["model"] = r.model;
          break;
        case UsageGroup::kProvider:
          row["provider"] = r.provider;
          break;
        case UsageGroup::kSession:
          row["session_id"] = r.session_id;
          break;
      }
    }
    PutUsageMetrics(row, r.metrics);
    rows.append(row);
  }
  py::dict total;
  PutUsageMetrics(total, s.total);
  py::dict out;
  out["currency"] = "USD";
  out["group"] = names;
  out["rows"] = rows;
  out["total"] = total;
  return out;
}

// Groups from "day,model" or ["day", "model"].
std::vector<UsageGroup> UsageGroupsOf(py::handle value) {
  std::vector<std::string> names;
  if (value.is_none()) return {};
  if (py::isinstance<py::str>(value)) {
    std::string list = value.cast<std::string>();
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) names.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  } else {
    for (py::handle h : value) names.push_back(py::str(h).cast<std::string>());
  }
  std::vector<UsageGroup> out;
  for (const std::string& n : names) out.push_back(Unwrap(ParseUsageGroup(n)));
  return out;
}

py::dict UsageReportDict(const UsageReport& report) {
  py::list by_model;
  for (const ModelUsage& m : report.by_model) {
    py::dict entry;
    entry["provider"] = m.provider;
    entry["model"] = m.model;
    entry["turns"] = m.turns;
    entry["usage"] = py::cast(m.usage);
    by_model.append(entry);
  }
  py::dict out;
  out["turns"] = report.turns;
  out["total"] = py::cast(report.total);
  out["by_model"] = by_model;
  return out;
}

void BindSessions(py::class_<PyStore>& cls) {
  cls.def(
         "create_session",
         [](PyStore& self, std::optional<std::string> id, std::optional<std::string> title,
            py::object metadata) {
           NewSession request = NewSessionOf(id, title, metadata);
           return self.Run([&](Store& s) { return Unwrap(s.CreateSession(request)); });
         },
         py::arg("id") = py::none(), py::kw_only(), py::arg("title") = py::none(),
         py::arg("metadata") = py::none(),
         "Creates a session (an id is made when none is given). AlreadyExists if the id is "
         "taken; InvalidArgument for an id that is not 1-128 of [A-Za-z0-9._-].")
      .def(
          "get_session",
          [](PyStore& self, const std::string& id) {
            return self.Run([&](Store& s) { return Unwrap(s.GetSession(id)); });
          },
          py::arg("id"), "The session's index entry; NotFound if there is none.")
      .def(
          "list_page",
          [](PyStore& self, int limit, const std::string& cursor, const std::string& archived,
             const std::string& metadata_key, const std::string& metadata_value) {
            ListOptions options{.limit = limit,
                                .cursor = cursor,
                                .archived = ArchiveFilterOf(archived),
                                .metadata_key = metadata_key,
                                .metadata_value = metadata_value};
            SessionPage page = self.Run([&](Store& s) { return Unwrap(s.ListSessions(options)); });
            return py::make_tuple(py::cast(std::move(page.sessions)), page.next_cursor);
          },
          py::arg("limit") = 50, py::arg("cursor") = "", py::kw_only(),
          py::arg("archived") = "active", py::arg("metadata_key") = "",
          py::arg("metadata_value") = "",
          "One page of sessions, most recently updated first: (sessions, next_cursor), the "
          "cursor empty on the last page. Store.sessions() iterates every page.")
      .def(
          "rename_session",
          [](PyStore& self, const std::string& id, const std::string& title) {
            self.Run([&](Store& s) { Check(s.RenameSession(id, title)); });
          },
          py::arg("id"), py::arg("title"), "Sets the title; later messages do not change it.")
      .def(
          "archive_session",
          [](PyStore& self, const std::string& id, bool archived) {
            self.Run([&](Store& s) { Check(s.SetArchived(id, archived)); });
          },
          py::arg("id"), py::arg("archived") = true,
          "Archives (or, with False, restores) a session.")
      .def(
          "delete_session",
          [](PyStore& self, const std::string& id) {
            self.Run([&](Store& s) { Check(s.DeleteSession(id)); });
          },
          py::arg("id"),
          "Deletes the session and its log for good, at once, with no trash (recorded in the "
          "ledger; forks of it keep what they read). trash_session is the undoable delete.")
      .def(
          "purge_archived",
          [](PyStore& self, int64_t before_ms) {
            return self.Run([&](Store& s) { return Unwrap(s.PurgeArchived(before_ms)); });
          },
          py::arg("before_ms"),
          "Deletes archived sessions last updated before before_ms; returns how many.")
      .def_property(
          "active_session",
          [](PyStore& self) {
            return self.Run([&](Store& s) { return Unwrap(s.GetActiveSession()); });
          },
          [](PyStore& self, std::optional<std::string> id) {
            std::string value = id.value_or("");
            self.Run([&](Store& s) { Check(s.SetActiveSession(value)); });
          },
          "The active session id, or None; set to None to clear. NotFound for a missing session.");
}

void BindMessages(py::class_<PyStore>& cls) {
  cls.def(
         "append_message",
         [](PyStore& self, const std::string& session_id, const Message& message) {
           return self.Run([&](Store& s) { return Unwrap(s.Append(session_id, message)); });
         },
         py::arg("session_id"), py::arg("message"),
         "Appends one message, attachments included, all or nothing.")
      .def(
          "append_batch",
          [](PyStore& self, const std::string& session_id, std::vector<Message> messages) {
            return self.Run([&](Store& s) { return Unwrap(s.AppendBatch(session_id, messages)); });
          },
          py::arg("session_id"), py::arg("messages"),
          "Appends several messages in one transaction: all or none.")
      .def(
          "read",
          [](PyStore& self, const std::string& session_id, int64_t from_seq, int64_t limit) {
            return self.Run(
                [&](Store& s) { return Unwrap(s.ReadMessages(session_id, from_seq, limit)); });
          },
          py::arg("session_id"), py::arg("from_seq") = 1, py::arg("limit") = -1,
          "Messages with seq >= from_seq, in order, at most limit (-1: all).")
      .def(
          "read_last",
          [](PyStore& self, const std::string& session_id, int64_t count) {
            return self.Run(
                [&](Store& s) { return Unwrap(s.ReadLastMessages(session_id, count)); });
          },
          py::arg("session_id"), py::arg("count"), "The last `count` messages, in order.")
      .def(
          "read_events",
          [](PyStore& self, const std::string& session_id, int64_t from_seq, int64_t limit) {
            return self.Run(
                [&](Store& s) { return Unwrap(s.ReadEvents(session_id, from_seq, limit)); });
          },
          py::arg("session_id"), py::arg("from_seq") = 1, py::arg("limit") = -1,
          "Every event (messages, resource views, compactions...), a fork's inherited ones too.")
      .def(
          "_item_rows",
          [](PyStore& self, const std::string& session_id, int64_t count) {
            std::vector<Message> messages = self.Run([&](Store& s) {
              return Unwrap(count < 0 ? s.ReadMessages(session_id)
                                      : s.ReadLastMessages(session_id, count));
            });
            py::list rows;
            for (const Message& m : messages) {
              py::list images;
              for (const Part& p : m.parts) {
                if (p.type == PartType::kImage && p.resource)
                  images.append(p.resource->content_sha256);
              }
              py::object metadata = m.metadata_json.empty() || m.metadata_json == "{}"
                                        ? py::object(py::none())
                                        : py::object(py::str(m.metadata_json));
              rows.append(
                  py::make_tuple(std::string(RoleName(m.role)), m.Text(), metadata, images));
            }
            return rows;
          },
          py::arg("session_id"), py::arg("count") = -1,
          "For sessiondb.agents: (role, text, metadata JSON or None, image sha256s) of the "
          "view's messages (the last `count`, -1: all), without a Message object each.")
      .def(
          "read_for_projection",
          [](PyStore& self, const std::string& session_id) {
            return self.Run([&](Store& s) { return Unwrap(s.ReadForProjection(session_id)); });
          },
          py::arg("session_id"), "The events left once compactions are applied, in order.");
}

void BindHarness(py::class_<PyStore>& cls) {
  cls.def(
         "fork",
         [](PyStore& self, const std::string& parent_id, std::optional<int64_t> at_seq,
            std::optional<std::string> id, std::optional<std::string> title, py::object metadata) {
           NewSession child = NewSessionOf(id, title, metadata);
           return self.Run([&](Store& s) {
             int64_t seq = at_seq ? *at_seq : Unwrap(s.GetSession(parent_id)).last_seq;
             return Unwrap(s.ForkSession(parent_id, seq, child));
           });
         },
         py::arg("parent_id"), py::arg("at_seq") = py::none(), py::kw_only(),
         py::arg("id") = py::none(), py::arg("title") = py::none(),
         py::arg("metadata") = py::none(),
         "A new session whose history is the parent's up to at_seq (default: all of it), in "
         "constant time: nothing is copied.")
      .def(
          "compact",
          [](PyStore& self, const std::string& session_id, int64_t from_seq, int64_t to_seq,
             std::string summary, std::string strategy, std::string model,
             std::string limitations) {
            CompactionRequest request{from_seq,           to_seq,
                                      std::move(summary), std::move(strategy),
                                      std::move(model),   std::move(limitations)};
            return self.Run([&](Store& s) { return Unwrap(s.Compact(session_id, request)); });
          },
          py::arg("session_id"), py::arg("from_seq"), py::arg("to_seq"), py::arg("summary"),
          py::kw_only(), py::arg("strategy") = "", py::arg("model") = "",
          py::arg("limitations") = "",
          "Appends a compaction whose summary stands in for from_seq..to_seq in projections.")
      .def(
          "prune",
          [](PyStore& self, const std::string& session_id, int64_t compaction_seq) {
            PruneReport r = self.Run(
                [&](Store& s) { return Unwrap(s.PruneCompaction(session_id, compaction_seq)); });
            py::dict out;
            out["events_pruned"] = r.events_pruned;
            out["blobs_deleted"] = r.blobs_deleted;
            out["bytes_freed"] = r.bytes_freed;
            return out;
          },
          py::arg("session_id"), py::arg("compaction_seq"),
          "Drops the parts of the messages the compaction covers; they stay as pruned stubs.")
      .def(
          "view_resource",
          [](PyStore& self, const std::string& session_id, const std::string& resource_id,
             const std::string& reason) {
            return self.Run([&](Store& s) {
              return Unwrap(s.RecordResourceView(session_id, resource_id, reason));
            });
          },
          py::arg("session_id"), py::arg("resource_id"), py::arg("reason") = "",
          "Records that a resource was viewed on purpose: the next projection sends it in full.")
      .def(
          "usage",
          [](PyStore& self, const std::string& session_id) {
            UsageReport r = self.Run([&](Store& s) { return Unwrap(s.GetUsage(session_id)); });
            return UsageReportDict(r);
          },
          py::arg("session_id"), "Token totals of the session's own turns: turns, total, by_model.")
      .def(
          "usage_summary",
          [](PyStore& self, py::object group, const std::string& since, const std::string& until,
             const std::string& project, std::optional<std::vector<std::string>> sessions,
             const std::string& prices) {
            UsageQuery q;
            q.group = UsageGroupsOf(group);
            q.since = since;
            q.until = until;
            q.project = project;
            if (sessions) q.session_ids = *sessions;
            q.prices_path = prices;
            UsageSummary s = self.Run([&](Store& st) { return Unwrap(st.GetUsageSummary(q)); });
            return UsageSummaryDict(s, q.group);
          },
          py::arg("group") = py::none(), py::kw_only(), py::arg("since") = "",
          py::arg("until") = "", py::arg("project") = "", py::arg("sessions") = py::none(),
          py::arg("prices") = "",
          "Usage and cost across sessions grouped by day, month, project, model, provider or "
          "session (docs/usage.md): {currency, group, rows, total}, as GET /v1/usage.")
      .def(
          "turn_usage",
          [](PyStore& self, const std::string& session_id, const std::string& prices) {
            std::vector<TurnUsage> turns =
                self.Run([&](Store& s) { return Unwrap(s.GetTurnUsage(session_id, prices)); });
            py::list out;
            for (const TurnUsage& t : turns) {
              py::dict d;
              d["seq"] = t.seq;
              d["ts_ms"] = t.ts_ms;
              d["provider"] = t.provider;
              d["model"] = t.model;
              d["usage"] = py::cast(t.usage);
              d["cost_usd"] = t.cost_usd ? py::cast(*t.cost_usd) : py::none();
              out.append(d);
            }
            return out;
          },
          py::arg("session_id"), py::kw_only(), py::arg("prices") = "",
          "The session's own turns that carried usage, each priced (cost_usd None: no price).")
      .def(
          "open_draft",
          [](PyStore& self, const std::string& session_id, const std::string& role,
             const std::string& model) {
            Role r = RoleOf(role);
            return self.Run([&](Store& s) { return Unwrap(s.OpenDraft(session_id, r, model)); });
          },
          py::arg("session_id"), py::arg("role") = "assistant", py::arg("model") = "",
          "Opens a draft for streamed output.")
      .def(
          "save_draft",
          [](PyStore& self, const Draft& draft) {
            self.Run([&](Store& s) { Check(s.SaveDraft(draft)); });
          },
          py::arg("draft"), "Saves the draft's text and reasoning; NotFound once finished.")
      .def(
          "list_drafts",
          [](PyStore& self, const std::string& session_id) {
            return self.Run([&](Store& s) { return Unwrap(s.ListDrafts(session_id)); });
          },
          py::arg("session_id"), "The session's unfinished drafts, oldest first.")
      .def(
          "finish_draft",
          [](PyStore& self, const std::string& draft_id, std::optional<Message> message) {
            Message m = message.value_or(Message{.role = Role::kAssistant});
            return self.Run([&](Store& s) { return Unwrap(s.FinishDraft(draft_id, m)); });
          },
          py::arg("draft_id"), py::arg("message") = py::none(),
          "Appends the final message (the draft's text when it has no parts) and removes the "
          "draft.")
      .def(
          "discard_draft",
          [](PyStore& self, const std::string& draft_id) {
            self.Run([&](Store& s) { Check(s.DiscardDraft(draft_id)); });
          },
          py::arg("draft_id"), "Removes the draft.");
}

// Store::RewindIfUnchanged: the rewind event (docs/harness.md), what the
// Agents SDK session's pop_item and clear_session are made of. `rewind`
// itself, which can take the code along, is BindCheckpoints'
// (checkpoint_binding.cc).
void BindRewind(py::class_<PyStore>& cls) {
  cls.def(
      "rewind_if_unchanged",
      [](PyStore& self, const std::string& session_id, int64_t to_seq, int64_t expected_last_seq) {
        return self.Run([&](Store& s) {
          return Unwrap(s.RewindIfUnchanged(session_id, to_seq, expected_last_seq));
        });
      },
      py::arg("session_id"), py::arg("to_seq"), py::arg("expected_last_seq"),
      "rewind, written only while the session's last_seq is still expected_last_seq (the "
      "one read before deciding): returns the rewind event, or None with nothing written "
      "when any event landed since (read again and decide again). What pop_item of "
      "sessiondb.agents is made of.");
}

void BindBlobsAndHousekeeping(py::class_<PyStore>& cls) {
  cls.def(
         "read_blob",
         [](PyStore& self, const std::string& sha256, bool verify) {
           std::string bytes =
               self.Run([&](Store& s) { return Unwrap(s.ReadBlob(sha256, verify)); });
           return py::bytes(bytes);
         },
         py::arg("sha256"), py::arg("verify") = false,
         "The bytes named by sha256; NotFound if absent, Corruption (with verify) if they no "
         "longer hash to it.")
      .def(
          "data_uri",
          [](PyStore& self, const Resource& resource) {
            return self.Run([&](Store& s) { return Unwrap(s.ReadDataUri(resource)); });
          },
          py::arg("resource"), "The resource as a data URI.")
      .def(
          "collect_garbage",
          [](PyStore& self, std::optional<int64_t> grace_ms, bool dry_run) {
            GcOptions options;
            if (grace_ms) options.grace_ms = *grace_ms;
            options.dry_run = dry_run;
            GcReport r = self.Run([&](Store& s) { return Unwrap(s.CollectGarbage(options)); });
            py::dict out;
            out["blobs_scanned"] = r.blobs_scanned;
            out["blobs_deleted"] = r.blobs_deleted;
            out["bytes_freed"] = r.bytes_freed;
            out["blobs_in_grace"] = r.blobs_in_grace;
            return out;
          },
          py::arg("grace_ms") = py::none(), py::arg("dry_run") = false,
          "Deletes blobs no event refers to (older than grace_ms).")
      .def(
          "verify",
          [](PyStore& self) {
            VerifyReport r = self.Run([&](Store& s) { return Unwrap(s.Verify()); });
            py::dict out;
            out["clean"] = r.clean();
            out["blobs_checked"] = r.blobs_checked;
            out["bytes_checked"] = r.bytes_checked;
            out["missing"] = py::cast(r.missing);
            out["corrupt"] = py::cast(r.corrupt);
            out["database_check"] = r.database_check;
            out["database_problems"] = py::cast(r.database_problems);
            py::list damaged;
            for (const auto& d : r.damaged_sessions) damaged.append(py::make_tuple(d.id, d.error));
            out["damaged_sessions"] = damaged;
            return out;
          },
          "Re-hashes every blob and checks the database; changes nothing.")
      .def(
          "stats",
          [](PyStore& self) {
            StorageStats r = self.Run([&](Store& s) { return Unwrap(s.Stats()); });
            py::dict out;
            out["sessions"] = r.sessions;
            out["archived_sessions"] = r.archived_sessions;
            out["messages"] = r.messages;
            out["blobs"] = r.blobs;
            out["blob_bytes"] = r.blob_bytes;
            out["database_bytes"] = r.database_bytes;
            out["total_bytes"] = r.total_bytes;
            return out;
          },
          "Counts and sizes of the store.")
      .def(
          "project",
          [](PyStore& self, const std::string& session_id, const std::string& format) {
            ProjectionOptions options{.format = Unwrap(ParseProviderFormat(format))};
            std::string body =
                self.Run([&](Store& s) { return Unwrap(ProjectSession(s, session_id, options)); });
            return JsonToPy(body);
          },
          py::arg("session_id"), py::arg("format") = "openai-chat",
          "The request body for a provider, JSON-ready: {'messages': [...]} for openai-chat, "
          "{'input': [...]} for openai-responses, {'system': ..., 'messages': [...]} for "
          "anthropic. Add model and parameters and send it.");
}

}  // namespace

void BindStore(py::module_& m) {
  py::class_<PyStore> cls(m, "Store",
                          "One sessiondb database: a directory (embedded) or a postgresql:// URI. "
                          "Safe to share between threads; every call releases the GIL.");
  cls.def(py::init(&OpenStore), py::arg("location"), py::kw_only(),
          py::arg("durability") = "durable", py::arg("max_image_bytes") = py::none(),
          py::arg("max_images_per_message") = py::none(), py::arg("max_file_bytes") = py::none(),
          py::arg("create_if_missing") = true, py::arg("read_only") = false,
          py::arg("busy_timeout_ms") = py::none(), py::arg("namespace") = "",
          py::arg("max_connections") = py::none(), py::arg("actor") = "",
          py::arg("key_file") = py::none(),
          "Opens (creating if missing) the store at `location`; `key_file` (default "
          "$SESSIONDB_KEY_FILE) names the master key of an encrypted store.")
      .def_property_readonly("location", &PyStore::location)
      .def_property_readonly(
          "kind",
          [](PyStore& self) { return std::string(StoreKindName(StoreKindOf(self.location()))); })
      .def_property_readonly("closed", &PyStore::closed)
      .def(
          "close",
          [](PyStore& self) {
            py::gil_scoped_release release;
            self.Close();
          },
          "Closes the store after the calls under way; later calls raise FailedPrecondition.");
  BindSessions(cls);
  BindMessages(cls);
  BindHarness(cls);
  BindRewind(cls);
  BindCheckpoints(cls);
  BindBlobsAndHousekeeping(cls);
  BindSearch(cls);
  BindInterop(cls);
  BindForget(cls);
}

}  // namespace sessiondb::python
