"""W1-W6 (shared/bench/WORKLOADS.md, data from gen.py) from Python: sessiondb
through the module, beside the OpenAI Agents SDK's SQLiteSession logic
(sqlite_session_reference.py) in the same run, on the same disk.

Peers:
  sessiondb-py      the module's Store (store.append / store.read)
  sessiondb-agents  sessiondb.agents.SessiondbSession, the SDK drop-in (add_items / get_items)
  sqlitesession     the SDK's SQLiteSession logic in plain sqlite3 (the baseline)

Both session peers run each call through asyncio.to_thread, as the SDK does,
and each append is durable (sessiondb: fsync before it returns; SQLite: WAL
with synchronous=FULL). One JSON object per workload and peer on stdout, then
`times_faster` lines: the baseline's time over the drop-in's.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_python.py --dir /tmp/pybench
    ... --workloads W1,W3 --scale 0.1     # a tenth of the messages, for a quick look
"""

import argparse
import asyncio
import json
import math
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402  (the reference data, shared/bench/gen.py)
from sqlite_session_reference import SQLiteSessionReference  # noqa: E402

import sessiondb  # noqa: E402
from sessiondb.agents import SessiondbSession  # noqa: E402


def percentile(sorted_ns, p):
    k = max(1, math.ceil(p * len(sorted_ns) / 100))
    return sorted_ns[k - 1] / 1000.0


def disk_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            fp = os.path.join(root, f)
            if os.path.isfile(fp) and not os.path.islink(fp):
                total += os.stat(fp).st_size
    return total


def report(peer, workload, name, per_call_ns, seconds, **extra):
    ns = sorted(per_call_ns)
    out = {"peer": peer, "workload": workload, "name": name, "n": len(ns), "seconds": round(seconds, 4),
           "ops_per_s": round(len(ns) / seconds, 1) if seconds else 0,
           "p50_us": round(percentile(ns, 50), 1), "p99_us": round(percentile(ns, 99), 1),
           "median_ms": round(percentile(ns, 50) / 1000, 3)}
    out.update(extra)
    print(json.dumps(out), flush=True)
    return out


def unsupported(peer, workload, name, reason):
    print(json.dumps({"peer": peer, "workload": workload, "name": name, "status": "unsupported",
                      "reason": reason}), flush=True)


class Data:
    def __init__(self, scale):
        self.w1 = list(gen.w1_messages())[: max(2, int(gen.W1_N * scale))]
        w2_sessions = max(2, int(gen.W2_SESSIONS * scale))
        self.w2 = [m for m in gen.w2_messages() if int(m[0][4:]) < w2_sessions]
        n5 = max(2, int(gen.W5_N * scale))
        self.w5 = [(sid, role, text, gen.data_uri(gen.png_image(i))) for sid, role, text, i in
                   list(gen.w5_messages())[:n5]]


def item_of(role, text):
    return {"role": role, "content": text}


def image_item(text, uri):
    return {"role": "user", "content": [{"type": "input_text", "text": text},
                                        {"type": "input_image", "image_url": uri, "detail": "auto"}]}


# ---- the session peers (the drop-in and the baseline) -------------------------

def session_factory(peer, root):
    if peer == "sqlitesession":
        os.makedirs(root, exist_ok=True)
        return lambda sid: SQLiteSessionReference(sid, os.path.join(root, "sessions.db"))
    return lambda sid: SessiondbSession(sid, root)


async def timed_appends(make, stream, to_item):
    per_call, sessions, current, sid_now = [], 0, None, None
    start = time.perf_counter()
    for sid, role, text, *rest in stream:
        if sid != sid_now:
            if current:
                current.close()
            current, sid_now = make(sid), sid
            sessions += 1
        item = to_item(role, text, *rest)
        t0 = time.perf_counter_ns()
        await current.add_items([item])
        per_call.append(time.perf_counter_ns() - t0)
    current.close()
    return per_call, time.perf_counter() - start, sessions


