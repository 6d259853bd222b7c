"""The GIL is released inside engine calls: a call blocked on the disk does
not stop the other threads' Python code."""

import sqlite3
import threading

import sessiondb


def test_a_blocked_append_lets_other_threads_run_python(tmp_path):
    location = tmp_path / "store"
    with sessiondb.open(location, busy_timeout_ms=20_000) as store:
        sid = store.create_session("s").id
        # Another connection holds the database's write lock: the append below
        # waits for it (up to busy_timeout_ms) inside the engine.
        holder = sqlite3.connect(location / "sessiondb.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        entering = threading.Event()
        outcome = {}

        def append():
            entering.set()
            try:
                outcome["seq"] = store.append(sid, "user", "written once the lock is free").seq
            except sessiondb.Error as e:  # Busy if it waited the whole timeout
                outcome["error"] = e

        worker = threading.Thread(target=append)
        worker.start()
        assert entering.wait(10)
        # Let the worker get into the engine; with the GIL held there, nothing
        # below could run until its append gave up (Busy) 20 s later.
        worker.join(0.3)
        counted = sum(i for i in range(200_000))  # Python bytecode, needs the GIL
        assert counted == 199_999 * 200_000 // 2
        assert worker.is_alive(), "the append returned while the lock was still held"
        holder.execute("COMMIT")
        holder.close()
        worker.join(30)
        assert outcome == {"seq": 1}
        assert [m.text for m in store.read(sid)] == ["written once the lock is free"]


def test_threads_appending_to_one_store_all_land(tmp_path):
    with sessiondb.open(tmp_path / "store", durability="process-crash-safe") as store:
        ids = [store.create_session(f"t{i}").id for i in range(4)]

        def work(sid):
            for j in range(25):
                store.append(sid, "user", f"{sid}-{j}")

        threads = [threading.Thread(target=work, args=(sid,)) for sid in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for sid in ids:
            assert [m.text for m in store.read(sid)] == [f"{sid}-{j}" for j in range(25)]
