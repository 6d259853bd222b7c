"""The LangGraph checkpoint saver, held to the interface LangGraph's savers
have (put, put_writes, get_tuple, list with filter/before/limit,
delete_thread) by a harness of our own: LangGraph is not installed here."""

import pytest

import sessiondb
from sessiondb.langgraph import SessiondbSaver


def checkpoint(cid, value):
    return {"v": 1, "id": cid, "ts": "2026-11-27T00:00:00+00:00",
            "channel_values": {"messages": value}, "channel_versions": {"messages": 1},
            "versions_seen": {}}


def cfg(thread, cid=None, ns=""):
    c = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
    if cid:
        c["configurable"]["checkpoint_id"] = cid
    return c


@pytest.fixture
def saver(store):
    return SessiondbSaver(store)


def test_put_returns_the_config_of_the_checkpoint_and_get_tuple_reads_it(saver):
    saved = saver.put(cfg("t1"), checkpoint("001", ["hi"]), {"source": "input", "step": -1}, {})
    assert saved == cfg("t1", "001")
    got = saver.get_tuple(cfg("t1"))
    assert got.config == cfg("t1", "001")
    assert got.checkpoint == checkpoint("001", ["hi"])
    assert got.metadata == {"source": "input", "step": -1, "thread_id": "t1"}
    assert got.parent_config is None and got.pending_writes == []
    assert saver.get_tuple(cfg("other")) is None


def test_the_latest_checkpoint_is_the_default_and_parents_are_linked(saver):
    c1 = saver.put(cfg("t"), checkpoint("001", [1]), {"step": 0}, {})
    c2 = saver.put(c1, checkpoint("002", [1, 2]), {"step": 1}, {})
    latest = saver.get_tuple(cfg("t"))
    assert latest.checkpoint["id"] == "002" and latest.parent_config == c1
    assert saver.get_tuple(cfg("t", "001")).checkpoint["channel_values"] == {"messages": [1]}
    assert c2 == cfg("t", "002")


def test_writes_are_returned_with_their_checkpoint_ordered_by_task_and_index(saver):
    c1 = saver.put(cfg("t"), checkpoint("001", []), {}, {})
    saver.put_writes(c1, [("b", 2), ("a", 1)], "task-2")
    saver.put_writes(c1, [("x", "first")], "task-1")
    saver.put_writes(c1, [("x", "again")], "task-1")  # a regular write is kept first
    saver.put_writes(c1, [("__error__", "e1")], "task-3")
    saver.put_writes(c1, [("__error__", "e2")], "task-3")  # a special channel is replaced
    assert saver.get_tuple(c1).pending_writes == [
        ("task-1", "x", "first"), ("task-2", "b", 2), ("task-2", "a", 1), ("task-3", "__error__", "e2")]


def test_resuming_from_an_older_checkpoint_forks_instead_of_copying(saver, store):
    c1 = saver.put(cfg("t"), checkpoint("001", ["a"]), {}, {})
    c2 = saver.put(c1, checkpoint("002", ["a", "b"]), {}, {})
    saver.put(c2, checkpoint("003", ["a", "b", "c"]), {}, {})
    # Time travel: a new checkpoint whose parent is 001.
    c4 = saver.put(c1, checkpoint("004", ["a", "z"]), {}, {})
    assert saver.get_tuple(c4).parent_config == c1
    sessions = [s for s in store.sessions() if "langgraph_thread" in s.metadata]
    forks = [s for s in sessions if s.parent_id]
    assert len(sessions) == 2 and len(forks) == 1
    assert forks[0].fork_seq == 1  # the fork shares the first checkpoint's event, not a copy
    assert [t.checkpoint["id"] for t in saver.list(cfg("t"))] == ["004", "003", "002", "001"]


def test_list_filters_by_metadata_before_and_limit(saver):
    c = saver.put(cfg("t"), checkpoint("001", []), {"source": "input", "step": -1}, {})
    c = saver.put(c, checkpoint("002", []), {"source": "loop", "step": 0}, {})
    saver.put(c, checkpoint("003", []), {"source": "loop", "step": 1}, {})
    saver.put(cfg("u"), checkpoint("009", []), {"source": "loop", "step": 0}, {})
    ids = lambda it: [t.checkpoint["id"] for t in it]  # noqa: E731
    assert ids(saver.list(cfg("t"), filter={"source": "loop"})) == ["003", "002"]
    assert ids(saver.list(cfg("t"), before=cfg("t", "003"))) == ["002", "001"]
    assert ids(saver.list(cfg("t"), limit=1)) == ["003"]
    assert ids(saver.list(None)) == ["009", "003", "002", "001"]
    assert ids(saver.list(None, filter={"step": 0})) == ["009", "002"]


