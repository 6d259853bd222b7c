#!/usr/bin/env python3
"""Interop fidelity check (issue 17): what a sample holds vs what the store holds.

For every import format, writes a sample of our own making, shaped the way the
real tool writes it and holding the messy parts real histories have (odd-typed
fields, branches and side chains, a continued session, a compaction, thoughts
as parts, images, tool calls and results, an invalid UTF-8 byte, a BOM, a
malformed record, an empty log). Counts what the sample holds, imports it into
a fresh store, reads the store back (`ls --json`, `events --json`) and prints
one row per format with a verdict: every difference must be a record the
sample made unreadable on purpose and that the import skipped with a reason.

    python3 bench/interop/fidelity_samples.py build/sessiondb [--keep DIR]

Python 3 standard library only. Exit 1 when a row has an unexplained
difference.
"""
import base64
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

BAD_UTF8 = b"\xff"  # never valid in UTF-8
BOM = b"\xef\xbb\xbf"


def png(w=2, h=2, rgb=(200, 30, 30)):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PNG = png()
PNG_B64 = base64.b64encode(PNG).decode()


def jl(obj):
    return json.dumps(obj, ensure_ascii=False).encode()


def with_bad_byte(line: bytes, marker: str) -> bytes:
    """Replace the ASCII marker inside a JSON line's string by an invalid UTF-8 byte."""
    assert marker.encode() in line
    return line.replace(marker.encode(), BAD_UTF8, 1)


class Sample:
    """What a sample holds, counted as it is written."""

    def __init__(self, fmt):
        self.fmt = fmt
        self.conversations = 0
        self.roles = {"user": 0, "assistant": 0, "tool": 0, "system": 0}
        self.calls = 0
        self.results = 0
        self.images = 0
        self.compactions = 0
        self.bad = []  # (what, expected reason words)
        self.notes = []

    def msg(self, role, calls=0, results=0, images=0):
        self.roles[role] += 1
        self.calls += calls
        self.results += results
        self.images += images

    def skip(self, what, reason_words):
        self.bad.append((what, reason_words))


