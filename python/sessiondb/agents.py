"""The OpenAI Agents SDK's Session protocol on sessiondb: a drop-in for
``SQLiteSession``::

    from agents import Runner
    from sessiondb.agents import SessiondbSession

    session = SessiondbSession("user-123", "conversations")   # was SQLiteSession("user-123", "conversations.db")
    result = await Runner.run(agent, "Hello", session=session)

Each Responses API item is one message of the session, stored losslessly
(sessiondb._items): an item read back equals the item written, and images
sent as data URLs are kept once in the blob store instead of as base64 in
every row. ``pop_item`` and ``clear_session`` rewind the session's view
(the engine's rewind event): nothing is deleted or copied, the removed items
stay in the log for audit and for forks. ``usage_hooks()`` records each model
call's token usage on the turn it produced.

The SDK need not be installed: the class follows its protocol (session_id,
session_settings, get_items, add_items, pop_item, clear_session) by shape.

Many session objects on one id (a server making one per request, several
processes) see one session: ``pop_item`` takes out the last item only if
nothing landed since it read it (Store.rewind_if_unchanged), and reads again
otherwise, so no add and no pop is lost or doubled. With no ``store``, a
session keeps its items in a temporary store of its own, removed when it is
closed or collected, as ``SQLiteSession(id)`` keeps them in memory: pass a
directory or URI to keep them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import re
import shutil
import tempfile
import threading
import time
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

from . import AlreadyExists, Busy, FailedPrecondition, NotFound, Store, Usage
from . import _items

_VALID_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")

try:  # the SDK's own settings class when it is installed
    from agents.memory import SessionSettings  # type: ignore
except Exception:  # pragma: no cover - the SDK is optional

    @dataclass
    class SessionSettings:  # type: ignore[no-redef]
        """The SDK's SessionSettings: `limit` is get_items' default (None: all)."""

        limit: Optional[int] = None


# Sessions opened on the same location (and options) in one process share one
# Store, as the SDK's SQLiteSession instances on one file share its lock: a
# server holding a session per user opens the store once, not per user.
_STORES: Dict[Tuple[str, str], List[Any]] = {}  # key -> [Store, sessions using it]
_STORES_LOCK = threading.Lock()


def _shared_store(location: Any, options: Dict[str, Any]) -> Tuple[Tuple[str, str], Store]:
    key = (os.path.abspath(os.fspath(location)) if not str(location).startswith("postgres")
           else str(location), repr(sorted(options.items())))
    with _STORES_LOCK:
        entry = _STORES.get(key)
        if entry is None or entry[0].closed:
            entry = _STORES[key] = [Store(location, **options), 0]
        entry[1] += 1
        return key, entry[0]


def _release_store(key: Tuple[str, str]) -> None:
    with _STORES_LOCK:
        entry = _STORES.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del _STORES[key]
            entry[0].close()


class SessionClosed(FailedPrecondition, RuntimeError):
    """A call on a SessiondbSession after its close(): raised by every call,
    whether or not other sessions still share its store."""


# How many times pop_item reads again while adds and pops of other session
# objects keep landing between its read and its rewind.
_POP_ATTEMPTS = 200


def _remove_private_store(store: Store, folder: str) -> None:
    store.close()
    shutil.rmtree(folder, ignore_errors=True)


def store_session_id(session_id: str) -> str:
    """The store's id for an SDK session id: itself when it is a valid store
    id, else "agents-" and a hash of it (any string is a valid SDK id)."""
    if _VALID_ID.match(session_id):
        return session_id
    return "agents-" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:40]


def _usage_of(usage: Any) -> Usage:
    """A sessiondb.Usage from the SDK's Usage (or a dict, or a sessiondb.Usage)."""
    if isinstance(usage, Usage):
        return usage
    get = usage.get if isinstance(usage, dict) else (lambda k, d=None: getattr(usage, k, d))

    def detail(name: str, key: str) -> int:
        d = get(name)
        if d is None:
            return 0
        value = d.get(key) if isinstance(d, dict) else getattr(d, key, 0)
        return int(value or 0)

    return Usage(input_tokens=int(get("input_tokens", 0) or 0),
                 output_tokens=int(get("output_tokens", 0) or 0),
                 cached_tokens=detail("input_tokens_details", "cached_tokens"),
                 reasoning_tokens=detail("output_tokens_details", "reasoning_tokens"))


