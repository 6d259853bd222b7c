#!/usr/bin/env python3
"""Peak memory and time of importing one very long record, run on the binary.

Writes a Claude Code transcript (or a Codex rollout, an ac-dc history or a
Pixir log) whose one big record holds --mb MiB in one string (a text block,
a tool call's input, a tool result, or a base64 image; ac-dc and Pixir keep
images in files beside the log, so there the image is a file of that size
and the record stays short), then runs
`/usr/bin/time -v BINARY --store TMP import FILE` and prints the maximum
resident set size and the wall time. The importer's target is to stay under
256 MiB whatever the input (issue 17, item 10).

Usage: long_record.py BINARY [--mb 50] [--kind text|tool_use|tool_result|image]
                      [--format claude-code|codex|ac-dc|pixir] [--records 1] [--keep DIR]
(--records N: Claude Code writes the big block N times, as N records of one
response followed by their results, to try what one message gathers.)
"""
import argparse, base64, hashlib, json, os, re, struct, subprocess, sys, tempfile, zlib

SESSION = "0b9d1c2e-1111-4222-8333-944455556666"


def png_of_size(n):
    """A PNG header and IHDR followed by n bytes of filler: sniffers read only the head."""
    ihdr = struct.pack(">IIBBBBB", 640, 480, 8, 2, 0, 0, 0)
    chunk = lambda kind, data: (struct.pack(">I", len(data)) + kind + data +
                                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    filler = os.urandom(min(n, 1 << 20)) * (n // (1 << 20) + 1)
    return head + chunk(b"IDAT", filler[:n]) + chunk(b"IEND", b"")


def big_text(n):
    word = "lorem ipsum dolor sit amet, consectetur adipiscing elit. "
    return (word * (n // len(word) + 1))[:n]


def claude_code(kind, n, records=1):
    def record(uuid, parent, rtype, message):
        return {"parentUuid": parent, "isSidechain": False, "userType": "external",
                "cwd": "/home/dev/app", "sessionId": SESSION, "version": "1.0.80",
                "type": rtype, "message": message, "uuid": uuid,
                "timestamp": "2025-06-01T10:00:00.000Z"}
    u1 = "aaaaaaaa-0000-4000-8000-000000000001"
    a2 = "aaaaaaaa-0000-4000-8000-000000000002"
    u3 = "aaaaaaaa-0000-4000-8000-000000000003"
    lines = [record(u1, None, "user", {"role": "user", "content": "go"})]
    if kind == "text":
        block = {"type": "text", "text": big_text(n)}
    elif kind == "tool_use":
        block = {"type": "tool_use", "id": "toolu_01", "name": "Write",
                 "input": {"file_path": "/tmp/x", "content": big_text(n)}}
    else:
        block = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"f": "x"}}
    parent = u1
    for i in range(records):
        uuid = a2 if i == 0 else "aaaaaaaa-0000-4000-8000-%012d" % (100 + i)
        lines.append(record(uuid, parent, "assistant",
                            {"id": "msg_1", "role": "assistant", "model": "claude-x",
                             "content": [block]}))
        parent = uuid
    a2 = parent
    if kind == "tool_result":
        lines.append(record(u3, a2, "user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": big_text(n)}]}))
    elif kind == "image":
        data = base64.b64encode(png_of_size(n * 3 // 4)).decode()
        lines.append(record(u3, a2, "user", {"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": data}}]}))
    return SESSION + ".jsonl", lines, {}


def codex(kind, n, records=1):
    sid = "0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7"
    line = lambda t, p: {"timestamp": "2025-10-29T00:59:38.317Z", "type": t, "payload": p}
    lines = [line("session_meta", {"id": sid, "cwd": "/home/dev/app"}),
             line("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": "go"}]})]
    if kind == "tool_result":
        lines.append(line("response_item", {"type": "function_call_output", "call_id": "c1",
                                            "output": big_text(n)}))
    elif kind == "tool_use":
        args = json.dumps({"command": ["bash", "-lc", "cat > x <<'EOF'\n" + big_text(n)]})
        lines.append(line("response_item", {"type": "function_call", "call_id": "c1",
                                            "name": "shell", "arguments": args}))
    elif kind == "image":
        data = base64.b64encode(png_of_size(n * 3 // 4)).decode()
        lines.append(line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "image_url": "data:image/png;base64," + data}]}))
    else:
        lines.append(line("response_item", {"type": "message", "role": "assistant",
                                            "content": [{"type": "output_text",
                                                         "text": big_text(n)}]}))
    return "rollout-2025-10-29T00-59-38-" + sid + ".jsonl", lines, {}