# ---------------------------------------------------------------- claude-code
def claude_code(root):
    s = Sample("claude-code")
    proj = os.path.join(root, "projects", "-home-me-app")
    os.makedirs(proj)
    sid = "11111111-1111-4111-8111-111111111111"
    base = {"sessionId": sid, "cwd": "/home/me/app", "version": "1.0.0", "userType": "external"}

    def rec(t, uuid, parent, ts, message=None, **kw):
        r = dict(base, type=t, uuid=uuid, parentUuid=parent, timestamp=ts)
        if message is not None:
            r["message"] = message
        r.update(kw)
        return jl(r)

    lines = []
    # BOM before the first line, and an invalid byte in the first prompt.
    lines.append(BOM + with_bad_byte(rec("user", "u1", None, "2025-03-01T10:00:00Z",
                                         {"role": "user", "content": "Fix the parser MARK please"}), "MARK"))
    s.msg("user")
    # One response written as four records (thinking, text, two parallel tool calls).
    mid = "msg_01"
    resp = [("a1", "u1", {"type": "thinking", "thinking": "Look at parse()", "signature": "sig=="}),
            ("a2", "a1", {"type": "text", "text": "Reading both files."}),
            ("a3", "a2", {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.c"}}),
            ("a4", "a3", {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "b.c"}})]
    for u, p, blk in resp:
        lines.append(rec("assistant", u, p, "2025-03-01T10:00:05Z",
                         {"id": mid, "role": "assistant", "model": "claude-sonnet-4", "content": [blk],
                          "usage": {"input_tokens": "12", "output_tokens": 30}}))  # odd-typed count
    s.msg("assistant", calls=2)
    # Parallel results: one record each (Role tool: only tool results).
    lines.append(rec("user", "r1", "a4", "2025-03-01T10:00:06Z",
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "int a;"}]},
                     toolUseResult={"stdout": "int a;"}))
    lines.append(rec("user", "r2", "r1", "2025-03-01T10:00:06Z",
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                                                   "content": [{"type": "text", "text": "int b;"}]}]}))
    s.msg("tool", results=1); s.msg("tool", results=1)
    lines.append(jl({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}))  # dropped, not counted
    # A user prompt with an embedded image; its timestamp is a number (odd type: time 0, documented).
    lines.append(rec("user", "u2", "r2", 1740823210,
                     {"role": "user", "content": [{"type": "text", "text": "And this screenshot?"},
                                                  {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                               "data": PNG_B64}}]}))
    s.msg("user", images=1)
    s.notes.append("u2's numeric `timestamp` takes the time of the record before it")
    # A regenerated answer: a branch from u2 (written before the main line's answer).
    lines.append(rec("assistant", "b1", "u2", "2025-03-01T10:00:12Z",
                     {"id": "msg_02", "role": "assistant", "content": [{"type": "text", "text": "First try."}]}))
    s.msg("assistant")
    # Malformed: message is a string; a line that is not JSON.
    lines.append(rec("user", "bad1", "u2", "2025-03-01T10:00:13Z", "just a string"))
    s.skip("user record whose message is a string", "message is a string")
    lines.append(b'{"type":"user","uuid":"bad2", "message": {')
    s.skip("line that is not JSON", "not valid JSON")
    # An inline sub-agent run (side chain), parentless.
    lines.append(rec("user", "s1", None, "2025-03-01T10:00:14Z",
                     {"role": "user", "content": "Search for callers"}, isSidechain=True))
    lines.append(rec("assistant", "s2", "s1", "2025-03-01T10:00:15Z",
                     {"id": "msg_03", "role": "assistant", "content": [{"type": "text", "text": "Found 3."}]},
                     isSidechain=True))
    s.msg("user"); s.msg("assistant")
    # The main line's answer, last.
    lines.append(rec("assistant", "a5", "u2", "2025-03-01T10:00:20Z",
                     {"id": "msg_04", "role": "assistant", "content": [{"type": "text", "text": "Fixed."}]}))
    s.msg("assistant")
    lines.append(jl({"type": "summary", "summary": "Parser fix", "leafUuid": "a5"}))
    with open(os.path.join(proj, sid + ".jsonl"), "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    s.conversations += 3  # main line, regenerated branch, side chain

    # A continued (resumed) session: its file starts with copies of the earlier
    # session's records, then its own under a new sessionId.
    sid2 = "22222222-2222-4222-8222-222222222222"
    l2 = [rec("user", "u1", None, "2025-03-01T10:00:00Z", {"role": "user", "content": "Fix the parser please"}),
          rec("assistant", "a5", "u1", "2025-03-01T10:00:20Z",
              {"id": "msg_04", "role": "assistant", "content": [{"type": "text", "text": "Fixed."}]})]
    s.msg("user"); s.msg("assistant")
    base["sessionId"] = sid2
    l2.append(rec("user", "c1", "a5", "2025-03-02T09:00:00Z", {"role": "user", "content": "Now add a test"}))
    l2.append(rec("assistant", "c2", "c1", "2025-03-02T09:00:04Z",
                  {"id": "msg_05", "role": "assistant", "content": [{"type": "text", "text": "Added."}]}))
    s.msg("user"); s.msg("assistant")
    with open(os.path.join(proj, sid2 + ".jsonl"), "wb") as f:
        f.write(b"\n".join(l2) + b"\n")
    s.conversations += 2  # the resumed file's own session, and the copied group (documented: a session of its own)
    return s, os.path.join(root, "projects"), []


# ---------------------------------------------------------------------- codex
def codex(root):
    s = Sample("codex")
    d = os.path.join(root, "sessions", "2025", "03", "01")
    os.makedirs(d)
    uid = "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    t = "2025-03-01T10:00:%02d.000Z"
    L = []

    def line(i, typ, payload, ts=True):
        o = {"type": typ, "payload": payload}
        if ts:
            o = {"timestamp": t % i, **o}
        L.append(jl(o))

    line(0, "session_meta", {"id": uid, "timestamp": t % 0, "cwd": "/home/me/app", "originator": "codex_cli_rs",
                             "cli_version": "0.40.0", "source": "cli", "model_provider": "openai",
                             "git": {"branch": "main"}})
    L[0] = BOM + L[0]
    line(1, "turn_context", {"model": "gpt-5-codex", "cwd": "/home/me/app", "approval_policy": "on-request"})
    line(1, "response_item", {"type": "message", "role": "developer",
                              "content": [{"type": "input_text", "text": "You are Codex."}]})
    s.msg("system")
    line(2, "response_item", {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]})
    s.msg("user")
    L.append(with_bad_byte(jl({"timestamp": t % 3, "type": "response_item", "payload": {
        "type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "Why does MARK this fail?"},
                    {"type": "input_image", "image_url": "data:image/png;base64," + PNG_B64}]}}), "MARK"))
    s.msg("user", images=1)
    line(4, "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Check the test"}],
                              "encrypted_content": "gAAAA"})
    s.msg("assistant")
    line(5, "response_item", {"type": "function_call", "name": "shell", "call_id": "call_1",
                              "arguments": "{\"command\":[\"ls\"]}"})
    s.msg("assistant", calls=1)
    # A line without a timestamp (takes its neighbour's).
    line(0, "response_item", {"type": "function_call_output", "call_id": "call_1",
                              "output": {"content": "a.c b.c", "success": True}}, ts=False)
    s.msg("tool", results=1)
    line(6, "event_msg", {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 10, "output_tokens": 5}}})
    line(7, "response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_2",
                              "input": "*** Begin Patch\n*** Update File: a.c\n@@\n-x\n+y\n*** End Patch"})
    s.msg("assistant", calls=1)
    line(8, "response_item", {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done!"})
    s.msg("tool", results=1)
    line(9, "event_msg", {"type": "agent_message", "message": "repeat"})  # dropped: repeats items
    line(10, "compacted", {"message": "", "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Why does this fail?"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Patched a.c."}]},
        {"type": "compaction", "encrypted_content": "gAAAA"}]})
    s.compactions += 1
    L.append(b'{"timestamp":"2025-03-01T10:00:11.000Z","type":"response_item","payload":')
    s.skip("line that is not JSON", "not valid JSON")
    line(12, "response_item", {"type": "message", "role": "assistant",
                               "content": [{"type": "output_text", "text": "Fixed after compaction."}]})
    s.msg("assistant")
    line(13, "response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_image", "image_url": "data:image/png;base64,bm90IGFuIGltYWdl"}]})
    s.skip("image that is not an image (the part)", "its bytes are")
    s.skip("the same message, left with nothing", "nothing is left")
    with open(os.path.join(d, "rollout-2025-03-01T10-00-00-%s.jsonl" % uid), "wb") as f:
        f.write(b"\n".join(L) + b"\n")
    s.conversations = 1
    return s, os.path.join(root, "sessions"), []