async def run_session_peer(peer, data, base, workloads, results):
    w1_dir, w2_dir, w5_dir = (os.path.join(base, peer, w) for w in ("w1", "w2", "w5"))
    if "W1" in workloads or "W3" in workloads:
        shutil.rmtree(w1_dir, ignore_errors=True)
        calls, secs, _ = await timed_appends(session_factory(peer, w1_dir), data.w1,
                                             lambda r, t: item_of(r, t))
        if "W1" in workloads:
            results[(peer, "W1")] = report(peer, "W1", "append_durable", calls, secs,
                                           bytes_on_disk=disk_bytes(w1_dir), durability="fsync per append")
    if "W3" in workloads:
        s = session_factory(peer, w1_dir)("w1-s0")
        expected = [item_of(r, t) for _, r, t in data.w1]
        calls = []
        start = time.perf_counter()
        for _ in range(20):
            t0 = time.perf_counter_ns()
            got = await s.get_items()
            calls.append(time.perf_counter_ns() - t0)
            assert got == expected, "W3: the loaded session differs from what was written"
        secs = time.perf_counter() - start
        s.close()
        results[(peer, "W3")] = report(peer, "W3", "load_session", calls, secs, messages=len(expected),
                                       bytes_on_disk=disk_bytes(w1_dir))
    if "W2" in workloads:
        shutil.rmtree(w2_dir, ignore_errors=True)
        calls, secs, sessions = await timed_appends(session_factory(peer, w2_dir), data.w2,
                                                    lambda r, t: item_of(r, t))
        results[(peer, "W2")] = report(peer, "W2", "append_many_sessions", calls, secs, sessions=sessions,
                                       bytes_on_disk=disk_bytes(w2_dir), durability="fsync per append")
    for w, name in (("W4", "list_sessions"), ("W6", "search")):
        if w in workloads and peer == "sqlitesession":
            unsupported(peer, w, name, "the SDK's Session has no list or search")
    if "W5" in workloads:
        shutil.rmtree(w5_dir, ignore_errors=True)
        calls, secs, _ = await timed_appends(session_factory(peer, w5_dir), data.w5,
                                             lambda r, t, uri: image_item(t, uri))
        t0 = time.perf_counter()
        s = session_factory(peer, w5_dir)("w5-s0")
        got = await s.get_items()
        read_secs = time.perf_counter() - t0
        s.close()
        assert got == [image_item(t, uri) for _, _, t, uri in data.w5], "W5: items differ"
        mib = len(data.w5) * gen.IMAGE_SIZE / (1 << 20)
        on_disk = disk_bytes(w5_dir)
        results[(peer, "W5")] = report(
            peer, "W5", "images", calls, secs, write_MiBps=round(mib / secs, 1), read_seconds=round(read_secs, 4),
            read_MiBps=round(mib / read_secs, 1), raw_image_bytes=len(data.w5) * gen.IMAGE_SIZE,
            bytes_on_disk=on_disk, disk_over_raw=round(on_disk / (len(data.w5) * gen.IMAGE_SIZE), 3),
            durability="fsync per append")


# ---- the module's own API -----------------------------------------------------

def run_module_peer(data, base, workloads, results):
    peer = "sessiondb-py"
    w1_dir, w2_dir, w5_dir = (os.path.join(base, peer, w) for w in ("w1", "w2", "w5"))

    def appends(location, stream, content):
        with sessiondb.open(location) as store:
            per_call, sid_now = [], None
            start = time.perf_counter()
            for sid, role, text, *rest in stream:
                if sid != sid_now:
                    store.create_session(sid)
                    sid_now = sid
                parts = content(text, *rest)
                t0 = time.perf_counter_ns()
                store.append(sid, role, parts)
                per_call.append(time.perf_counter_ns() - t0)
            return per_call, time.perf_counter() - start

    if "W1" in workloads or "W3" in workloads:
        shutil.rmtree(w1_dir, ignore_errors=True)
        calls, secs = appends(w1_dir, data.w1, lambda t: t)
        if "W1" in workloads:
            results[(peer, "W1")] = report(peer, "W1", "append_durable", calls, secs,
                                           bytes_on_disk=disk_bytes(w1_dir), durability="fsync per append")
    if "W3" in workloads:
        with sessiondb.open(w1_dir) as store:
            expected = [t for _, _, t in data.w1]
            calls = []
            start = time.perf_counter()
            for _ in range(20):
                t0 = time.perf_counter_ns()
                got = store.read("w1-s0")
                calls.append(time.perf_counter_ns() - t0)
                assert [m.text for m in got] == expected
            results[(peer, "W3")] = report(peer, "W3", "load_session", calls, time.perf_counter() - start,
                                           messages=len(expected))
    if any(w in workloads for w in ("W2", "W4", "W6")):
        shutil.rmtree(w2_dir, ignore_errors=True)
        calls, secs = appends(w2_dir, data.w2, lambda t: t)
        if "W2" in workloads:
            results[(peer, "W2")] = report(peer, "W2", "append_many_sessions", calls, secs,
                                           sessions=len({m[0] for m in data.w2}),
                                           bytes_on_disk=disk_bytes(w2_dir), durability="fsync per append")
        with sessiondb.open(w2_dir) as store:
            if "W4" in workloads:
                calls = []
                start = time.perf_counter()
                for _ in range(20):
                    t0 = time.perf_counter_ns()
                    page, _ = store.list_page(gen.LIST_LIMIT)
                    calls.append(time.perf_counter_ns() - t0)
                    assert len(page) == min(gen.LIST_LIMIT, len({m[0] for m in data.w2}))
                results[(peer, "W4")] = report(peer, "W4", "list_sessions", calls, time.perf_counter() - start,
                                               returned=len(page))
            if "W6" in workloads:
                calls = []
                start = time.perf_counter()
                for _ in range(20):
                    t0 = time.perf_counter_ns()
                    r = store.search(gen.SEARCH_QUERY, mode="keyword", limit=1000)
                    calls.append(time.perf_counter_ns() - t0)
                results[(peer, "W6")] = report(peer, "W6", "search", calls, time.perf_counter() - start,
                                               query=gen.SEARCH_QUERY, hits=len(r["hits"]),
                                               matches="BM25 over words (both terms, any order)")
    if "W5" in workloads:
        shutil.rmtree(w5_dir, ignore_errors=True)
        calls, secs = appends(w5_dir, data.w5, lambda t, uri: [t, sessiondb.image(uri)])
        t0 = time.perf_counter()
        with sessiondb.open(w5_dir) as store:
            msgs = store.read("w5-s0")
            uris = [store.data_uri(m.parts[1].resource) for m in msgs]
        read_secs = time.perf_counter() - t0
        assert uris == [uri for *_, uri in data.w5] and [m.text for m in msgs] == [t for _, _, t, _ in data.w5]
        mib = len(data.w5) * gen.IMAGE_SIZE / (1 << 20)
        on_disk = disk_bytes(w5_dir)
        results[(peer, "W5")] = report(
            peer, "W5", "images", calls, secs, write_MiBps=round(mib / secs, 1), read_seconds=round(read_secs, 4),
            read_MiBps=round(mib / read_secs, 1), raw_image_bytes=len(data.w5) * gen.IMAGE_SIZE,
            bytes_on_disk=on_disk, disk_over_raw=round(on_disk / (len(data.w5) * gen.IMAGE_SIZE), 3),
            durability="fsync per append")