def test_namespaces_of_a_thread_are_apart(saver):
    saver.put(cfg("t"), checkpoint("001", []), {}, {})
    saver.put(cfg("t", ns="child"), checkpoint("002", []), {}, {})
    assert saver.get_tuple(cfg("t")).checkpoint["id"] == "001"
    assert saver.get_tuple(cfg("t", ns="child")).checkpoint["id"] == "002"


def test_delete_thread_removes_its_checkpoints_only(saver, store):
    c1 = saver.put(cfg("t"), checkpoint("001", []), {}, {})
    saver.put(c1, checkpoint("002", []), {}, {})
    saver.put(c1, checkpoint("003", []), {}, {})  # a fork
    saver.put(cfg("u"), checkpoint("004", []), {}, {})
    saver.delete_thread("t")
    assert saver.get_tuple(cfg("t")) is None
    assert [t.checkpoint["id"] for t in saver.list(None)] == ["004"]
    # A new saver on the same store sees the same (the index is rebuilt from the log).
    again = SessiondbSaver(store)
    assert [t.checkpoint["id"] for t in again.list(None)] == ["004"]


def test_a_new_saver_rebuilds_threads_forks_and_writes_from_the_store(saver, store):
    c1 = saver.put(cfg("t"), checkpoint("001", ["a"]), {}, {})
    saver.put(c1, checkpoint("002", ["b"]), {}, {})
    saver.put(c1, checkpoint("003", ["c"]), {}, {})
    saver.put_writes(c1, [("ch", {"k": 1})], "task")
    again = SessiondbSaver(store)
    assert again.get_tuple(cfg("t", "003")).parent_config == c1
    assert again.get_tuple(c1).pending_writes == [("task", "ch", {"k": 1})]
    assert [t.checkpoint["id"] for t in again.list(cfg("t"))] == ["003", "002", "001"]


def test_next_versions_increase(saver):
    v1 = saver.get_next_version(None, None)
    v2 = saver.get_next_version(v1, None)
    assert v1 < v2 and int(v2.split(".")[0]) == 2


@pytest.mark.asyncio
async def test_the_async_twins_give_the_same(saver):
    c1 = await saver.aput(cfg("t"), checkpoint("001", [1]), {}, {})
    await saver.aput_writes(c1, [("a", 1)], "task")
    assert (await saver.aget_tuple(c1)).pending_writes == [("task", "a", 1)]
    assert [t.checkpoint["id"] async for t in saver.alist(cfg("t"))] == ["001"]
    await saver.adelete_thread("t")
    assert await saver.aget_tuple(cfg("t")) is None


# ---- metadata from the config (LangGraph's get_checkpoint_metadata) ---------------


def test_put_keeps_the_configs_metadata_and_configurable_keys_for_list_filters(saver, store):
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "user_id": "u-1",
                               "run_id": "run-7", "__pregel_task": "hidden", "limit": 3,
                               "callbacks": object()},
              "metadata": {"source_app": "web", "user_id": "not-this-one"}}
    saver.put(config, checkpoint("001", []), {"source": "input", "step": -1}, {})
    saver.put(cfg("t"), checkpoint("002", []), {"source": "loop", "step": 0}, {})
    got = saver.get_tuple(cfg("t", "001")).metadata
    assert got == {"source": "input", "step": -1, "source_app": "web", "user_id": "not-this-one",
                   "thread_id": "t", "run_id": "run-7", "limit": 3}
    ids = lambda it: [t.checkpoint["id"] for t in it]  # noqa: E731
    assert ids(saver.list(None, filter={"run_id": "run-7"})) == ["001"]
    assert ids(saver.list(cfg("t"), filter={"source_app": "web"})) == ["001"]
    assert ids(saver.list(None, filter={"run_id": "other"})) == []
    # And a saver reading the store afresh finds the same.
    assert ids(SessiondbSaver(store).list(None, filter={"user_id": "not-this-one"})) == ["001"]