# -------------------------------------------------------------------- chatgpt
def chatgpt(root):
    s = Sample("chatgpt")
    d = os.path.join(root, "chatgpt-export")
    os.makedirs(d)
    with open(os.path.join(d, "file-AbC123-shot.png"), "wb") as f:
        f.write(PNG)

    def node(nid, parent, children, role=None, content=None, recipient="all", meta=None, t=0.0, name=None):
        n = {"id": nid, "parent": parent, "children": children, "message": None}
        if role:
            a = {"role": role}
            if name:
                a["name"] = name
            n["message"] = {"id": nid, "author": a, "create_time": 1740823200 + t, "recipient": recipient,
                            "content": content, "metadata": meta or {}, "status": "finished_successfully"}
        return n

    m = {}
    m["root"] = node("root", None, ["sys"])
    m["sys"] = node("sys", "root", ["u1"], "system", {"content_type": "text", "parts": [""]},
                    meta={"is_visually_hidden_from_conversation": True})  # left out (documented)
    m["u1"] = node("u1", "sys", ["th", "alt"], "user",
                   {"content_type": "multimodal_text",
                    "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-AbC123",
                               "width": 2, "height": 2}, "What is in MARK this picture?"]}, t=1)
    s.msg("user", images=1)
    m["th"] = node("th", "u1", ["code"], "assistant",
                   {"content_type": "thoughts", "parts": [{"summary": "Looking", "content": "A red square."}]},
                   meta={"model_slug": "o3"}, t=2)
    s.msg("assistant")
    m["code"] = node("code", "th", ["out"], "assistant", {"content_type": "code", "language": "python",
                                                         "text": "print(1+1)"}, recipient="python", t=3)
    s.msg("assistant", calls=1)
    m["out"] = node("out", "code", ["odd"], "tool", {"content_type": "execution_output", "text": "2"},
                    name="python", t=4)
    s.msg("tool", results=1)
    m["odd"] = node("odd", "out", ["ans"], "assistant", {"content_type": "mystery_widget", "widget": {"x": 1}}, t=5)
    s.skip("message whose content type has no text", "mystery_widget")
    m["ans"] = node("ans", "odd", [], "assistant", {"content_type": "text", "parts": ["A red square."]}, t=6)
    s.msg("assistant")
    m["alt"] = node("alt", "u1", [], "assistant", {"content_type": "text", "parts": ["Regenerated answer."]}, t=7)
    s.msg("assistant")
    conv = {"id": "67c2a000-1111-8000-9000-aaaaaaaaaaaa", "conversation_id": "67c2a000-1111-8000-9000-aaaaaaaaaaaa",
            "title": "Red square", "create_time": 1740823200.5, "update_time": "odd", "current_node": "ans",
            "default_model_slug": "o3", "mapping": m}
    conv2 = {"id": "67c2a000-2222-8000-9000-bbbbbbbbbbbb", "title": None, "create_time": 1740823300,
             "mapping": {"r": node("r", None, ["q"]),
                         "q": node("q", "r", [], "user", {"content_type": "text", "parts": ["Second chat"]}, t=100)}}
    s.msg("user")
    data = b"\xef\xbb\xbf" + with_bad_byte(jl([conv, conv2]), "MARK")
    with open(os.path.join(d, "conversations.json"), "wb") as f:
        f.write(data)
    s.conversations = 3  # active line, regenerated branch, second conversation
    s.notes.append("hidden system node left out (documented)")
    return s, d, []