def fdatasync_floor(base, n=300):
    """The disk's floor for a durable append, in the same run: 4 KiB written
    at increasing offsets, each followed by fdatasync (as sessiondb_bench's
    fdatasync_4k measures it)."""
    path = os.path.join(base, "floor.bin")
    block = os.urandom(4096)
    per_call = []
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        for i in range(n):
            t0 = time.perf_counter_ns()
            os.pwrite(fd, block, i * 4096)
            os.fdatasync(fd)
            per_call.append(time.perf_counter_ns() - t0)
    finally:
        os.close(fd)
        os.unlink(path)
    ns = sorted(per_call)
    return {"n": n, "p50_us": round(percentile(ns, 50), 1), "p99_us": round(percentile(ns, 99), 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="where the stores go (wiped per workload)")
    ap.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6")
    ap.add_argument("--peers", default="sessiondb-py,sessiondb-agents,sqlitesession")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each workload's messages")
    args = ap.parse_args()
    workloads = set(args.workloads.split(","))
    peers = args.peers.split(",")
    data = Data(args.scale)
    os.makedirs(args.dir, exist_ok=True)
    floor = fdatasync_floor(args.dir)
    results = {}
    # The peers take turns per group of workloads (a group shares its store),
    # so that a slow stretch of a shared disk does not fall on one peer only.
    for group in (["W1", "W3"], ["W2", "W4", "W6"], ["W5"]):
        chosen = workloads.intersection(group)
        if not chosen:
            continue
        for peer in peers:
            print(f"bench_python: {peer} {','.join(sorted(chosen))}", file=sys.stderr, flush=True)
            if peer == "sessiondb-py":
                run_module_peer(data, args.dir, chosen, results)
            else:
                asyncio.run(run_session_peer(peer, data, args.dir, chosen, results))
    print(json.dumps({"peer": "floor", "name": "fdatasync_4k", "n": floor["n"],
                      "p50_us": floor["p50_us"], "p99_us": floor["p99_us"],
                      "note": "one durable append costs at least one of these"}), flush=True)
    # How many times faster the drop-in is than the SDK's SQLiteSession.
    for w, key in (("W1", "seconds"), ("W2", "seconds"), ("W3", "median_ms"), ("W5", "seconds"),
                   ("W5", "read_seconds")):
        ours, base = results.get(("sessiondb-agents", w)), results.get(("sqlitesession", w))
        if ours and base and ours[key]:
            print(json.dumps({"workload": w, "figure": key, "sqlitesession": base[key],
                              "sessiondb-agents": ours[key], "times_faster": round(base[key] / ours[key], 2)}),
                  flush=True)


if __name__ == "__main__":
    main()