# ---- savers sharing a store -------------------------------------------------------


def test_a_second_saver_sees_the_firsts_newer_checkpoints(store):
    first, second = SessiondbSaver(store), SessiondbSaver(store)
    c1 = first.put(cfg("t"), checkpoint("001", ["a"]), {}, {})
    assert second.get_tuple(cfg("t")).checkpoint["id"] == "001"
    c2 = first.put(c1, checkpoint("002", ["a", "b"]), {}, {})
    first.put_writes(c2, [("ch", 1)], "task")
    latest = second.get_tuple(cfg("t"))
    assert latest.checkpoint["id"] == "002" and latest.pending_writes == [("task", "ch", 1)]
    assert [t.checkpoint["id"] for t in second.list(cfg("t"))] == ["002", "001"]
    first.delete_thread("t")
    assert second.get_tuple(cfg("t")) is None


def _chains_hold(saver, thread_id):
    """Each checkpoint's branch holds its parent as the last checkpoint before
    it (counting only the copies the thread places where they are)."""
    t = saver._thread(thread_id, "")
    for record in t.checkpoints.values():
        placed = []
        for e in saver.store.read_events(record["session"], 1, record["seq"] - 1):
            lg = e.message.metadata.get("langgraph") if e.type == "message" else None
            if lg and lg["type"] == "checkpoint" and lg["id"] in t.checkpoints:
                where = t.checkpoints[lg["id"]]
                if (where["session"], where["seq"]) == (e.session_id, e.seq):
                    placed.append(lg["id"])
        assert (placed[-1] if placed else None) == record["parent_id"], record["id"]


def test_a_saver_that_read_an_older_tip_forks_instead_of_appending_on_it(store):
    first, second = SessiondbSaver(store), SessiondbSaver(store)
    c1 = first.put(cfg("t"), checkpoint("001", ["a"]), {}, {})
    assert second.get_tuple(cfg("t")).checkpoint["id"] == "001"  # second's index: tip 001
    first.put(c1, checkpoint("002", ["a", "b"]), {}, {})
    c3 = second.put(c1, checkpoint("003", ["a", "c"]), {}, {})  # a child of 001, not of 002
    fresh = SessiondbSaver(store)
    assert fresh.get_tuple(c3).parent_config == c1
    assert fresh.get_tuple(cfg("t", "002")).parent_config == c1
    sessions = [s for s in store.sessions() if "langgraph_thread" in s.metadata]
    assert len(sessions) == 2 and sum(1 for s in sessions if s.parent_id) == 1
    _chains_hold(fresh, "t")