# ------------------------------------------------------------------ claude-ai
def claude_ai(root):
    s = Sample("claude-ai")
    d = os.path.join(root, "claude-export")
    os.makedirs(d)
    msgs = [
        {"uuid": "m1", "sender": "human", "text": "Summarise MARK the file", "created_at": "2025-03-01T10:00:00Z",
         "content": [{"type": "text", "text": "Summarise MARK the file"}],
         "attachments": [{"file_name": "notes.txt", "file_type": "text/plain", "file_size": 5,
                          "extracted_content": "hello"}], "files": [{"file_name": "notes.txt"}]},
        {"uuid": "m2", "sender": "assistant", "text": "", "created_at": "2025-03-01T10:00:05Z",
         "content": [{"type": "thinking", "thinking": "", "summaries": [{"summary": "Reading it"}]},
                     {"type": "tool_use", "name": "web_search", "input": {"q": "hello"}},
                     {"type": "tool_result", "content": [{"type": "text", "text": "1 hit"}], "is_error": False},
                     {"type": "text", "text": "It says hello."}],
         "attachments": [], "files": []},
        {"uuid": "m3", "sender": "human", "text": "", "created_at": "2025-03-01T10:00:09Z", "content": [],
         "attachments": [], "files": []},
        {"uuid": "m4", "sender": "human", "text": "Thanks", "created_at": 12345, "attachments": None, "files": []},
    ]
    s.msg("user"); s.msg("assistant", calls=1, results=1)
    s.skip("human message with nothing to keep", "no text or content blocks")
    s.msg("user")
    s.images = 0
    s.notes.append("attachment = extracted text part + name in metadata `files` (no bytes in the export)")
    conv = {"uuid": "0195a1b2-0000-7000-8000-cccccccccccc", "title": "File summary", "summary": "",
            "created_at": "2025-03-01T10:00:00Z", "updated_at": "2025-03-01T10:00:09Z", "chat_messages": msgs}
    with open(os.path.join(d, "conversations.json"), "wb") as f:
        f.write(BOM + with_bad_byte(jl([conv]), "MARK"))
    s.conversations = 1
    return s, d, []


# ---------------------------------------------------------------------- ac-dc
def acdc(root):
    s = Sample("ac-dc")
    d = os.path.join(root, ".ac-dc")
    os.makedirs(os.path.join(d, "images"))
    uri = "data:image/png;base64," + PNG_B64
    h12 = hashlib.sha256(uri.encode()).hexdigest()[:12]
    with open(os.path.join(d, "images", h12 + ".png"), "wb") as f:
        f.write(PNG)
    A, B2 = "sess_1740823200000_a1b2c3", "sess_1740823300000_d4e5f6"
    L = [BOM + jl({"id": "1740823200000-00000001", "session_id": A, "timestamp": "2025-03-01T10:00:00Z",
                   "role": "user", "content": "Look at this", "image_refs": [h12 + ".png"], "files": ["a.c", 7]}),
         with_bad_byte(jl({"id": "1740823201000-00000002", "session_id": A, "timestamp": "2025-03-01T10:00:01Z",
                           "role": "assistant", "content": "A red MARK square", "files_modified": ["a.c"],
                           "edit_results": [{"file": "a.c", "status": "applied"}]}), "MARK"),
         jl({"id": "1740823300000-00000003", "session_id": B2, "timestamp": "2025-03-01T10:01:40Z",
             "role": "user", "content": "Legacy", "images": 2}),
         jl(["not", "an", "object"]),
         jl({"id": "x", "timestamp": "2025-03-01T10:02:00Z", "role": "user", "content": "no session"}),
         jl({"id": "1740823302000-00000004", "session_id": B2, "timestamp": "2025-03-01T10:01:42Z",
             "role": "assistant", "content": "Old answer"})]
    s.msg("user", images=1); s.msg("assistant"); s.msg("user"); s.msg("assistant")
    s.skip("line that is an array", "array")
    s.skip("record without session_id", "session_id")
    with open(os.path.join(d, "history.jsonl"), "wb") as f:
        f.write(b"\n".join(L) + b"\n")
    s.conversations = 2
    # Continued in ac-dc after the first import: one more record, imported again.
    more = jl({"id": "1740823400000-00000005", "session_id": A, "timestamp": "2025-03-01T10:03:20Z",
               "role": "user", "content": "And one more thing"}) + b"\n"
    s.msg("user")

    def grow():
        with open(os.path.join(d, "history.jsonl"), "ab") as f:
            f.write(more)
    s.notes.append("continued: one record appended after the first import, imported again")
    return s, d, [grow]


