"""SessiondbSession under concurrency, as a server uses it: many session
objects on one id (one per request), in threads and in processes, adding
and popping at once. Every item added is either popped exactly once or
still in the session; a cancelled add does not land after the caller was
told it was cancelled; a session without a store keeps nothing behind; a
closed session refuses every call whatever else shares its store."""

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

import sessiondb
from sessiondb.agents import SessionClosed, SessiondbSession

pytestmark = pytest.mark.asyncio


def msg(role, content):
    return {"role": role, "content": content}


def _accounted(added, popped, left):
    """Every added item popped once or left once; nothing else."""
    assert sorted(popped + left) == sorted(added), (
        f"lost: {sorted(set(added) - set(popped) - set(left))}, "
        f"popped twice or invented: {len(popped) + len(left) - len(added)}")


async def test_objects_on_one_id_adding_and_popping_at_once_lose_nothing(store):
    adders = [SessiondbSession("shared", store) for _ in range(4)]
    poppers = [SessiondbSession("shared", store) for _ in range(2)]
    added = [f"a{i}-{j}" for i in range(len(adders)) for j in range(50)]

    async def add(i, session):
        for j in range(50):
            await session.add_items([msg("user", f"a{i}-{j}")])

    async def pop(session, out):
        while len(out) < 20:
            item = await session.pop_item()
            if item is not None:
                out.append(item["content"])
            else:
                await asyncio.sleep(0.001)

    popped = [[], []]
    await asyncio.gather(*(add(i, s) for i, s in enumerate(adders)),
                         *(pop(s, out) for s, out in zip(poppers, popped)))
    left = [i["content"] for i in await adders[0].get_items()]
    assert len(popped[0]) + len(popped[1]) == 40
    _accounted(added, popped[0] + popped[1], left)
    # The store's count is the view's.
    assert store.get_session("shared").message_count == len(left)


async def test_two_objects_popping_the_same_items_pop_each_once(store):
    first = SessiondbSession("popped", store)
    second = SessiondbSession("popped", store)
    await first.add_items([msg("user", f"m{i}") for i in range(40)])
    results = await asyncio.gather(*(s.pop_item() for s in [first, second] * 25))
    popped = [r["content"] for r in results if r is not None]
    assert len(popped) == 40 and sorted(popped) == sorted(f"m{i}" for i in range(40))
    assert await first.get_items() == [] and await second.pop_item() is None


_WORKER = r"""
import asyncio, json, sys
from sessiondb.agents import SessiondbSession
location, options, name = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]

async def main():
    s = SessiondbSession("across", location, busy_timeout_ms=30000, **options)
    popped = []
    for j in range(30):
        await s.add_items([{"role": "user", "content": f"{name}-{j}"}])
        if j % 3 == 2:
            item = await s.pop_item()
            if item is not None:
                popped.append(item["content"])
    s.close()
    print(json.dumps(popped))

asyncio.run(main())
"""


async def test_processes_adding_and_popping_on_one_id_lose_nothing(store_location):
    location, options = store_location
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, location, json.dumps(options), f"p{n}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ))
             for n in range(3)]
    popped = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        popped += json.loads(out)
    assert len(popped) == 30  # each pop found an item: there were always some
    reader = SessiondbSession("across", location, **options)
    left = [i["content"] for i in await reader.get_items()]
    reader.close()
    _accounted([f"p{n}-{j}" for n in range(3) for j in range(30)], popped, left)


async def test_a_cancelled_add_does_not_land_after_the_caller_was_told(store):
    timing = SessiondbSession("timing", store)
    big = [msg("user", f"item {i} " + "x" * 200) for i in range(3000)]
    started = time.monotonic()
    await timing.add_items(big)
    took = time.monotonic() - started

    session = SessiondbSession("cancelled", store)
    await session.add_items([msg("user", "before")])
    task = asyncio.ensure_future(session.add_items(big))
    await asyncio.sleep(min(0.01, took / 10))
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await task
    told = [i["content"] for i in await session.get_items()]
    await asyncio.sleep(took * 2 + 0.2)  # the worker thread, had it gone on, is done by now
    later = [i["content"] for i in await session.get_items()]
    notes = getattr(caught.value, "__notes__", [])
    if notes:  # the add could not be taken back: the error says it landed
        assert any("were added" in n for n in notes)
        assert later == told
    else:
        assert told == later == ["before"]
        assert store.get_session("cancelled").message_count == 1


async def test_a_session_without_a_store_keeps_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one, other = SessiondbSession("id"), SessiondbSession("id")
    await one.add_items([msg("user", "hi")])
    assert await one.get_items() == [msg("user", "hi")]
    assert await other.get_items() == []  # each its own, as SQLiteSession(":memory:")
    folder = os.path.dirname(one.store.location)
    assert os.path.isdir(folder)
    one.close()
    other.close()
    assert not os.path.exists(folder)
    assert os.listdir(tmp_path) == []  # no ./sessiondb-sessions


async def test_a_closed_session_refuses_every_call_whatever_shares_its_store(tmp_path, store):
    location = str(tmp_path / "shared")
    closed, sharing = SessiondbSession("c", location), SessiondbSession("d", location)
    given = SessiondbSession("e", store)
    for s in (closed, given):
        await s.add_items([msg("user", "kept")])
        s.close()
        for call in (s.get_items(), s.add_items([]), s.add_items([msg("user", "x")]),
                     s.pop_item(), s.clear_session(), s.usage()):
            with pytest.raises(SessionClosed) as caught:
                await call
            assert isinstance(caught.value, sessiondb.FailedPrecondition)
            assert isinstance(caught.value, RuntimeError)  # as before, for callers catching it
    # What shares the store goes on, and the closed sessions' items stay.
    await sharing.add_items([msg("user", "still served")])
    assert await sharing.get_items() == [msg("user", "still served")]
    assert [m.text for m in store.read("e")] == ["kept"]
    again = SessiondbSession("c", location)
    assert await again.get_items() == [msg("user", "kept")]
    sharing.close()
    again.close()
