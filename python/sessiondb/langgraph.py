"""A LangGraph checkpoint saver on sessiondb, with time travel as a fork.

    from sessiondb.langgraph import SessiondbSaver
    checkpointer = SessiondbSaver("graphs")        # was SqliteSaver(sqlite3.connect("graphs.db"))
    graph = builder.compile(checkpointer=checkpointer)

A thread (thread_id and checkpoint_ns) is a sessiondb session, and each
checkpoint one event of it, its parent the event before. Resuming from an
older checkpoint (time travel, update_state on a past state) branches: the
new checkpoint goes to a fork of the session at its parent's seq, made in
constant time (nothing is copied; the fork reads the parent's events).
Pending writes (put_writes) are events of the session too, keyed by
checkpoint, task and index as LangGraph's SQLite saver keys them.

The saver follows BaseCheckpointSaver's interface (put, put_writes,
get_tuple, list with filter/before/limit, delete_thread, their async
twins, get_next_version) and its optional capabilities (copy_thread, prune,
delete_for_runs); when langgraph is installed it subclasses it and uses its
serializer (JsonPlusSerializer), else a JSON serializer of its own. As
LangGraph's savers do, put keeps config["metadata"] and the configurable
keys (user_id, run_id, ...) in the checkpoint's metadata, where
list(filter=...) finds them.

Each saver keeps an index of the threads it has read and brings it up to
date from the store before each call, so savers in other threads, processes
or machines on the same store see each other's checkpoints; a put whose
parent is no longer its branch's last checkpoint goes to a fork.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import threading
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from . import AlreadyExists, Message, NotFound, Store, text

try:  # the real interface when LangGraph is installed
    from langgraph.checkpoint.base import BaseCheckpointSaver as _Base  # type: ignore
    from langgraph.checkpoint.base import get_checkpoint_metadata as _lg_metadata  # type: ignore
    from langgraph.checkpoint.base import CheckpointTuple  # type: ignore
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as _DefaultSerde  # type: ignore
except Exception:  # pragma: no cover - exercised where LangGraph is absent
    _Base = object  # type: ignore
    _DefaultSerde = None
    _lg_metadata = None

    class CheckpointTuple(NamedTuple):  # type: ignore[no-redef]
        """LangGraph's CheckpointTuple, field for field."""

        config: Dict[str, Any]
        checkpoint: Dict[str, Any]
        metadata: Dict[str, Any]
        parent_config: Optional[Dict[str, Any]] = None
        pending_writes: Optional[List[Tuple[str, str, Any]]] = None


class JsonSerde:
    """dumps_typed/loads_typed over JSON: LangGraph's SerializerProtocol for
    JSON-ready state (LangGraph's own JsonPlusSerializer is used when present)."""

    def dumps_typed(self, obj: Any) -> Tuple[str, bytes]:
        return "json", json.dumps(obj, ensure_ascii=False).encode("utf-8")

    def loads_typed(self, data: Tuple[str, bytes]) -> Any:
        kind, raw = data
        if kind != "json":
            raise ValueError(f"JsonSerde cannot read '{kind}' data")
        return json.loads(raw)


# LangGraph's special write channels and their fixed indexes (WRITES_IDX_MAP):
# a later write of one of these replaces the earlier, others are kept first.
WRITES_IDX_MAP = {"__error__": -1, "__scheduled__": -2, "__interrupt__": -3, "__resume__": -4}
_KIND = "langgraph"


# Keys of the config that are not metadata (LangGraph's EXCLUDED_METADATA_KEYS).
_EXCLUDED_METADATA_KEYS = {"checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
                           "langgraph_node", "langgraph_triggers", "langgraph_path",
                           "langgraph_checkpoint_ns"}


def checkpoint_metadata(config: Dict[str, Any], metadata: Dict[str, Any]) -> Dict[str, Any]:
    """The metadata a checkpoint is saved with, as LangGraph's savers make it
    (get_checkpoint_metadata): `metadata`, then the str, int, float and bool
    values of config["metadata"] and config["configurable"] it lacks (thread_id,
    user_id, run_id...), but not the checkpoint's own keys nor "__" ones."""
    if _lg_metadata is not None:
        return dict(_lg_metadata(config, metadata))
    out = {k: v.replace("\x00", "") if isinstance(v, str) else v for k, v in metadata.items()}
    for source in (config.get("metadata"), config.get("configurable")):
        for key, value in (source or {}).items():
            if key in out or key in _EXCLUDED_METADATA_KEYS or key.startswith("__"):
                continue
            if isinstance(value, str):
                out[key] = value.replace("\x00", "")
            elif isinstance(value, (bool, int, float)):
                out[key] = value
    return out


