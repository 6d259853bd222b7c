"""The asyncio face: every Store call awaited on a worker thread."""

import asyncio

import pytest

import sessiondb
from sessiondb import aio


@pytest.mark.asyncio
async def test_calls_are_awaited_and_give_the_stores_results(tmp_path):
    async with await aio.open(tmp_path / "store") as store:
        s = await store.create_session("a")
        await store.append(s.id, "user", "hello")
        assert [m.text for m in await store.read(s.id)] == ["hello"]
        assert [x.id async for x in store.sessions()] == ["a"]
        with pytest.raises(sessiondb.NotFound):
            await store.get_session("missing")


@pytest.mark.asyncio
async def test_the_event_loop_runs_while_calls_are_under_way(tmp_path):
    async with await aio.open(tmp_path / "store", durability="process-crash-safe") as store:
        sid = (await store.create_session()).id
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await asyncio.gather(*(store.append(sid, "user", f"m{i}") for i in range(50)))
        task.cancel()
        assert ticks > 0
        assert sorted(m.text for m in await store.read(sid)) == sorted(f"m{i}" for i in range(50))
