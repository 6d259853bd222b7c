"""Type stubs of the extension module sessiondb._sessiondb (python/src)."""

from datetime import datetime
from os import PathLike
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

_Source = Union[bytes, bytearray, memoryview, str, "PathLike[str]"]
_Json = Any

class Error(Exception):
    code: str

class InvalidArgument(Error, ValueError): ...
class NotFound(Error, LookupError): ...
class AlreadyExists(Error): ...
class FailedPrecondition(Error):
    files: List[Dict[str, Any]]  # raised by rewind(code=...) and restore_file: the files refused
class Busy(Error): ...
class Corruption(Error): ...
class IoError(Error, OSError): ...
class Internal(Error): ...

class Resource:
    resource_id: str
    content_sha256: str
    mime: str
    size: int
    width: int
    height: int
    origin: str
    name: str
    uri: str
    not_stored: str
    missing: bool

class Part:
    type: str
    text: str
    resource: Optional[Resource]
    tool_call_id: str
    tool_name: str
    arguments_json: str
    arguments: _Json
    is_error: bool
    signature: str

def text(text: str) -> Part: ...
def reasoning(text: str, signature: str = "") -> Part: ...
def image(source: _Source, mime: str = "", name: str = "") -> Part: ...
def file(source: _Source, mime: str = "", name: str = "") -> Part: ...
def link(url: str, name: str = "", mime: str = "", size: int = 0) -> Part: ...
def tool_call(id: str, name: str, arguments: _Json = None) -> Part: ...
def tool_result(tool_call_id: str, output: str, is_error: bool = False) -> Part: ...

class Usage:
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    cache_write_tokens: int
    def __init__(self, input_tokens: int = 0, output_tokens: int = 0, cached_tokens: int = 0,
                 reasoning_tokens: int = 0, cache_write_tokens: int = 0) -> None: ...

_Content = Union[str, Part, Sequence[Union[str, Part]], None]

class Message:
    id: str
    session_id: str
    seq: int
    ts_ms: int
    role: str
    parts: List[Part]
    text: str
    files: List[str]
    files_modified: List[str]
    model: str
    provider: str
    usage: Optional[Usage]
    metadata: Dict[str, _Json]
    pruned: bool
    def __init__(self, role: str = "user", content: _Content = None, *, model: str = "",
                 provider: str = "", usage: Union[Usage, Dict[str, int], None] = None,
                 metadata: Optional[Dict[str, _Json]] = None, files: List[str] = ...,
                 files_modified: List[str] = ..., id: str = "") -> None: ...

class AppendResult:
    message_id: str
    seq: int
    ts_ms: int
    resources: List[Resource]

class Session:
    id: str
    title: str
    preview: str
    created_ms: int
    updated_ms: int
    message_count: int
    last_seq: int
    archived: bool
    metadata: Dict[str, _Json]
    parent_id: str
    fork_seq: int
    trashed_ms: int  # when it was trashed; 0 outside the trash

class ResourceView:
    resource_id: str
    reason: str
    resource: Resource
    message_seq: int

class Compaction:
    from_seq: int
    to_seq: int
    summary: str
    strategy: str
    model: str
    limitations: str
    images: List[Resource]

class Event:
    id: str
    session_id: str
    seq: int
    ts_ms: int
    type: str
    message: Message
    resource_view: ResourceView
    compaction: Compaction
    rewind_to_seq: int  # for a rewind event

class Draft:
    id: str
    session_id: str
    role: str
    text: str
    reasoning: str
    model: str
    created_ms: int
    updated_ms: int

