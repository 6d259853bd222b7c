"""The asyncio face of sessiondb: every Store call, awaited.

Each call runs the blocking Store method on a worker thread
(``asyncio.to_thread``); the engine releases the GIL while it works, so the
event loop and other calls go on meanwhile::

    from sessiondb import aio
    async with await aio.open("/tmp/chats") as store:
        s = await store.create_session()
        await store.append(s.id, "user", "hello")
        async for session in store.sessions():
            ...
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, AsyncIterator, Callable

from . import Session, Store


class AsyncStore:
    """A Store whose methods are coroutines (same names, same arguments)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.store, name)
        if not callable(attr):
            return attr
        return _in_thread(attr)

    async def sessions(self, **options: Any) -> AsyncIterator[Session]:
        """Every session, most recently updated first, a page at a time."""
        page_size = options.pop("page_size", 100)
        cursor = ""
        while True:
            page, cursor = await asyncio.to_thread(self.store.list_page, page_size, cursor, **options)
            for session in page:
                yield session
            if not cursor:
                return

    async def close(self) -> None:
        await asyncio.to_thread(self.store.close)

    async def __aenter__(self) -> "AsyncStore":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def _in_thread(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(method, *args, **kwargs)

    return call


async def open(location: Any, **options: Any) -> AsyncStore:  # noqa: A001
    """Opens the store at ``location`` (see sessiondb.open) off the event loop."""
    return AsyncStore(await asyncio.to_thread(Store, location, **options))