class SessiondbSession:
    """A conversation of the Agents SDK kept in a sessiondb store.

    ``store`` is a directory, a ``postgresql://`` URI, or an open
    sessiondb.Store to share (then closing the session leaves it open).
    Without one, the session's items live in a temporary store of its own,
    deleted when the session is closed or collected (SQLiteSession's
    in-memory default).
    ``session_settings`` (or a dict like ``{"limit": 20}``) gives get_items'
    default limit, as in the SDK.
    """

    session_settings: Optional[SessionSettings] = None

    def __init__(self, session_id: str, store: Union[str, Any, Store, None] = None,
                 *, session_settings: Union[SessionSettings, Dict[str, Any], None] = None,
                 title: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
                 **store_options: Any) -> None:
        self.session_id = session_id
        if isinstance(session_settings, dict):
            session_settings = SessionSettings(**session_settings)
        self.session_settings = session_settings or SessionSettings()
        self._shared_key: Optional[Tuple[str, str]] = None
        self._private: Optional[weakref.finalize] = None
        if store is None:
            store_options.setdefault("max_images_per_message", 64)
            folder = tempfile.mkdtemp(prefix="sessiondb-session-")
            store = Store(os.path.join(folder, "store"), **store_options)
            self._private = weakref.finalize(self, _remove_private_store, store, folder)
        elif not isinstance(store, Store):
            store_options.setdefault("max_images_per_message", 64)
            self._shared_key, store = _shared_store(store, store_options)
        self.store: Store = store
        self._store_id = store_session_id(session_id)
        self._title = title
        self._metadata = dict(metadata or {})
        if self._store_id != session_id:
            self._metadata.setdefault("agents_session_id", session_id)
        self._lock = threading.Lock()  # the pending usage
        self._pending_usage: Optional[Usage] = None
        self._pending_model = ""
        self._closed = False

    # ---- the Session protocol ------------------------------------------------

    async def get_items(self, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """The session's items in chronological order; with a limit, the
        latest `limit` of them (0: none; None: session_settings.limit, else all)."""
        self._check_open()
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        return await asyncio.to_thread(self._get_items, limit)

    async def add_items(self, items: List[Dict[str, Any]]) -> None:
        """Appends the items, in order, in one transaction.

        Cancelled while the append is under way, it waits for the append to
        end and takes the items back out (a rewind) before the cancellation
        reaches the caller, so that what the caller was told failed does not
        land later. If other items landed after them meanwhile, they cannot
        be taken out alone: they stay, and the CancelledError says so in a
        note (its __notes__)."""
        self._check_open()
        if not items:
            return
        work = asyncio.ensure_future(asyncio.to_thread(self._add_items, list(items)))
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError as cancelled:
            await self._take_back(work, cancelled)
            raise

    async def pop_item(self) -> Optional[Dict[str, Any]]:
        """Removes the most recent item and returns it; None if there is none."""
        self._check_open()
        return await asyncio.to_thread(self._pop_item)

    async def clear_session(self) -> None:
        """Removes every item (the session's view is rewound to nothing)."""
        self._check_open()
        await asyncio.to_thread(self._clear)

    # ---- beyond the protocol -------------------------------------------------

    def record_usage(self, usage: Any, *, model: str = "") -> None:
        """Records a model call's usage (the SDK's Usage, a dict, or a
        sessiondb.Usage): it is kept on the next assistant item added, so the
        store's usage report counts it per model. Calls before that add up."""
        u = _usage_of(usage)
        with self._lock:
            if self._pending_usage is not None:
                p = self._pending_usage
                u = Usage(p.input_tokens + u.input_tokens, p.output_tokens + u.output_tokens,
                          p.cached_tokens + u.cached_tokens, p.reasoning_tokens + u.reasoning_tokens)
            self._pending_usage = u
            self._pending_model = model or self._pending_model

    def usage_hooks(self) -> "UsageHooks":
        """RunHooks for Runner.run(..., hooks=session.usage_hooks()): each
        model response's usage is recorded on the turn it produced."""
        return UsageHooks(self)

    async def usage(self) -> Dict[str, Any]:
        """The session's token totals (Store.usage): turns, total, by_model."""
        self._check_open()
        return await asyncio.to_thread(self._usage)

    def close(self) -> None:
        """Closes the session: every later call raises SessionClosed. The
        store it opened closes with the last session of the process on that
        store; its own temporary store (no ``store`` given) is deleted."""
        if not self._closed and self._shared_key is not None:
            _release_store(self._shared_key)
        if self._private is not None:
            self._private()
        self._closed = True

    # ---- the work, on a worker thread -----------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise SessionClosed(f"SessiondbSession {self.session_id!r} is closed")

    async def _take_back(self, work: "asyncio.Future[Any]", cancelled: BaseException) -> None:
        """After add_items was cancelled: waits for its append (on its thread)
        to end, then rewinds it away if nothing landed after it."""
        while not work.done():
            try:
                await asyncio.wait({work})
            except asyncio.CancelledError:
                continue  # cancelled again: the append still has to be settled
        if work.cancelled() or work.exception() is not None:
            return  # nothing was added
        first, last = work.result()
        try:
            undone = await asyncio.to_thread(
                self.store.rewind_if_unchanged, self._store_id, first - 1, last)
        except Exception as e:  # noqa: BLE001  (said in the note below)
            undone, why = None, f"taking them back out failed: {e}"
        else:
            why = "other items were added after them, so they were kept"
        if undone is None:
            note = (f"sessiondb: the items were added (seqs {first}..{last}) before the "
                    f"cancellation took effect; {why}")
            if hasattr(cancelled, "add_note"):
                cancelled.add_note(note)
            else:  # Python < 3.11
                warnings.warn(note, RuntimeWarning, stacklevel=3)

    def _ensure_session(self) -> None:
        try:
            self.store.create_session(self._store_id, title=self._title, metadata=self._metadata or None)
        except AlreadyExists:
            pass

    def _get_items(self, limit: Optional[int]) -> List[Dict[str, Any]]:
        if limit is not None and limit == 0:
            return []
        try:
            rows = self.store._item_rows(self._store_id, -1 if limit is None or limit < 0 else limit)
        except NotFound:
            return []
        return [_items.row_to_item(row, self.store.read_blob) for row in rows]

    def _messages_of(self, items: List[Dict[str, Any]], inline: bool) -> list:
        with self._lock:
            usage, model = self._pending_usage, self._pending_model
            self._pending_usage, self._pending_model = None, ""
        last_assistant = max((i for i, item in enumerate(items)
                              if _items._role_of(item) == "assistant"), default=-1)
        if usage is not None and last_assistant < 0:
            with self._lock:  # no turn of the model here: keep it for the next add
                self._pending_usage, self._pending_model = usage, model
            usage = None
        return [_items.to_message(item, max_image_bytes=5 * 1024 * 1024, max_images=64,
                                  keep_images_inline=inline,
                                  usage=usage if i == last_assistant else None,
                                  model=model if i == last_assistant else "")
                for i, item in enumerate(items)]

    def _add_items(self, items: List[Dict[str, Any]]) -> Tuple[int, int]:
        """Appends the items; returns the seqs of the first and the last."""
        messages = self._messages_of(items, inline=False)
        try:
            return self._append(messages)
        except ValueError:
            # An image the store refused (its size or pixels): keep the items
            # whole, the images inline, rather than lose the turn.
            if not any(_items.IMAGES_KEY in m.metadata for m in messages):
                raise
            return self._append([_items.to_message(item, max_image_bytes=0, max_images=0,
                                                    keep_images_inline=True) for item in items])

    def _append(self, messages: list) -> Tuple[int, int]:
        try:
            results = self.store.append_batch(self._store_id, messages)
        except NotFound:
            self._ensure_session()
            results = self.store.append_batch(self._store_id, messages)
        return results[0].seq, results[-1].seq

    def _pop_item(self) -> Optional[Dict[str, Any]]:
        # Read the log's last seq, then the view's last message, and rewind
        # to just before that message only if the log is still at that seq:
        # an add or pop of another object (or process) landing in between
        # makes the rewind write nothing, and the pop reads again.
        for attempt in range(_POP_ATTEMPTS):
            try:
                last_seq = self.store.get_session(self._store_id).last_seq
                last = self.store.read_last(self._store_id, 1)
            except NotFound:
                return None
            if not last:
                return None
            message = last[-1]
            if message.seq <= last_seq:
                # The rewind keeps the view up to the seq before the message:
                # what a rewind had hidden stays hidden, the rest stays.
                if self.store.rewind_if_unchanged(self._store_id, message.seq - 1, last_seq):
                    return _items.to_item(message, self.store.read_blob)
            time.sleep(random.uniform(0, 0.001 * min(attempt, 20)))
        raise Busy(f"pop_item on session {self.session_id!r}: other writers kept changing it "
                   f"({_POP_ATTEMPTS} attempts); try again")

    def _clear(self) -> None:
        try:
            self.store.rewind(self._store_id, 0)
        except NotFound:
            pass

    def _usage(self) -> Dict[str, Any]:
        try:
            return self.store.usage(self._store_id)
        except NotFound:
            return {"turns": 0, "total": Usage(), "by_model": []}


class UsageHooks:
    """The SDK's RunHooks, by shape: on_llm_end records the response's usage
    on the session (SessiondbSession.record_usage); the other hooks do nothing."""

    def __init__(self, session: SessiondbSession) -> None:
        self.session = session

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        usage = getattr(response, "usage", None)
        if usage is not None:
            model = getattr(agent, "model", "")
            self.session.record_usage(usage, model=model if isinstance(model, str) else "")

    async def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def on_agent_start(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def on_agent_end(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def on_handoff(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def on_tool_end(self, *args: Any, **kwargs: Any) -> None:
        pass