# ------------------------------------------------------------------ agents-kt
def agents_kt(root):
    s = Sample("agents-kt")
    d = os.path.join(root, "agents-kt")
    os.makedirs(d)
    snap = {"requestId": "req-1", "sessionId": "akt-session-1", "manifestHash": None,
            "pendingInterruptCallId": None, "pendingApprovalGate": False, "turns": 2, "toolCalls": 1,
            "toolCallLimit": 20, "tokens": {"prompt": 100, "completion": 20, "cached": 0, "reasoning": 0,
                                            "provider": "unknown", "model": "gpt-4o"},
            "memory": {"k": "v"},
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is MARK in the image?", "images": [{"base64": PNG_B64, "mime": "image/png"},
                                                                         {"base64": "%%%", "mime": "image/png"}]},
                {"role": "assistant", "content": "", "toolCalls": [{"name": "describe", "arguments": {"x": 1}}]},
                {"role": "tool", "content": "red square"},
                {"role": "assistant", "content": 42},
                {"role": "wizard", "content": "hi"},
                {"role": "assistant", "content": "A red square."}]}
    s.msg("system"); s.msg("user", images=1); s.msg("assistant", calls=1); s.msg("tool", results=1); s.msg("assistant")
    s.skip("image whose base64 does not decode", "base64")
    s.skip("message whose content is a number", "content")
    s.skip("message with an unknown role", "role")
    with open(os.path.join(d, "a.json"), "wb") as f:
        f.write(jl(snap).replace(b"MARK", b"colour"))
    # A second snapshot with a BOM and one invalid UTF-8 byte in a message's text.
    snap2 = {"requestId": "req-2", "sessionId": "akt-session-2", "turns": 1, "toolCalls": 0, "toolCallLimit": 20,
             "tokens": None, "memory": {}, "messages": [{"role": "user", "content": "Caf\u00e9 MARK menu"},
                                                         {"role": "assistant", "content": "Soup."}]}
    with open(os.path.join(d, "b.json"), "wb") as f:
        f.write(BOM + with_bad_byte(jl(snap2), "MARK"))
    s.msg("user"); s.msg("assistant")
    s.conversations = 2
    return s, d, []