class Store:
    location: str
    kind: str
    closed: bool
    active_session: Optional[str]
    def __init__(self, location: Union[str, "PathLike[str]"], *, durability: str = "durable",
                 max_image_bytes: Optional[int] = None, max_images_per_message: Optional[int] = None,
                 max_file_bytes: Optional[int] = None, create_if_missing: bool = True,
                 read_only: bool = False, busy_timeout_ms: Optional[int] = None,
                 namespace: str = "", max_connections: Optional[int] = None,
                 actor: str = "",
                 key_file: Union[str, "PathLike[str]", None] = None) -> None: ...
    def close(self) -> None: ...
    # sessions
    def create_session(self, id: Optional[str] = None, *, title: Optional[str] = None,
                       metadata: Optional[Dict[str, _Json]] = None) -> Session: ...
    def get_session(self, id: str) -> Session: ...
    def list_page(self, limit: int = 50, cursor: str = "", *, archived: str = "active",
                  metadata_key: str = "", metadata_value: str = "") -> Tuple[List[Session], str]: ...
    def rename_session(self, id: str, title: str) -> None: ...
    def archive_session(self, id: str, archived: bool = True) -> None: ...
    def delete_session(self, id: str) -> None: ...
    def purge_archived(self, before_ms: int) -> int: ...
    # forgetting: the trash, erasure, the ledger, retention
    retention_policy: Dict[str, Any]
    def trash_session(self, id: str) -> None: ...
    def restore_from_trash(self, id: str) -> Session: ...
    def list_trash(self, limit: int = 50, cursor: str = "") -> Tuple[List[Session], str]: ...
    def empty_trash(self, older_than_days: Optional[int] = None) -> Dict[str, Any]: ...
    def erase(self, session_ids: Sequence[str] = ..., *, project: str = "",
              before: Union[None, int, datetime] = None, everything: bool = False,
              messages: Iterable[Union[Tuple[str, int], Dict[str, Any]]] = ...,
              reason: str = "") -> Dict[str, Any]: ...
    def verify_erased(self, receipt: Union[Dict[str, Any], str, bytes]) -> Dict[str, Any]: ...
    def ledger(self, limit: int = 100, before_id: int = 0) -> List[Dict[str, Any]]: ...
    def apply_retention(self, dry_run: bool = True) -> Dict[str, Any]: ...
    # messages
    def append_message(self, session_id: str, message: Message) -> AppendResult: ...
    def append_batch(self, session_id: str, messages: Sequence[Message]) -> List[AppendResult]: ...
    def read(self, session_id: str, from_seq: int = 1, limit: int = -1) -> List[Message]: ...
    def read_last(self, session_id: str, count: int) -> List[Message]: ...
    def read_events(self, session_id: str, from_seq: int = 1, limit: int = -1) -> List[Event]: ...
    def read_for_projection(self, session_id: str) -> List[Event]: ...
    def _item_rows(self, session_id: str, count: int = -1) -> List[Tuple[str, str, Optional[str], List[str]]]: ...
    # the harness
    def fork(self, parent_id: str, at_seq: Optional[int] = None, *, id: Optional[str] = None,
             title: Optional[str] = None, metadata: Optional[Dict[str, _Json]] = None) -> Session: ...
    def compact(self, session_id: str, from_seq: int, to_seq: int, summary: str, *,
                strategy: str = "", model: str = "", limitations: str = "") -> Event: ...
    def prune(self, session_id: str, compaction_seq: int) -> Dict[str, int]: ...
    # rewind(code="none") returns the Event; code="both" or "only" a dict:
    # {"dry_run", "conversation", "event" (not in a dry run), "files"}
    def rewind(self, session_id: str, to_seq: int, code: str = "none", force: bool = False,
               dry_run: bool = False) -> Union[Event, Dict[str, Any]]: ...
    def rewind_if_unchanged(self, session_id: str, to_seq: int, expected_last_seq: int) -> Optional[Event]: ...
    def view_resource(self, session_id: str, resource_id: str, reason: str = "") -> Event: ...
    def usage(self, session_id: str) -> Dict[str, Any]: ...
    def usage_summary(self, group: Union[str, Sequence[str], None] = None, *, since: str = "",
                      until: str = "", project: str = "", sessions: Optional[Sequence[str]] = None,
                      prices: str = "") -> Dict[str, Any]: ...
    def turn_usage(self, session_id: str, *, prices: str = "") -> List[Dict[str, Any]]: ...
    def open_draft(self, session_id: str, role: str = "assistant", model: str = "") -> Draft: ...
    def save_draft(self, draft: Draft) -> None: ...
    def list_drafts(self, session_id: str) -> List[Draft]: ...
    def finish_draft(self, draft_id: str, message: Optional[Message] = None) -> AppendResult: ...
    def discard_draft(self, draft_id: str) -> None: ...
    # code checkpoints (the dicts of /v1/files/...)
    def file_history(self, path: Union[str, "PathLike[str]"], diffs: bool = True) -> Dict[str, Any]: ...
    def blame(self, path: Union[str, "PathLike[str]"]) -> Dict[str, Any]: ...
    def restore_file(self, path: Union[str, "PathLike[str]"], version: int, force: bool = False,
                     dry_run: bool = False) -> Dict[str, Any]: ...
    def record_file_version(self, agent_session: str, path: Union[str, "PathLike[str]"],
                            content: Union[str, bytes, None], *, tool_use_id: str = "",
                            phase: str = "after", tool: str = "", source: str = "",
                            project: str = "", time_ms: int = 0) -> Dict[str, Any]: ...
    # blobs, housekeeping, projections
    def read_blob(self, sha256: str, verify: bool = False) -> bytes: ...
    def data_uri(self, resource: Resource) -> str: ...
    def collect_garbage(self, grace_ms: Optional[int] = None, dry_run: bool = False) -> Dict[str, int]: ...
    def verify(self) -> Dict[str, Any]: ...
    def stats(self) -> Dict[str, int]: ...
    def project(self, session_id: str, format: str = "openai-chat") -> Dict[str, _Json]: ...
    # search and code memory
    def search(self, query: str, *, mode: str = "hybrid", session_id: str = "",
               role: Optional[str] = None, since_ms: int = 0, until_ms: int = 0, project: str = "",
               archived: str = "all", events: bool = True, code_writes: bool = True,
               limit: int = 20, offset: int = 0,
               catch_up_limit: int = 50000) -> Dict[str, Any]: ...
    def embed(self, max_documents: int = -1) -> Dict[str, Any]: ...
    def record_write(self, file_path: str, new_code: str, *, old_code: str = "",
                     whole_file: bool = True, file_context: str = "", language: str = "",
                     session_id: str = "", project: str = "", tool: str = "",
                     time_ms: int = 0) -> Dict[str, Any]: ...
    def recall(self, file_path: str, code: str, limit: int = 3) -> List[Dict[str, Any]]: ...
    def hotspots(self, path_prefix: str = "", *, functions: bool = False,
                 limit: int = 20) -> List[Dict[str, Any]]: ...
    def file_churn(self, file_path: str) -> Dict[str, Any]: ...
    def churn_warnings(self, file_path: str, new_code: str, *, old_code: str = "",
                       whole_file: bool = True, file_context: str = "", language: str = "",
                       session_id: str = "", project: str = "", tool: str = "",
                       time_ms: int = 0) -> List[Dict[str, str]]: ...
    # import and export
    def import_path(self, path: Union[str, "PathLike[str]"], *, format: Optional[str] = None,
                    max_attachment_bytes: Optional[int] = None) -> Dict[str, Any]: ...
    def export(self, out: Union[str, "PathLike[str]"], *, format: str = "snapshot",
               sessions: Sequence[str] = ..., replace: bool = False) -> Dict[str, Any]: ...
