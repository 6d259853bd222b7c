"""Forgetting on purpose from Python (docs/python.md, "Forgetting"): the
trash, erasure and its receipt, the check of a receipt, the ledger, the
retention policy; on both backends. And what the SDK adapters' deletes do
now: LangGraph's delete_thread trashes, its prune erases."""

import json
from datetime import datetime, timezone

import pytest

import sessiondb
from sessiondb.langgraph import SessiondbSaver

RECEIPT_KEYS = {"id", "erased_ms", "store", "namespace", "actor", "scope", "sessions",
                "kept_for_forks", "messages", "counts", "blobs", "digest"}
COUNT_KINDS = ["sessions", "events", "messages", "blobs", "blob_bytes", "drafts", "usage_rows",
               "code_writes", "search_documents", "embeddings", "file_versions"]


@pytest.fixture
def actor_store(store_location):
    """A store whose forgetting the ledger records as "py-tester"."""
    location, options = store_location
    with sessiondb.open(location, actor="py-tester", **options) as s:
        yield s


def _session(store, title, *texts, metadata=None):
    s = store.create_session(title=title, metadata=metadata)
    for t in texts:
        store.append(s.id, "user", t)
    return store.get_session(s.id)


def _updated_after(store, session_id, ms):
    """Appends to the session until its updated time is past `ms` (a clock
    tick), so "older" and "newer" are unambiguous; returns the session."""
    for _ in range(100000):
        s = store.get_session(session_id)
        if s.updated_ms > ms:
            return s
        store.append(session_id, "assistant", "tick")
    raise AssertionError("the clock did not move")


def _listed(store):
    return [s.id for s in store.sessions(archived="all")]


# ---- the trash ------------------------------------------------------------------


def test_a_trashed_session_leaves_the_list_and_comes_back_as_it_was(store):
    keep = _session(store, "Keep", "hello")
    gone = _session(store, "Trash me", "first", "second")
    store.trash_session(gone.id)

    assert _listed(store) == [keep.id]
    with pytest.raises(sessiondb.NotFound):
        store.get_session(gone.id)
    with pytest.raises(sessiondb.NotFound):
        store.read(gone.id)
    page, cursor = store.list_trash()
    assert [s.id for s in page] == [gone.id] and cursor == ""
    assert page[0].trashed_ms > 0 and page[0].title == "Trash me"
    assert [s.id for s in store.trash()] == [gone.id]
    assert store.get_session(keep.id).trashed_ms == 0

    back = store.restore_from_trash(gone.id)
    assert (back.id, back.title, back.message_count, back.trashed_ms) == (gone.id, "Trash me", 2, 0)
    assert [m.text for m in store.read(gone.id)] == ["first", "second"]
    assert sorted(_listed(store)) == sorted([keep.id, gone.id])
    assert store.list_trash() == ([], "")


def test_trash_and_restore_refuse_what_is_not_there(store):
    s = _session(store, "Once", "x")
    with pytest.raises(sessiondb.NotFound):
        store.restore_from_trash(s.id)  # not in the trash
    store.trash_session(s.id)
    with pytest.raises(sessiondb.NotFound):
        store.trash_session(s.id)  # already there
    with pytest.raises(sessiondb.NotFound):
        store.trash_session("no-such-session")


def test_the_trash_is_listed_a_page_at_a_time(store):
    ids = {_session(store, f"s{i}", "x").id for i in range(3)}
    for sid in ids:
        store.trash_session(sid)
    first, cursor = store.list_trash(limit=2)
    assert len(first) == 2 and cursor
    rest, end = store.list_trash(limit=2, cursor=cursor)
    assert len(rest) == 1 and end == ""
    assert {s.id for s in first + rest} == ids
    assert {s.id for s in store.trash(page_size=1)} == ids


def test_emptying_the_trash_erases_it_for_good_and_gives_a_receipt(store):
    s = _session(store, "Bin", "one", "two")
    store.trash_session(s.id)

    # Nothing was trashed a day ago: nothing goes.
    receipt = store.empty_trash(older_than_days=1)
    assert receipt["counts"]["sessions"] == 0
    assert [t.id for t in store.trash()] == [s.id]

    # By default, the policy's grace (30 days): nothing goes either.
    assert store.empty_trash()["sessions"] == []
    assert [t.id for t in store.trash()] == [s.id]

    receipt = store.empty_trash(older_than_days=0)
    assert set(receipt) == RECEIPT_KEYS
    assert list(receipt["counts"]) == COUNT_KINDS
    assert receipt["sessions"] == [s.id]
    assert receipt["counts"]["sessions"] == 1 and receipt["counts"]["messages"] == 2
    assert store.list_trash() == ([], "")
    with pytest.raises(sessiondb.NotFound):
        store.restore_from_trash(s.id)
    assert store.verify_erased(receipt)["erased"] is True
    with pytest.raises(sessiondb.InvalidArgument):
        store.empty_trash(older_than_days=-1)