# ------------------------------------------------------------------- extremis
def extremis(root):
    s = Sample("extremis")
    d = os.path.join(root, "sessions")
    os.makedirs(d)
    u1 = "5F1B0C1E-1111-4111-8111-111111111111"
    u2 = "5F1B0C1E-2222-4222-8222-222222222222"
    idx = {"version": 1, "sessions": [
        {"id": u1, "title": "Index title", "createdAt": "2025-03-01T10:00:00Z", "updatedAt": "2025-03-01T10:05:00Z",
         "messageCount": 5, "isArchived": False},
        {"id": "5F1B0C1E-9999-4999-8999-999999999999", "title": "Gone", "createdAt": "2025-03-01T10:00:00Z",
         "updatedAt": "2025-03-01T10:00:00Z", "messageCount": 1, "isArchived": False}],
        "activeSessionId": u1, "lastUpdated": "2025-03-01T10:05:00Z"}
    s.skip("index entry whose file is missing", "")
    msgs = [{"id": "M1", "role": "user", "content": "Explain MARK closures", "timestamp": "2025-03-01T10:00:00Z",
             "contextData": base64.b64encode(b'{"app":"Xcode"}').decode()},
            {"id": "M2", "role": "assistant", "content": "A closure captures...", "timestamp": 762775205},
            {"role": "user", "content": "More", "timestamp": "2025-03-01T10:01:00Z"},
            {"id": "M4", "role": "assistant", "content": "", "timestamp": "2025-03-01T10:01:05Z"},
            {"id": "M5", "role": "robot", "content": "beep", "timestamp": "2025-03-01T10:01:06Z"},
            {"id": "M6", "role": "assistant", "content": "Sure.", "timestamp": "2025-03-01T10:01:10Z"}]
    s.msg("user"); s.msg("assistant"); s.msg("user"); s.msg("assistant")
    s.skip("message with no content", "content")
    s.skip("message with an unknown role", "role")
    sess = {"id": u1, "version": 1, "messages": msgs, "maxMessages": 100, "createdAt": "2025-03-01T10:00:00Z",
            "updatedAt": "2025-03-01T10:05:00Z", "isArchived": False,
            "summary": {"content": "User asked about closures.", "coversMessageCount": 2,
                        "createdAt": "2025-03-01T10:01:00Z", "modelUsed": "gpt-4o"}}
    s.compactions += 1
    with open(os.path.join(d, "index.json"), "wb") as f:
        f.write(jl(idx))
    with open(os.path.join(d, u1 + ".json"), "wb") as f:
        f.write(jl(sess).replace(b"MARK", b"Swift"))
    # A second session (not in the index) with a BOM and one invalid UTF-8 byte.
    u3 = "5F1B0C1E-3333-4333-8333-333333333333"
    with open(os.path.join(d, u3 + ".json"), "wb") as f:
        f.write(BOM + with_bad_byte(jl({"id": u3, "version": 1, "maxMessages": 100, "isArchived": False,
                                        "createdAt": "2025-03-02T10:00:00Z", "updatedAt": "2025-03-02T10:00:00Z",
                                        "messages": [{"id": "N1", "role": "user", "content": "Caf MARK menu",
                                                      "timestamp": "2025-03-02T10:00:00Z"}]}), "MARK"))
    s.msg("user")
    with open(os.path.join(d, u2 + ".json"), "wb") as f:  # not in the index, cut short
        f.write(jl({"id": u2, "version": 1, "messages": []})[:-5])
    s.skip("session file cut short", "")
    s.conversations = 2
    s.bad[0] = ("index entry whose file is missing", "missing")
    s.bad[-1] = ("session file cut short", "JSON")
    return s, d, []


# ---------------------------------------------------------------------- pixir
def pixir(root):
    s = Sample("pixir")
    d = os.path.join(root, ".pixir", "sessions")
    sid = "ps_01JNX0000000000000000000AA"
    sha = hashlib.sha256(PNG).hexdigest()
    rdir = os.path.join(d, sid, "resources", "res_img1")
    os.makedirs(rdir)
    with open(os.path.join(rdir, sha + ".png"), "wb") as f:
        f.write(PNG)
    desc = {"resource_id": "res_img1", "kind": "image", "name": "shot.png", "mime_type": "image/png",
            "size_bytes": len(PNG), "content_sha256": sha, "extension": "png", "store_ref": "local"}
    n = [0]

    def ev(typ, data, ts="2025-03-01T10:00:%02dZ", seq=True):
        n[0] += 1
        return jl({"id": "ev_%d" % n[0], "session_id": sid, "seq": n[0] if seq else None,
                   "ts": ts % n[0] if "%" in ts else ts, "type": typ, "data": data})

    L = [BOM + ev("user_message", {"text": "What is this?", "resources": [desc]})]
    s.msg("user", images=1)
    L.append(ev("text_delta", {"text": "A"}))  # ephemeral: dropped silently
    L.append(ev("reasoning", {"encrypted": "gAAAA"}))
    s.skip("reasoning event (no equivalent)", "equivalent")
    L.append(ev("provider_usage", {"model": "gpt-5", "usage_summary": {"input_tokens": 10, "output_tokens": "x"}}))
    L.append(ev("tool_call", {"call_id": "c1", "name": "read", "args": {"path": "a.c"}}))
    s.msg("assistant", calls=1)
    L.append(ev("tool_result", {"call_id": "c1", "ok": False, "error": {"code": "ENOENT"}}, seq=False))
    s.msg("tool", results=1)
    L.append(with_bad_byte(ev("assistant_message", {"text": "It is a MARK red square."}), "MARK"))
    s.msg("assistant")
    L.append(b'{"id":"ev_x","session_id":"' + sid.encode() + b'","type":"assistant_message","data":')
    s.skip("line cut short (last line, no newline)", "truncated")
    with open(os.path.join(d, sid + ".ndjson"), "wb") as f:
        f.write(b"\n".join(L))
    open(os.path.join(d, "ps_01JNX0000000000000000000BB.ndjson"), "wb").close()  # empty log
    s.notes.append("empty log: no session (documented)")
    s.conversations = 1
    return s, os.path.join(root, ".pixir"), []