def test_savers_racing_to_put_children_of_one_checkpoint_each_get_a_branch(store_location):
    import threading
    location, options = store_location
    root = SessiondbSaver(location, **options)
    c1 = root.put(cfg("t"), checkpoint("001", ["a"]), {}, {})
    savers = [SessiondbSaver(location, **options) for _ in range(6)]
    for s in savers:
        s.get_tuple(cfg("t"))  # each has read 001 as the tip
    gate = threading.Barrier(len(savers))
    errors = []

    def put(i, s):
        try:
            gate.wait()
            s.put(c1, checkpoint(f"01{i}", ["a", i]), {}, {})
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=put, args=(i, s)) for i, s in enumerate(savers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    fresh = SessiondbSaver(location, **options)
    children = [t for t in fresh.list(cfg("t")) if t.checkpoint["id"] != "001"]
    assert sorted(t.checkpoint["id"] for t in children) == [f"01{i}" for i in range(6)]
    assert all(t.parent_config == c1 for t in children)
    _chains_hold(fresh, "t")
    for s in savers + [root, fresh]:
        s.close()


# ---- the optional capabilities: copy_thread, prune, delete_for_runs ---------------


def _thread_with_a_fork(saver, thread="t"):
    c1 = saver.put(cfg(thread), checkpoint("001", ["a"]), {"step": 0}, {})
    c2 = saver.put(c1, checkpoint("002", ["a", "b"]), {"step": 1}, {})
    saver.put_writes(c2, [("ch", "w2")], "task")
    c3 = saver.put(c1, checkpoint("003", ["a", "z"]), {"step": 1}, {})  # a fork
    saver.put_writes(c3, [("ch", "w3")], "task")
    return c1, c2, c3


def test_copy_thread_gives_the_target_every_checkpoint_and_write_by_forks(saver, store):
    _thread_with_a_fork(saver)
    before = store.stats()["messages"]
    saver.copy_thread("t", "t2")
    assert store.stats()["messages"] == before  # forks: no event copied
    ids = lambda it: [t.checkpoint["id"] for t in it]  # noqa: E731
    for reader in (saver, SessiondbSaver(store)):
        assert ids(reader.list(cfg("t2"))) == ["003", "002", "001"] == ids(reader.list(cfg("t")))
        got = reader.get_tuple(cfg("t2", "003"))
        assert got.config == cfg("t2", "003") and got.parent_config == cfg("t2", "001")
        assert got.pending_writes == [("task", "ch", "w3")]
        assert reader.get_tuple(cfg("t2", "002")).pending_writes == [("task", "ch", "w2")]
    # The copy goes its own way.
    saver.put(cfg("t2", "003"), checkpoint("004", []), {}, {})
    assert ids(saver.list(cfg("t"))) == ["003", "002", "001"]
    assert ids(SessiondbSaver(store).list(cfg("t2"))) == ["004", "003", "002", "001"]
    with pytest.raises(ValueError):
        saver.copy_thread("t", "t2")


def test_prune_keep_latest_keeps_each_namespaces_latest_checkpoint_and_its_writes(saver, store):
    _thread_with_a_fork(saver)
    saver.put(cfg("t", ns="sub"), checkpoint("005", []), {}, {})
    saver.put(cfg("u"), checkpoint("009", []), {}, {})
    saver.prune(["t"])
    for reader in (saver, SessiondbSaver(store)):
        every_ns = {"configurable": {"thread_id": "t"}}
        assert [t.checkpoint["id"] for t in reader.list(every_ns)] == ["005", "003"]
        latest = reader.get_tuple(cfg("t"))
        assert latest.checkpoint == checkpoint("003", ["a", "z"])
        assert latest.pending_writes == [("task", "ch", "w3")]
        assert reader.get_tuple(cfg("u")).checkpoint["id"] == "009"
    assert len([s for s in store.sessions() if s.metadata.get("thread_id") == "t"]) == 2
    saver.put(cfg("t", "003"), checkpoint("006", []), {}, {})  # the thread goes on
    assert SessiondbSaver(store).get_tuple(cfg("t")).parent_config == cfg("t", "003")
    saver.prune(["u"], strategy="delete")
    assert saver.get_tuple(cfg("u")) is None
    with pytest.raises(ValueError):
        saver.prune(["t"], strategy="everything")


def test_delete_for_runs_removes_their_checkpoints_and_writes_everywhere(saver, store):
    run = lambda thread, run_id, cid=None: {  # noqa: E731
        "configurable": dict(cfg(thread, cid)["configurable"], run_id=run_id)}
    c1 = saver.put(run("t", "r1"), checkpoint("001", []), {}, {})
    c2 = saver.put(run("t", "r1", "001"), checkpoint("002", []), {}, {})
    saver.put_writes(c2, [("ch", 1)], "task")
    saver.put(run("t", "r2", "002"), checkpoint("003", []), {}, {})
    saver.put(run("u", "r1"), checkpoint("004", []), {}, {})
    saver.put(run("v", "r3"), checkpoint("005", []), {}, {})
    other = SessiondbSaver(store)
    other.list(None)  # an index read before the deletion
    saver.delete_for_runs(["r1"])
    for reader in (saver, other, SessiondbSaver(store)):
        assert [t.checkpoint["id"] for t in reader.list(None)] == ["005", "003"]
        assert reader.get_tuple(c1) is None and reader.get_tuple(c2) is None
        assert reader.get_tuple(cfg("u")) is None


@pytest.mark.asyncio
async def test_the_async_twins_of_the_capabilities(saver):
    _thread_with_a_fork(saver)
    await saver.acopy_thread("t", "t2")
    await saver.aprune(["t2"])
    await saver.adelete_for_runs(["none"])
    assert [t.checkpoint["id"] async for t in saver.alist(cfg("t2"))] == ["003"]
