"""sessiondb: an embedded database for LLM chat sessions, from Python.

One store holds sessions (append-only logs of messages, with images and
files kept once as content-addressed blobs), their forks, compactions,
drafts, search and the agents' code memory. A directory opens the embedded
store; a ``postgresql://`` URI the shared one::

    import sessiondb
    with sessiondb.open("/tmp/chats") as store:
        s = store.create_session(title="Cats")
        store.append(s.id, "user", ["What is this?", sessiondb.image(b"\\x89PNG...")])
        body = store.project(s.id, "openai-chat")   # {"messages": [...]}

Every call that touches the disk releases the GIL, so threads run on while
one waits. ``sessiondb.aio`` is the asyncio face; ``sessiondb.agents`` the
OpenAI Agents SDK session; ``sessiondb.langgraph`` a LangGraph checkpoint
saver. See docs/python.md.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence, Union

from . import _sessiondb
from ._sessiondb import (  # noqa: F401  (the public names)
    AlreadyExists,
    AppendResult,
    Busy,
    Compaction,
    Corruption,
    Draft,
    Error,
    Event,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    IoError,
    Message,
    NotFound,
    Part,
    Resource,
    ResourceView,
    Session,
    Usage,
    file,
    image,
    link,
    reasoning,
    text,
    tool_call,
    tool_result,
)

__all__ = [
    "AlreadyExists", "AppendResult", "Busy", "Compaction", "Corruption", "Draft", "Error",
    "Event", "FailedPrecondition", "Internal", "InvalidArgument", "IoError", "Message",
    "NotFound", "Part", "Resource", "ResourceView", "Session", "Store", "Usage", "file",
    "image", "link", "open", "reasoning", "text", "tool_call", "tool_result",
]

Content = Union[str, Part, Sequence[Union[str, Part]], None]


class Store(_sessiondb.Store):
    """One sessiondb database (see the module's docstring). Safe to share
    between threads; use it as a context manager to close it."""

    def append(
        self,
        session_id: str,
        message: Union[Message, str] = "user",
        content: Content = None,
        **fields: Any,
    ) -> AppendResult:
        """Appends one message, all or nothing, and returns its seq and id.

        Either a ready ``Message``, or a role ("user", "assistant", "system",
        "tool") with its content (a str, a Part, or a list of them) and the
        Message keyword fields (model, provider, usage, metadata, files...)::

            store.append(sid, "user", ["Look:", sessiondb.image("cat.png")])
            store.append(sid, "assistant", "A cat.", model="gpt-4o",
                         usage={"input_tokens": 812, "output_tokens": 4})
        """
        if not isinstance(message, Message):
            message = Message(message, content, **fields)
        elif content is not None or fields:
            raise InvalidArgument("append() takes a Message or a role with content, not both")
        return self.append_message(session_id, message)

    def sessions(
        self,
        *,
        archived: str = "active",
        metadata_key: str = "",
        metadata_value: str = "",
        page_size: int = 100,
    ) -> Iterator[Session]:
        """Every session, most recently updated first, read a page at a time."""
        cursor = ""
        while True:
            page, cursor = self.list_page(
                page_size, cursor, archived=archived, metadata_key=metadata_key,
                metadata_value=metadata_value)
            yield from page
            if not cursor:
                return

    def trash(self, *, page_size: int = 100) -> Iterator[Session]:
        """Every session in the trash, most recently updated first, a page at
        a time (list_trash); each has ``trashed_ms`` set."""
        cursor = ""
        while True:
            page, cursor = self.list_trash(page_size, cursor)
            yield from page
            if not cursor:
                return

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open(location: Any, **options: Any) -> Store:  # noqa: A001  (sessiondb.open, like sqlite3.connect)
    """Opens (creating if missing) the store at ``location``: a directory or
    a ``postgresql://`` URI. Options: durability ("durable" or
    "process-crash-safe"), max_image_bytes, max_images_per_message,
    max_file_bytes, create_if_missing, read_only, busy_timeout_ms, namespace,
    max_connections, actor (who the ledger of forgetting names), key_file
    (the master key of an encrypted store; default $SESSIONDB_KEY_FILE)."""
    return Store(location, **options)