# ------------------------------------------------------------------- snapshot
def snapshot(root, binary):
    """sessiondb's own format: the Claude Code and Codex samples imported into a
    scratch store and exported, then one part and one session spoiled."""
    s = Sample("snapshot")
    scratch = os.path.join(root, "scratch")
    for make in (claude_code, codex):
        _, path, _ = make(os.path.join(root, "src-" + make.__name__))
        run(binary, scratch, "import", path)
    out = os.path.join(root, "snap.json")
    run(binary, scratch, "export", "--format", "snapshot", "--out", out)
    with open(out, "rb") as f:
        doc = json.loads(f.read())
    sessions = doc["sessions"]
    for sess in sessions:
        for e in sess["events"]:
            if e.get("type") == "compaction":
                s.compactions += 1
            m = e.get("message")
            if e.get("type") != "message" or not m:
                continue
            kinds = [p.get("type") for p in m.get("parts", [])]
            s.msg(m["role"], calls=kinds.count("tool_call"), results=kinds.count("tool_result"),
                  images=kinds.count("image") + kinds.count("file"))
    # A part of a type sessiondb does not know: left out, the message stays.
    for e in sessions[0]["events"]:
        if e.get("type") == "message":
            e["message"]["parts"].append({"type": "hologram", "data": 1})
            break
    s.skip("part of unknown type", "hologram")
    # A session whose title is a number: that session is left out.
    bad = json.loads(json.dumps(sessions[-1]))
    bad["id"] = "snapshot-bad-title-session"
    bad["title"] = 7
    for e in bad["events"]:
        e["id"] = "x" + e["id"][1:]
    sessions.append(bad)
    s.skip("session whose title is a number", "title")
    s.conversations = len(sessions) - 1
    path = os.path.join(root, "sample-snapshot.json")
    with open(path, "wb") as f:
        f.write(jl(doc))
    s.notes.append("sample = the claude-code and codex samples through `export --format snapshot`, then spoiled")
    return s, path, []


FORMATS = [("claude-code", claude_code), ("codex", codex), ("chatgpt", chatgpt), ("claude-ai", claude_ai),
           ("ac-dc", acdc), ("agents-kt", agents_kt), ("extremis", extremis), ("pixir", pixir),
           ("snapshot", snapshot)]


# ---------------------------------------------------------------- the store
def run(binary, store, *args):
    p = subprocess.run([binary, "--store", store, *args, "--json"], capture_output=True)
    try:
        doc = json.loads(p.stdout.decode("utf-8", "replace") or "null")
    except ValueError:
        doc = None
    return p.returncode, doc, p.stderr.decode("utf-8", "replace")


def store_counts(binary, store):
    rc, ls, err = run(binary, store, "ls", "--all", "--limit", "1000")
    c = {"sessions": 0, "roles": {"user": 0, "assistant": 0, "tool": 0, "system": 0}, "calls": 0, "results": 0,
         "stored": 0, "descriptors": 0, "compactions": 0, "empty_sessions": 0, "time0": 0}
    for sess in (ls or {}).get("sessions", []):
        c["sessions"] += 1
        rc, evs, err = run(binary, store, "events", sess["id"], "--limit", "1000000")
        n = 0
        for e in (evs or {}).get("events", []):
            if e.get("type") == "compaction":
                c["compactions"] += 1
            m = e.get("message")
            if e.get("type") != "message" or not m:
                continue
            n += 1
            c["roles"][m["role"]] = c["roles"].get(m["role"], 0) + 1
            if m.get("ts_ms", 1) == 0:
                c["time0"] += 1
            for p in m.get("parts", []):
                t = p.get("type")
                if t == "tool_call":
                    c["calls"] += 1
                elif t == "tool_result":
                    c["results"] += 1
                elif t in ("image", "file"):
                    r = p.get("resource") or p
                    if r.get("content_sha256") and not r.get("not_stored") and not r.get("missing"):
                        c["stored"] += 1
                    else:
                        c["descriptors"] += 1
        if n == 0:
            c["empty_sessions"] += 1
    return c


