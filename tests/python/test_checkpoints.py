"""Code checkpoints from Python: rewind(code=...) writes the files the
session's agent wrote back (or, dry, says how), a conflict changes nothing
without force and raises with the files listed, file_history, blame and
restore_file answer the dicts of the HTTP API, and the old two-argument
rewind still returns the event."""

import os

import pytest

import sessiondb


@pytest.fixture
def work(tmp_path):
    folder = os.path.realpath(tmp_path / "work")
    os.makedirs(folder)
    return folder


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


@pytest.fixture
def session(store, work):
    """(store, sid, path): call t1 (seq 2) creates a.txt as "one\\n", call t2
    (seq 4) makes it "one\\ntwo\\n", the file on disk now."""
    sid = store.create_session().id
    path = os.path.join(work, "a.txt")
    store.append(sid, "user", "make a.txt")
    store.append(sid, "assistant", [sessiondb.tool_call("t1", "Write", {"file_path": path})])
    store.append(sid, "user", "add a line")
    store.append(sid, "assistant", [sessiondb.tool_call("t2", "Write", {"file_path": path})])
    store.record_file_version(sid, path, None, tool_use_id="t1", phase="before", tool="Write")
    store.record_file_version(sid, path, "one\n", tool_use_id="t1", tool="Write", source="hook")
    store.record_file_version(sid, path, "one\n", tool_use_id="t2", phase="before", tool="Write")
    kept = store.record_file_version(sid, path, b"one\ntwo\n", tool_use_id="t2", tool="Write",
                                     source="hook")
    assert kept["size"] == 8 and kept["phase"] == "after" and kept["id"] > 0
    _write(path, "one\ntwo\n")
    return store, sid, path


def test_the_two_argument_rewind_still_returns_the_event(session):
    store, sid, path = session
    ev = store.rewind(sid, 2)
    assert isinstance(ev, sessiondb.Event) and ev.rewind_to_seq == 2
    assert _read(path) == "one\ntwo\n"  # the code is left alone by default
    with pytest.raises(sessiondb.InvalidArgument):
        store.rewind(sid, 1, dry_run=True)  # a dry run must never be the real thing
    with pytest.raises(sessiondb.InvalidArgument):
        store.rewind(sid, 1, code="files")


def test_a_dry_run_lists_the_files_with_diffs_and_changes_nothing(session):
    store, sid, path = session
    plan = store.rewind(sid, 2, code="both", dry_run=True)
    assert plan["dry_run"] is True and plan["conversation"] is True and "event" not in plan
    [f] = plan["files"]
    assert f["path"] == path and f["action"] == "restore" and f["done"] is False
    assert f["conflict"] is None and f["refused"] is None
    assert "\n-two" in f["diff"]
    assert _read(path) == "one\ntwo\n"
    assert len(store.read(sid)) == 4


def test_both_rewinds_the_files_then_the_conversation(session):
    store, sid, path = session
    done = store.rewind(sid, 2, code="both")
    assert isinstance(done["event"], sessiondb.Event) and done["event"].rewind_to_seq == 2
    assert [f["done"] for f in done["files"]] == [True]
    assert "diff" not in done["files"][0]
    assert _read(path) == "one\n"
    assert len(store.read(sid)) == 2


def test_only_rewinds_the_files(session):
    store, sid, path = session
    done = store.rewind(sid, 0, code="only")
    assert done["event"] is None and done["conversation"] is False
    assert done["files"][0]["action"] == "remove"
    assert not os.path.exists(path)
    assert len(store.read(sid)) == 4


def test_a_conflict_raises_with_the_files_and_changes_nothing(session):
    store, sid, path = session
    _write(path, "by hand\n")
    with pytest.raises(sessiondb.FailedPrecondition) as raised:
        store.rewind(sid, 2, code="both")
    assert raised.value.code == "failed_precondition"
    assert path in str(raised.value)
    [f] = raised.value.files
    assert f["path"] == path and f["conflict"] and f["done"] is False
    assert _read(path) == "by hand\n"
    assert len(store.read(sid)) == 4
    store.rewind(sid, 2, code="both", force=True)
    assert _read(path) == "one\n"


def test_its_own_writes_are_recorded_so_they_are_no_conflict_later(session):
    store, sid, path = session
    store.rewind(sid, 2, code="only")
    assert _read(path) == "one\n"
    assert store.file_history(path, diffs=False)["versions"][-1]["tool"] == "rewind"
    store.restore_file(path, 2)  # over the rewind's own write: no force needed
    assert _read(path) == "one\ntwo\n"
    assert store.file_history(path, diffs=False)["versions"][-1]["tool"] == "restore"


def test_file_history_has_the_shape_of_the_http_answer(session):
    store, sid, path = session
    history = store.file_history(path)
    assert history["path"] == path
    first, second = history["versions"]
    assert set(second) == {"number", "version_id", "time_ms", "session_id", "agent_session",
                           "seq", "tool", "tool_use_id", "source", "exists", "size", "sha256",
                           "prompt", "diff"}
    assert (first["number"], first["seq"], first["prompt"]) == (1, 2, "make a.txt")
    assert (second["number"], second["seq"], second["prompt"]) == (2, 4, "add a line")
    assert second["session_id"] == sid and second["tool_use_id"] == "t2"
    assert "\n+two" in second["diff"]
    assert "diff" not in store.file_history(path, diffs=False)["versions"][0]
    assert store.file_history(os.path.join(os.path.dirname(path), "none.txt"))["versions"] == []


def test_blame_names_the_call_of_each_line(session):
    store, sid, path = session
    _write(path, "one\ntwo\nmine\n")
    lines = store.blame(path)["lines"]
    assert [(l["text"], l["tool_use_id"], l["seq"]) for l in lines] == [
        ("one", "t1", 2), ("two", "t2", 4), ("mine", None, None)]
    assert lines[2]["agent"] is False and lines[2]["version_id"] is None
    assert lines[0]["session_id"] == sid


def test_restore_file_writes_a_version_back(session):
    store, sid, path = session
    dry = store.restore_file(path, 1, dry_run=True)
    assert dry["dry_run"] is True and "\n-two" in dry["files"][0]["diff"]
    assert _read(path) == "one\ntwo\n"
    done = store.restore_file(path, 1)
    assert done["files"][0]["done"] is True and done["version"] == 1
    assert _read(path) == "one\n"
    with pytest.raises(sessiondb.NotFound):
        store.restore_file(path, 9)


def test_a_path_through_a_symbolic_link_is_refused_and_not_followed(store, work):
    secret = os.path.join(work, "secret.txt")
    _write(secret, "SECRET\n")
    link = os.path.join(work, "link.txt")
    os.symlink(secret, link)
    store.record_file_version("agent", link, "mine\n", tool_use_id="t1", tool="Write")
    with pytest.raises(sessiondb.FailedPrecondition) as raised:
        store.restore_file(link, 1, force=True)
    assert raised.value.files[0]["refused"]
    with pytest.raises(sessiondb.FailedPrecondition):
        store.blame(link)
    assert _read(secret) == "SECRET\n" and os.path.islink(link)


def test_relative_paths_are_read_against_the_working_folder(session, monkeypatch):
    store, sid, path = session
    monkeypatch.chdir(os.path.dirname(path))
    assert store.file_history("a.txt", diffs=False)["path"] == path
    with pytest.raises(sessiondb.InvalidArgument):
        store.record_file_version(sid, path, "x", phase="during")