def acdc(kind, n, records=1):
    rec = lambda i, role, text: {"id": "1719500000000-%04d" % i,
                                 "session_id": "sess_1719500000000_f0e1d2",
                                 "timestamp": "2024-06-27T15:00:00Z", "role": role,
                                 "content": text}
    big = rec(2, "assistant", "done")
    files = {}
    if kind == "text":
        big["content"] = big_text(n)
    elif kind == "tool_use":  # an agent's blocks: what it ran
        big["agent_blocks"] = [{"type": "edit", "text": big_text(n)}]
    elif kind == "tool_result":
        big["edit_results"] = [{"file": "a.txt", "status": "applied", "output": big_text(n)}]
    else:
        big["image_refs"] = ["big.png"]
        files[".ac-dc/images/big.png"] = png_of_size(n * 3 // 4)
    return ".ac-dc/history.jsonl", [rec(1, "user", "go"), big], files


def pixir(kind, n, records=1):
    sid = "s-0001"
    ev = lambda seq, t, data: {"session_id": sid, "seq": seq, "ts": "2025-06-01T10:00:00Z",
                               "type": t, "id": "e%d" % seq, "data": data}
    lines = [ev(1, "user_message", {"text": "go"})]
    files = {}
    if kind == "text":
        lines.append(ev(2, "assistant_message", {"text": big_text(n)}))
    elif kind == "tool_use":
        lines.append(ev(2, "tool_call", {"call_id": "c1", "name": "write",
                                         "args": {"path": "x", "content": big_text(n)}}))
    elif kind == "tool_result":
        lines.append(ev(2, "tool_call", {"call_id": "c1", "name": "read", "args": {"p": "x"}}))
        lines.append(ev(3, "tool_result", {"call_id": "c1", "ok": True, "output": big_text(n)}))
    else:
        png = png_of_size(n * 3 // 4)
        sha = hashlib.sha256(png).hexdigest()
        files["sessions/%s/resources/r1/%s.png" % (sid, sha)] = png
        lines[0] = ev(1, "user_message", {"text": "look", "resources": [
            {"kind": "image", "resource_id": "r1", "content_sha256": sha, "extension": "png",
             "mime_type": "image/png", "name": "big.png"}]})
    return "sessions/%s.ndjson" % sid, lines, files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--kind", default="text", choices=["text", "tool_use", "tool_result", "image"])
    ap.add_argument("--format", default="claude-code", choices=["claude-code", "codex", "ac-dc", "pixir"])
    ap.add_argument("--records", type=int, default=1)
    ap.add_argument("--keep", help="write the input here and keep it")
    args = ap.parse_args()
    n = int(args.mb * 1024 * 1024)
    name, lines, files = {"claude-code": claude_code, "codex": codex, "ac-dc": acdc,
                          "pixir": pixir}[args.format](args.kind, n, args.records)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or tmp
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            for record in lines:
                f.write(json.dumps(record) + "\n")
        for rel, data in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "wb") as f:
                f.write(data)
        size = os.path.getsize(path)
        target = os.path.dirname(path) if args.format == "ac-dc" else path
        run = subprocess.run(["/usr/bin/time", "-v", args.binary, "--store",
                              os.path.join(tmp, "store"), "import", target,
                              "--format", args.format],
                             capture_output=True, text=True)
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)[1])
        wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", run.stderr)[1]
        print(json.dumps({"format": args.format, "kind": args.kind, "records": args.records,
                          "file_mib": round(size / 2**20, 1),
                          "max_rss_mib": round(rss / 1024, 1), "wall": wall,
                          "exit": run.returncode,
                          "summary": run.stdout.strip().splitlines()[:3]}))
        return 0 if run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
