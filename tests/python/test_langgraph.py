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
    assert got.metadata == {"source": "input", "step": -1}
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
