#!/usr/bin/env python3
"""Live events over SSE, measured against a real `sessiondb serve` binary.

Starts BINARY on a free loopback port over a fresh store, opens --streams
event streams on one session, then appends --messages messages one after
another and times each from the POST until every stream has its event:
p50/p99 of that delivery latency, and appends per second.

Usage: sse_latency.py BINARY [--streams 16] [--messages 300]
(The C++ bench measures appends and reads in-process; this one runs the
binary so that two builds, e.g. before and after a change, compare alike.)
"""
import argparse, http.client, json, re, socket, subprocess, tempfile, threading, time

_connection = None


def post(port, path, body):
    """POSTs JSON over one kept-alive connection, as an app would; the status."""
    global _connection
    if _connection is None:
        _connection = http.client.HTTPConnection("127.0.0.1", port)
        _connection.connect()
        _connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    _connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    answer = _connection.getresponse()
    answer.read()
    return answer.status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--messages", type=int, default=300)
    a = ap.parse_args()
    store = tempfile.mkdtemp(prefix="sse-bench-")
    server = subprocess.Popen([a.binary, "--store", store + "/s", "serve", "--port", "0",
                               "--max-streams", str(a.streams + 1)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(re.search(r":(\d+)/", server.stdout.readline()).group(1))
    try:
        assert post(port, "/v1/sessions", {"id": "live"}) == 201
        seen = [0] * a.streams  # the last seq each stream received
        cv = threading.Condition()

        def reader(i):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /v1/sessions/live/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      b"Accept: text/event-stream\r\n\r\n")
            buf = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return
                buf += chunk
                for m in re.finditer(rb"\nid: (\d+)\n", buf):
                    with cv:
                        seen[i] = max(seen[i], int(m.group(1)))
                        cv.notify_all()
                buf = buf[-64:]

        for i in range(a.streams):
            threading.Thread(target=reader, args=(i,), daemon=True).start()
        time.sleep(0.5)
        latencies = []
        start = time.perf_counter()
        msg = {"role": "user", "parts": [{"type": "text", "text": "hello over the stream"}]}
        for n in range(1, a.messages + 1):
            t0 = time.perf_counter()
            assert post(port, "/v1/sessions/live/messages", msg) == 201
            with cv:
                cv.wait_for(lambda: min(seen, default=n) >= n, timeout=30)
            latencies.append((time.perf_counter() - t0) * 1000)
        elapsed = time.perf_counter() - start
        latencies.sort()
        print(f"sse: {a.streams} streams, {a.messages} appends: "
              f"{a.messages / elapsed:.0f} appends/s, delivered to all: "
              f"p50 {latencies[len(latencies) // 2]:.2f} ms, "
              f"p99 {latencies[int(len(latencies) * 0.99) - 1]:.2f} ms")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