# ---- erasure and its receipt -------------------------------------------------------


def test_erasing_a_session_leaves_no_trace_the_receipt_can_find(store):
    keep = _session(store, "Keep", "stays")
    gone = _session(store, "Erase me", "my secret", "more")
    receipt = store.erase([gone.id], reason="the user asked")

    assert receipt["sessions"] == [gone.id]
    assert receipt["counts"]["sessions"] == 1 and receipt["counts"]["messages"] == 2
    assert receipt["digest"] and receipt["id"]
    assert "my secret" not in json.dumps(receipt)  # counts and digests, never content
    assert _listed(store) == [keep.id]
    assert store.list_trash() == ([], "")
    with pytest.raises(sessiondb.NotFound):
        store.get_session(gone.id)

    check = store.verify_erased(receipt)
    assert check["erased"] is True and check["digest_ok"] is True
    assert check["problems"] == [] and check["checks"] > 0
    # The receipt's JSON text checks the same, compact or pretty-printed.
    assert store.verify_erased(json.dumps(receipt, separators=(",", ":"))) == check
    assert store.verify_erased(json.dumps(receipt, indent=2)) == check
    assert store.verify_erased(json.dumps(receipt).encode()) == check


def test_a_receipt_changed_after_it_was_issued_no_longer_checks(store):
    gone = _session(store, "Erase me", "x")
    receipt = store.erase([gone.id])
    forged = dict(receipt, scope="something else")
    check = store.verify_erased(forged)
    assert check["digest_ok"] is False and check["erased"] is False
    with pytest.raises(sessiondb.InvalidArgument):
        store.verify_erased("not a receipt")
    with pytest.raises(sessiondb.InvalidArgument):
        store.verify_erased(42)


def test_erase_refuses_an_empty_request_and_unknown_sessions(store):
    with pytest.raises(sessiondb.InvalidArgument):
        store.erase()
    with pytest.raises(sessiondb.NotFound):
        store.erase(["no-such-session"])
    with pytest.raises(sessiondb.InvalidArgument):
        store.erase(before="yesterday")
    with pytest.raises(sessiondb.InvalidArgument):
        store.erase(messages=[("only-an-id",)])


def test_erasing_single_messages_keeps_the_session(store):
    s = _session(store, "Mixed", "keep this", "my password is hunter2", "keep that")
    receipt = store.erase(messages=[(s.id, 2)])
    assert receipt["messages"] == [{"session_id": s.id, "seq": 2}]
    assert receipt["sessions"] == []
    texts = [m.text for m in store.read(s.id)]
    assert "keep this" in texts and "keep that" in texts
    assert not any("hunter2" in t for t in texts)
    assert store.verify_erased(receipt)["erased"] is True
    # A dict names a message too.
    receipt = store.erase(messages=[{"session_id": s.id, "seq": 1}])
    assert receipt["messages"] == [{"session_id": s.id, "seq": 1}]


def test_erasing_by_time_takes_only_the_sessions_last_updated_before_it(store):
    old = _session(store, "Old", "x")
    new = _updated_after(store, _session(store, "New", "y").id, old.updated_ms)
    # A datetime (aware), and ms, name the same moment.
    before = datetime.fromtimestamp((old.updated_ms + 1) / 1000, tz=timezone.utc)
    receipt = store.erase(before=before)
    assert receipt["sessions"] == [old.id]
    assert _listed(store) == [new.id]
    receipt = store.erase(before=new.updated_ms + 1)
    assert receipt["sessions"] == [new.id]
    assert _listed(store) == []


def test_erasing_a_project_takes_its_folder_and_below(store):
    app = _session(store, "App", "x", metadata={"project": "/src/app"})
    lib = _session(store, "Lib", "y", metadata={"project": "/src/app/lib"})
    other = _session(store, "Other", "z", metadata={"project": "/src/application"})
    receipt = store.erase(project="/src/app")
    assert sorted(receipt["sessions"]) == sorted([app.id, lib.id])
    assert _listed(store) == [other.id]


def test_erasing_everything_empties_the_store_but_keeps_the_ledger(actor_store):
    store = actor_store
    for i in range(3):
        _session(store, f"s{i}", "x")
    receipt = store.erase(everything=True)
    assert receipt["counts"]["sessions"] == 3
    assert _listed(store) == []
    assert store.ledger(limit=1)[0]["action"] == "erase"


# ---- the ledger ------------------------------------------------------------------------


def test_the_ledger_records_who_forgot_what_newest_first(actor_store):
    store = actor_store
    s = _session(store, "Tracked", "secret words")
    store.trash_session(s.id)
    store.restore_from_trash(s.id)
    receipt = store.erase([s.id], reason="cleanup")

    entries = store.ledger()
    assert [e["action"] for e in entries[:3]] == ["erase", "restore", "trash"]
    assert all(e["actor"] == "py-tester" for e in entries[:3])
    assert entries[0]["id"] > entries[1]["id"] > entries[2]["id"]
    assert entries[0]["receipt_id"] == receipt["id"]
    assert entries[0]["receipt_digest"] == receipt["digest"]
    assert entries[0]["counts"]["sessions"] == 1
    assert s.id in entries[2]["scope"]
    assert "secret words" not in json.dumps(entries)
    assert set(entries[0]) == {"id", "ts_ms", "actor", "action", "scope", "counts", "receipt_id",
                               "receipt_digest"}
    # Paging back from an id.
    assert store.ledger(limit=1) == entries[:1]
    assert store.ledger(before_id=entries[0]["id"]) == entries[1:]


