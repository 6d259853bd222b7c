"""Responses API items (the OpenAI Agents SDK's TResponseInputItem) as
sessiondb messages, losslessly.

An item becomes one message: its text, tool calls, tool outputs and
reasoning as parts (so search, projections and the web page see them), and
the item itself in the message's metadata, so that reading it back gives an
item equal to the one written, whatever its type. Images sent as base64 data
URLs leave the JSON: their bytes go to the blob store (kept once however
often they are sent) and the template keeps where each was and its media
type; reading puts back the same data URL. A plain ``{"role", "content": str}``
item needs no template at all: role and text say it all.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Dict, List, Optional, Tuple

from ._sessiondb import Message, Usage, image, reasoning, text, tool_call, tool_result

ITEM_KEY = "openai_item"  # the item's template in the message metadata
IMAGES_KEY = "openai_item_images"  # [[path, media type], ...], in image part order
_ROLES = {"user", "assistant", "system"}
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")

Path = List[Any]


def _image_bytes(value: str, max_bytes: int) -> Optional[Tuple[str, bytes]]:
    """(media type, bytes) of a data URL whose bytes the store can keep and
    whose base64 is canonical (so re-encoding gives the same text); else None."""
    if not value.startswith("data:image/"):
        return None
    head, sep, payload = value.partition(";base64,")
    if not sep or len(payload) * 3 // 4 > max_bytes:
        return None
    if len(payload) % 4:
        return None
    try:
        data = base64.b64decode(payload, validate=True)
        # Valid base64 of a length divisible by 4 re-encodes to itself unless
        # its last group has stray bits: checking that group is enough.
        tail = payload[-4:]
        if base64.b64encode(base64.b64decode(tail, validate=True)).decode("ascii") != tail:
            return None
    except (binascii.Error, ValueError):
        return None
    if not (data.startswith(_IMAGE_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")):
        return None
    return head[len("data:"):], data


def _strip_images(value: Any, path: Path, found: List[Tuple[Path, str, bytes]],
                  max_bytes: int, max_images: int) -> Any:
    """A copy of `value` with each storable data URL replaced by None, recorded in `found`."""
    if isinstance(value, dict):
        return {k: _strip_images(v, path + [k], found, max_bytes, max_images) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_images(v, path + [i], found, max_bytes, max_images) for i, v in enumerate(value)]
    if isinstance(value, str) and len(found) < max_images:
        got = _image_bytes(value, max_bytes)
        if got is not None:
            found.append((path, got[0], got[1]))
            return None
    return value


def _texts(content: Any) -> List[str]:
    if isinstance(content, str):
        return [content] if content else []
    out = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                out.append(part["text"])
            elif isinstance(part, dict) and isinstance(part.get("refusal"), str) and part["refusal"]:
                out.append(part["refusal"])
    return out


def _role_of(item: Dict[str, Any]) -> str:
    role = item.get("role")
    if role in _ROLES:
        return role
    if role == "developer":
        return "system"
    if item.get("type", "").endswith("_output"):
        return "tool"
    return "assistant"


def _json_object_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            if isinstance(json.loads(arguments), dict):
                return arguments
        except ValueError:
            pass
        return "{}"
    return json.dumps(arguments) if isinstance(arguments, dict) else "{}"


def to_message(item: Dict[str, Any], *, max_image_bytes: int, max_images: int,
               keep_images_inline: bool = False, usage: Optional[Usage] = None,
               model: str = "") -> Message:
    """The message that stores `item` (see the module's docstring)."""
    if not isinstance(item, dict):
        raise TypeError(f"a session item is a dict, not {type(item).__name__}")
    fields: Dict[str, Any] = {}
    if usage is not None:
        fields["usage"] = usage
    if model:
        fields["model"] = model
    content = item.get("content")
    if set(item) == {"role", "content"} and item["role"] in _ROLES and isinstance(content, str) and content:
        return Message(item["role"], content, **fields)

    found: List[Tuple[Path, str, bytes]] = []
    template = item if keep_images_inline else _strip_images(
        item, [], found, max_image_bytes, max_images)
    parts: List[Any] = [text(t) for t in _texts(content)]
    parts += [image(data) for _, _, data in found]
    kind = item.get("type")
    if kind in ("function_call", "custom_tool_call"):
        parts.append(tool_call(item.get("call_id") or item.get("id") or "call", item.get("name") or "tool",
                               _json_object_text(item.get("arguments"))))
    elif isinstance(kind, str) and kind.endswith("_output") and "call_id" in item:
        output = item.get("output")
        parts.append(tool_result(item["call_id"] or "call",
                                 output if isinstance(output, str) else json.dumps(output)))
    elif kind == "reasoning":
        summary = "\n".join(s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict))
        if summary:
            parts.append(reasoning(summary))
    if not parts:  # an item with nothing to index: its type names it
        parts.append(text(str(kind or item.get("role") or "item")))
    metadata = {ITEM_KEY: template}
    if found:
        metadata[IMAGES_KEY] = [[path, mime] for path, mime, _ in found]
    return Message(_role_of(item), parts, metadata=metadata, **fields)


def _put(template: Any, path: Path, value: Any) -> None:
    target = template
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def row_to_item(row: Tuple[str, str, Optional[str], List[str]], read_blob) -> Dict[str, Any]:
    """The item of a row of Store._item_rows: (role, text, metadata JSON, image sha256s)."""
    role, body, metadata_json, shas = row
    if metadata_json is None or ITEM_KEY not in metadata_json:
        return {"role": role if role in _ROLES else "assistant", "content": body}
    metadata = json.loads(metadata_json)
    item = metadata[ITEM_KEY]
    for (path, mime), sha in zip(metadata.get(IMAGES_KEY) or [], shas):
        url = f"data:{mime};base64,{base64.b64encode(read_blob(sha)).decode('ascii')}"
        if not path:
            return url
        _put(item, path, url)
    return item


def to_item(message: Message, read_blob) -> Dict[str, Any]:
    """The item `message` stores; read_blob(sha256) gives an image's bytes."""
    metadata = message.metadata
    if ITEM_KEY not in metadata:
        return {"role": message.role if message.role in _ROLES else "assistant", "content": message.text}
    item = metadata[ITEM_KEY]
    images = metadata.get(IMAGES_KEY) or []
    if images:
        resources = [p.resource for p in message.parts if p.type == "image"]
        for (path, mime), resource in zip(images, resources):
            data = read_blob(resource.content_sha256)
            url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            if not path:
                return url  # the item itself was a data URL (not a Responses item, but kept)
            _put(item, path, url)
    return item