def roles(r):
    return "%d/%d/%d/%d" % (r["user"], r["assistant"], r["tool"], r["system"])


def check(binary, fmt, make, keep):
    root = tempfile.mkdtemp(prefix="fidelity-%s-" % fmt, dir=keep)
    store = os.path.join(root, "store")
    s, path, later = make(root, binary) if make is snapshot else make(root)
    reports = []
    rc, rep, err = run(binary, store, "import", path)
    reports.append((rc, rep, err))
    for step in later:
        step()
        reports.append(run(binary, store, "import", path))
        r = reports[-1][1] or {}
        s.notes.append("re-import: %d session(s) extended, %d unchanged, %d message(s) added" % (
            r.get("sessions_extended", 0), r.get("sessions_unchanged", 0), r.get("messages_added", 0)))
    c = store_counts(binary, store)
    skipped = []
    for rc, rep, err in reports[-1:]:  # the last import lists every skip again (documented)
        skipped = (rep or {}).get("skipped", [])
    problems = []
    for rc, rep, err in reports:
        if rc != 0:
            problems.append("import exit %d: %s" % (rc, (err or json.dumps(rep))[:200]))
    for k, a, b in [("sessions", s.conversations, c["sessions"]), ("calls", s.calls, c["calls"]),
                    ("results", s.results, c["results"]), ("images", s.images, c["stored"] + c["descriptors"]),
                    ("compactions", s.compactions, c["compactions"])]:
        if a != b:
            problems.append("%s: sample %d, store %d" % (k, a, b))
    for role in s.roles:
        if s.roles[role] != c["roles"].get(role, 0):
            problems.append("%s messages: sample %d, store %d" % (role, s.roles[role], c["roles"].get(role, 0)))
    if c["empty_sessions"]:
        problems.append("%d empty session(s)" % c["empty_sessions"])
    unmatched = list(skipped)
    for what, words in s.bad:
        hit = next((k for k in unmatched if words.lower() in k.get("reason", "").lower()), None)
        if hit is None:
            problems.append("planted '%s' not reported as skipped ('%s')" % (what, words))
        else:
            unmatched.remove(hit)
    for k in unmatched:
        problems.append("unplanted skip %s: \"%s\"" % (os.path.basename(k.get("where", "")), k.get("reason", "")[:90]))
    for k in skipped:
        if not k.get("reason"):
            problems.append("skip without a reason at %s" % k.get("where"))
    sample = "%d conv, msgs %s, calls %d, results %d, images %d, unreadable %d" % (
        s.conversations, roles(s.roles), s.calls, s.results, s.images, len(s.bad))
    if s.compactions:
        sample += ", compactions %d" % s.compactions
    got = "%d sess, msgs %s, calls %d, results %d, att %d stored + %d descr, skipped %d" % (
        c["sessions"], roles(c["roles"]), c["calls"], c["results"], c["stored"], c["descriptors"], len(skipped))
    if c["compactions"] or s.compactions:
        got += ", compactions %d" % c["compactions"]
    verdict = "all explained" if not problems else "UNEXPLAINED: " + "; ".join(problems)
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    return sample, got, verdict, skipped, s.notes, c


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    binary = os.path.abspath(args[0])
    keep = None
    if "--keep" in args:
        keep = os.path.abspath(args[args.index("--keep") + 1])
        os.makedirs(keep, exist_ok=True)
    only = args[args.index("--format") + 1] if "--format" in args else None
    rows, bad = [], 0
    print("| format | sample holds | store holds | verdict |")
    print("|---|---|---|---|")
    details = []
    for fmt, make in FORMATS:
        if only and fmt != only:
            continue
        sample, got, verdict, skipped, notes, c = check(binary, fmt, make, keep)
        bad += not verdict.startswith("all")
        print("| %s | %s | %s | %s |" % (fmt, sample, got, verdict.replace("|", "/")), flush=True)
        details.append((fmt, skipped, notes, c))
    print()
    print("msgs = user/assistant/tool/system; att = images and files stored (bytes) + kept as descriptors")
    for fmt, skipped, notes, c in details:
        print("%s: skipped %s%s%s" % (fmt, "; ".join("%s: %s" % (k["where"], k["reason"][:120]) for k in skipped) or "none",
                                    ("; notes: " + "; ".join(notes)) if notes else "",
                                    "; messages at time 0: %d" % c["time0"] if c["time0"] else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