def test_delete_session_is_immediate_and_recorded(store):
    s = _session(store, "Gone at once", "x")
    store.delete_session(s.id)
    with pytest.raises(sessiondb.NotFound):
        store.get_session(s.id)
    assert store.list_trash() == ([], "")  # no trash: deleted for good
    assert store.ledger(limit=1)[0]["action"] == "delete"


# ---- retention ---------------------------------------------------------------------------


def test_the_retention_policy_reads_back_as_set(store):
    assert store.retention_policy == {"trash_grace_days": 30, "rules": []}
    policy = {"trash_grace_days": 7, "rules": [
        {"project": "", "trash_after_idle_days": 90, "keep_newest": 0,
         "archive_after_idle_days": 30, "erase_archived_after_idle_days": 365},
        {"project": "/src/app", "trash_after_idle_days": 0, "keep_newest": 5,
         "archive_after_idle_days": 0, "erase_archived_after_idle_days": 0}]}
    store.retention_policy = policy
    assert store.retention_policy == policy
    # Absent numbers are 0.
    store.retention_policy = {"rules": [{"project": "/x", "keep_newest": 2}]}
    assert store.retention_policy == {"trash_grace_days": 30, "rules": [
        {"project": "/x", "trash_after_idle_days": 0, "keep_newest": 2,
         "archive_after_idle_days": 0, "erase_archived_after_idle_days": 0}]}


def test_a_bad_retention_policy_is_refused_and_the_old_one_kept(store):
    store.retention_policy = {"trash_grace_days": 3, "rules": []}
    for bad in ({"trash_grace_days": -1},
                {"rules": [{"project": "/a", "keep_newest": 1}, {"project": "/a", "keep_newest": 2}]},
                {"trash_grace_days": 3, "colour": "blue"},
                {"rules": [{"project": "/a", "keep_newst": 1}]},
                "not a dict"):
        with pytest.raises(sessiondb.InvalidArgument):
            store.retention_policy = bad
    assert store.retention_policy == {"trash_grace_days": 3, "rules": []}


def test_a_dry_run_says_what_retention_would_do_and_a_real_run_does_it(store):
    oldest = _session(store, "oldest", "x")
    middle = _updated_after(store, _session(store, "middle", "y").id, oldest.updated_ms)
    newest = _updated_after(store, _session(store, "newest", "z").id, middle.updated_ms)
    store.retention_policy = {"rules": [{"project": "", "keep_newest": 1}]}

    dry = store.apply_retention()
    assert dry["dry_run"] is True
    assert sorted(dry["trashed"]) == sorted([oldest.id, middle.id])
    assert dry["ledger_id"] == 0
    assert len(_listed(store)) == 3 and store.list_trash() == ([], "")

    run = store.apply_retention(dry_run=False)
    assert run["dry_run"] is False
    assert sorted(run["trashed"]) == sorted([oldest.id, middle.id])
    assert run["ledger_id"] > 0
    assert _listed(store) == [newest.id]
    assert sorted(s.id for s in store.trash()) == sorted([oldest.id, middle.id])
    entry = store.ledger(limit=1)[0]
    assert (entry["id"], entry["actor"]) == (run["ledger_id"], "policy")


# ---- the SDK adapters' deletes --------------------------------------------------------------


def _checkpoint(cid):
    return {"v": 1, "id": cid, "ts": "2024-01-01T00:00:00+00:00", "channel_values": {},
            "channel_versions": {}, "versions_seen": {}}


def _cfg(thread):
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


def test_langgraph_delete_thread_moves_the_thread_to_the_trash(store):
    saver = SessiondbSaver(store)
    saver.put(_cfg("t"), _checkpoint("001"), {}, {})
    saver.delete_thread("t")
    assert saver.get_tuple(_cfg("t")) is None
    trashed = list(store.trash())
    assert [s.metadata.get("thread_id") for s in trashed] == ["t"]
    # Undone, a new saver finds the checkpoint again.
    store.restore_from_trash(trashed[0].id)
    assert SessiondbSaver(store).get_tuple(_cfg("t")).checkpoint["id"] == "001"


def test_langgraph_prune_delete_erases_with_no_trash(store):
    saver = SessiondbSaver(store)
    saver.put(_cfg("t"), _checkpoint("001"), {}, {})
    saver.prune(["t"], strategy="delete")
    assert saver.get_tuple(_cfg("t")) is None
    assert store.list_trash() == ([], "")