class _Thread:
    """What the saver knows of one thread: its branch sessions, where each
    checkpoint is, the writes of each checkpoint, and how far each branch's
    log has been read (the rest is read before the next call)."""

    def __init__(self, thread_id: str, ns: str) -> None:
        self.thread_id, self.ns = thread_id, ns
        self.checkpoints: Dict[str, Dict[str, Any]] = {}  # id -> record (with session, seq)
        self.writes: Dict[str, Dict[Tuple[str, int], Tuple[str, str, Any, str]]] = {}
        self.tip: Dict[str, int] = {}  # branch session -> seq of its last checkpoint
        self.branches: List[str] = []
        self.read_to: Dict[str, int] = {}  # branch session -> last seq read
        self.deleted: set = set()  # checkpoint ids delete_for_runs removed


def _config(thread_id: str, ns: str, checkpoint_id: str) -> Dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id}}


def _pack(serde: Any, value: Any) -> List[str]:
    kind, raw = serde.dumps_typed(value)
    return [kind, base64.b64encode(raw).decode("ascii")]


def _unpack(serde: Any, packed: List[str]) -> Any:
    return serde.loads_typed((packed[0], base64.b64decode(packed[1])))


class SessiondbSaver(_Base):  # type: ignore[misc,valid-type]
    """LangGraph checkpoints in a sessiondb store (a directory, a
    postgresql:// URI, or an open sessiondb.Store)."""

    def __init__(self, store: Any = "sessiondb-graphs", *, serde: Any = None, **store_options: Any) -> None:
        if _Base is not object:
            super().__init__(serde=serde)
        self.serde = serde or (_DefaultSerde() if _DefaultSerde else JsonSerde())
        self._owns_store = not isinstance(store, Store)
        self.store: Store = Store(store, **store_options) if self._owns_store else store
        self._threads: Dict[Tuple[str, str], _Thread] = {}
        self._lock = threading.RLock()

    # ---- the index of a thread -------------------------------------------------

    @staticmethod
    def _root_id(thread_id: str, ns: str) -> str:
        digest = hashlib.sha256(f"{thread_id}\x00{ns}".encode("utf-8")).hexdigest()[:40]
        return f"lg-{digest}"

    def _thread(self, thread_id: str, ns: str) -> _Thread:
        """The thread's index, brought up to date with the store: branches
        made and events written since the last call, by any saver."""
        key = (thread_id, ns)
        t = self._threads.get(key)
        sessions = sorted(self.store.sessions(archived="all", metadata_key="langgraph_thread",
                                              metadata_value=self._root_id(thread_id, ns)),
                          key=lambda s: (s.created_ms, s.id))
        if t is not None and not set(t.branches) <= {s.id for s in sessions}:
            t = None  # a branch was deleted (delete_thread, prune): read it all again
        if t is None:
            t = self._threads[key] = _Thread(thread_id, ns)
        for session in sessions:
            if session.id not in t.branches:
                t.branches.append(session.id)
        own = set(t.branches)
        for session in sessions:
            done = t.read_to.get(session.id, 0)
            if session.last_seq <= done:
                continue
            for event in self.store.read_events(session.id, done + 1):
                # A branch's own events, and those it inherits from another
                # thread (copy_thread forks); a fork inside the thread reads
                # its parent's from the parent.
                if event.type == "message" and (event.session_id == session.id
                                                or event.session_id not in own):
                    self._learn(t, session.id, event.seq, event.message.metadata.get(_KIND))
            t.read_to[session.id] = max(done, session.last_seq)
        return t

    @staticmethod
    def _learn(t: _Thread, session_id: str, seq: int, record: Optional[Dict[str, Any]]) -> None:
        if not record:
            return
        if record["type"] == "checkpoint":
            t.tip[session_id] = max(t.tip.get(session_id, 0), seq)
            known = t.checkpoints.get(record["id"])
            if record["id"] in t.deleted or (known and known.get("relocated")
                                             and not record.get("relocated")):
                return  # deleted, or a copy a racing put left on a stale branch
            t.checkpoints[record["id"]] = dict(record, session=session_id, seq=seq)
        elif record["type"] == "deleted":
            for cid in record["ids"]:
                t.deleted.add(cid)
                t.checkpoints.pop(cid, None)
                t.writes.pop(cid, None)
        elif record["type"] == "writes":
            slot = t.writes.setdefault(record["checkpoint_id"], {})
            for idx, (channel, packed) in enumerate(record["writes"]):
                key = (record["task_id"], WRITES_IDX_MAP.get(channel, idx))
                if key in slot and channel not in WRITES_IDX_MAP:
                    continue
                slot[key] = (record["task_id"], channel, packed, record.get("task_path", ""))

    def _append(self, t: _Thread, session_id: str, record: Dict[str, Any], summary: str) -> int:
        message = Message("assistant", [text(summary)], metadata={_KIND: record})
        seq = self.store.append_message(session_id, message).seq
        self._learn(t, session_id, seq, record)
        if t.read_to.get(session_id, 0) == seq - 1:
            t.read_to[session_id] = seq  # nothing landed between: no need to read it back
        return seq

    def _landed_between(self, session_id: str, after_seq: int, before_seq: int) -> bool:
        """True if a checkpoint of another put landed in the branch between two seqs."""
        if before_seq <= after_seq + 1:
            return False
        for event in self.store.read_events(session_id, after_seq + 1, before_seq - after_seq - 1):
            record = event.message.metadata.get(_KIND) if event.type == "message" else None
            if event.session_id == session_id and record and record.get("type") == "checkpoint":
                return True
        return False

    def _branch_for(self, t: _Thread, thread_id: str, ns: str, parent_id: Optional[str]) -> str:
        """The session the child of `parent_id` goes to: the parent's own
        session while the parent is its last checkpoint, else a fork of it
        at the parent (constant time)."""
        root = self._root_id(thread_id, ns)
        metadata = self._branch_metadata(thread_id, ns)
        parent = t.checkpoints.get(parent_id) if parent_id else None
        if parent is None:
            if not t.branches:
                try:
                    self.store.create_session(root, title=f"LangGraph thread {thread_id}",
                                              metadata=metadata)
                except AlreadyExists:  # another saver made it since our read
                    pass
                t.branches.append(root)
                return root
            if parent_id is None and len(t.checkpoints) == 0:
                return t.branches[0]
            # A new root of the thread: a branch of its own.
            sid = self.store.create_session(title=f"LangGraph thread {thread_id}", metadata=metadata).id
            t.branches.append(sid)
            return sid
        if t.tip.get(parent["session"]) == parent["seq"]:
            return parent["session"]
        fork = self.store.fork(parent["session"], parent["seq"], metadata=metadata)
        t.branches.append(fork.id)
        t.tip[fork.id] = parent["seq"]
        t.read_to[fork.id] = parent["seq"]
        return fork.id

    def _branch_metadata(self, thread_id: str, ns: str) -> Dict[str, Any]:
        return {"langgraph_thread": self._root_id(thread_id, ns), "thread_id": thread_id,
                "checkpoint_ns": ns}

    # ---- BaseCheckpointSaver ---------------------------------------------------

    def put(self, config: Dict[str, Any], checkpoint: Dict[str, Any], metadata: Dict[str, Any],
            new_versions: Dict[str, Any]) -> Dict[str, Any]:
        """Saves a checkpoint as the child of config's checkpoint_id (if any)."""
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        parent_id = conf.get("checkpoint_id")
        with self._lock:
            t = self._thread(thread_id, ns)
            session_id = self._branch_for(t, thread_id, ns, parent_id)
            record = {"type": "checkpoint", "id": checkpoint["id"], "parent_id": parent_id,
                      "thread_id": thread_id, "ns": ns, "checkpoint": _pack(self.serde, checkpoint),
                      "metadata": json.loads(json.dumps(checkpoint_metadata(config, metadata),
                                                        default=str))}
            parent = t.checkpoints.get(parent_id) if parent_id else None
            seq = self._append(t, session_id, record, f"checkpoint {checkpoint['id']}")
            if parent is not None and parent["session"] == session_id and \
                    self._landed_between(session_id, parent["seq"], seq):
                # Another saver put a child of the same parent on this branch
                # between our read and our append: ours goes to a fork at the
                # parent, and that copy is the one every saver reads.
                fork = self.store.fork(session_id, parent["seq"], metadata=self._branch_metadata(
                    thread_id, ns))
                t.branches.append(fork.id)
                t.read_to[fork.id] = parent["seq"]
                self._append(t, fork.id, dict(record, relocated=True),
                             f"checkpoint {checkpoint['id']}")
        return _config(thread_id, ns, checkpoint["id"])

    def put_writes(self, config: Dict[str, Any], writes: Sequence[Tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        """Saves the pending writes of a task for config's checkpoint."""
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        checkpoint_id = conf["checkpoint_id"]
        with self._lock:
            t = self._thread(thread_id, ns)
            owner = t.checkpoints.get(checkpoint_id)
            session_id = owner["session"] if owner else self._branch_for(t, thread_id, ns, None)
            record = {"type": "writes", "checkpoint_id": checkpoint_id, "task_id": task_id,
                      "task_path": task_path,
                      "writes": [[channel, _pack(self.serde, value)] for channel, value in writes]}
            self._append(t, session_id, record, f"writes of {task_id}")

    def _tuple(self, t: _Thread, record: Dict[str, Any]) -> CheckpointTuple:
        slot = t.writes.get(record["id"], {})
        pending = [(task_id, channel, _unpack(self.serde, packed))
                   for (_, _), (task_id, channel, packed, _) in sorted(slot.items())]
        # The thread's own ids, not the record's: a copied thread reads the
        # records of the thread it was copied from.
        parent = _config(t.thread_id, t.ns, record["parent_id"]) if record.get("parent_id") else None
        return CheckpointTuple(_config(t.thread_id, t.ns, record["id"]),
                               _unpack(self.serde, record["checkpoint"]), record["metadata"],
                               parent, pending)

    def get_tuple(self, config: Dict[str, Any]) -> Optional[CheckpointTuple]:
        """The checkpoint config names (its checkpoint_id), else the thread's latest; None if none."""
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        with self._lock:
            t = self._thread(thread_id, ns)
            wanted = conf.get("checkpoint_id")
            if wanted:
                record = t.checkpoints.get(wanted)
            else:
                record = t.checkpoints[max(t.checkpoints)] if t.checkpoints else None
            return self._tuple(t, record) if record else None

    def get(self, config: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        found = self.get_tuple(config)
        return found.checkpoint if found else None

    def list(self, config: Optional[Dict[str, Any]], *, filter: Optional[Dict[str, Any]] = None,
             before: Optional[Dict[str, Any]] = None, limit: Optional[int] = None) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first (by checkpoint id): of config's thread (and
        namespace, and checkpoint id when given), or of every thread for None;
        only those whose metadata holds `filter`, older than `before`."""
        conf = (config or {}).get("configurable", {})
        with self._lock:
            keys: List[Tuple[str, str]]
            if "thread_id" in conf:
                thread_id = str(conf["thread_id"])
                if "checkpoint_ns" in conf:
                    keys = [(thread_id, conf["checkpoint_ns"])]
                else:
                    keys = sorted({(thread_id, s.metadata.get("checkpoint_ns", ""))
                                   for s in self._all_branch_sessions()
                                   if s.metadata.get("thread_id") == thread_id})
            else:
                keys = sorted({(s.metadata.get("thread_id", ""), s.metadata.get("checkpoint_ns", ""))
                               for s in self._all_branch_sessions()})
            found = []
            before_id = (before or {}).get("configurable", {}).get("checkpoint_id")
            for thread_id, ns in keys:
                t = self._thread(thread_id, ns)
                for record in t.checkpoints.values():
                    if conf.get("checkpoint_id") and record["id"] != conf["checkpoint_id"]:
                        continue
                    if before_id and not record["id"] < before_id:
                        continue
                    if filter and any(record["metadata"].get(k) != v for k, v in filter.items()):
                        continue
                    found.append((t, record))
            found.sort(key=lambda tr: tr[1]["id"], reverse=True)
            if limit is not None:
                found = found[:limit]
            tuples = [self._tuple(t, record) for t, record in found]
        yield from tuples

    def _all_branch_sessions(self) -> List[Any]:
        return [s for s in self.store.sessions(archived="all") if "langgraph_thread" in s.metadata]

    def delete_thread(self, thread_id: str) -> None:
        """Deletes every checkpoint and write of the thread (all namespaces):
        its sessions go to the store's trash (Store.trash_session), where no
        saver sees them, until Store.restore_from_trash brings them back or
        the trash is emptied (Store.empty_trash, the retention policy)."""
        self._remove_thread(str(thread_id), trash=True)

    def _remove_thread(self, thread_id: str, *, trash: bool) -> None:
        """Trashes (a user's delete) or erases for good (the saver's own
        housekeeping: prune) every branch session of the thread."""
        remove = self.store.trash_session if trash else self.store.delete_session
        with self._lock:
            sessions = [s for s in self._all_branch_sessions() if s.metadata.get("thread_id") == thread_id]
            for session in sorted(sessions, key=lambda s: s.created_ms, reverse=True):
                try:
                    remove(session.id)
                except NotFound:
                    pass
            for key in [k for k in self._threads if k[0] == thread_id]:
                del self._threads[key]

    def _namespaces(self, thread_id: str) -> List[str]:
        return sorted({s.metadata.get("checkpoint_ns", "") for s in self._all_branch_sessions()
                       if s.metadata.get("thread_id") == thread_id})

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint and write of a thread (all namespaces) to
        another thread id, which must have none: a fork of each branch, made in
        constant time (nothing is copied). The copies keep their checkpoint ids."""
        source, target = str(source_thread_id), str(target_thread_id)
        with self._lock:
            if self._namespaces(target):
                raise ValueError(f"thread {target!r} already has checkpoints; copy_thread "
                                 "copies into a new thread")
            for ns in self._namespaces(source):
                t = self._thread(source, ns)
                for branch in t.branches:
                    last_seq = self.store.get_session(branch).last_seq
                    self.store.fork(branch, last_seq, title=f"LangGraph thread {target}",
                                    metadata=self._branch_metadata(target, ns))
                self._threads.pop((target, ns), None)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prunes the threads: "keep_latest" keeps each namespace's latest
        checkpoint and its writes (in a new branch, the old ones deleted),
        "delete" erases the thread for good (with no trash, unlike
        delete_thread: pruning is housekeeping). Deleted blobs are reclaimed
        by Store.collect_garbage."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}; expected keep_latest or delete")
        for thread_id in thread_ids:
            thread_id = str(thread_id)
            if strategy == "delete":
                self._remove_thread(thread_id, trash=False)
                continue
            with self._lock:
                for ns in self._namespaces(thread_id):
                    t = self._thread(thread_id, ns)
                    if not t.checkpoints:
                        continue
                    latest = t.checkpoints[max(t.checkpoints)]
                    old = list(t.branches)
                    sid = self.store.create_session(title=f"LangGraph thread {thread_id}",
                                                    metadata=self._branch_metadata(thread_id, ns)).id
                    keep = {k: v for k, v in latest.items() if k not in ("session", "seq")}
                    messages = [Message("assistant", [text(f"checkpoint {latest['id']}")],
                                        metadata={_KIND: keep})]
                    for (task_id, _), (_, channel, packed, task_path) in sorted(
                            t.writes.get(latest["id"], {}).items()):
                        record = {"type": "writes", "checkpoint_id": latest["id"], "task_id": task_id,
                                  "task_path": task_path, "writes": [[channel, packed]]}
                        messages.append(Message("assistant", [text(f"writes of {task_id}")],
                                                metadata={_KIND: record}))
                    self.store.append_batch(sid, messages)
                    for branch in sorted(old, reverse=True):
                        try:
                            self.store.delete_session(branch)
                        except NotFound:
                            pass
                    self._threads.pop((thread_id, ns), None)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Deletes the checkpoints (and their writes) whose metadata names one
        of `run_ids`, in every thread: a record of which, appended to each
        branch that held one (the log is append-only); every saver leaves them
        out from then on."""
        runs = {str(r) for r in run_ids}
        with self._lock:
            keys = sorted({(s.metadata.get("thread_id", ""), s.metadata.get("checkpoint_ns", ""))
                           for s in self._all_branch_sessions()})
            for thread_id, ns in keys:
                t = self._thread(thread_id, ns)
                by_branch: Dict[str, List[str]] = {}
                for record in t.checkpoints.values():
                    if str(record["metadata"].get("run_id")) in runs:
                        by_branch.setdefault(record["session"], []).append(record["id"])
                for branch, ids in sorted(by_branch.items()):
                    self._append(t, branch, {"type": "deleted", "ids": sorted(ids)},
                                 f"deleted {len(ids)} checkpoints")

    def get_next_version(self, current: Optional[Any], channel: Any = None) -> str:
        """A version after `current`: LangGraph's own scheme (a counter, then a random tie-break)."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    def close(self) -> None:
        if self._owns_store:
            self.store.close()

    # ---- the async twins -------------------------------------------------------

    async def aget_tuple(self, config: Dict[str, Any]) -> Optional[CheckpointTuple]:
        return await asyncio.to_thread(self.get_tuple, config)

    async def aget(self, config: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        return await asyncio.to_thread(self.get, config)

    async def alist(self, config: Optional[Dict[str, Any]], *, filter: Optional[Dict[str, Any]] = None,
                    before: Optional[Dict[str, Any]] = None, limit: Optional[int] = None):
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(self, config: Dict[str, Any], checkpoint: Dict[str, Any], metadata: Dict[str, Any],
                   new_versions: Dict[str, Any]) -> Dict[str, Any]:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Dict[str, Any], writes: Sequence[Tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)
