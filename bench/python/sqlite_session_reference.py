"""What the OpenAI Agents SDK's SQLiteSession does, in plain sqlite3: the
baseline of bench_python.py. Written from reading the SDK's
src/agents/memory/sqlite_session.py (not copied, and not importable here:
the SDK is not installed): one sessions table and one messages table of
JSON text, WAL mode, a connection per thread behind a lock, each call run on
a worker thread with asyncio.to_thread, one commit per add_items (Python's
sqlite3 leaves synchronous at FULL, so a commit fsyncs the WAL)."""

import asyncio
import json
import sqlite3
import threading


class SQLiteSessionReference:
    def __init__(self, session_id, db_path):
        self.session_id = session_id
        self.db_path = str(db_path)
        self._local = threading.local()
        self._lock = threading.RLock()
        self._connections = []
        with self._lock:
            conn = sqlite3.connect(self.db_path, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("""CREATE TABLE IF NOT EXISTS agent_sessions (
                session_id TEXT PRIMARY KEY,
                created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)""")
            conn.execute("""CREATE TABLE IF NOT EXISTS agent_messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL,
                message_data TEXT NOT NULL,
                created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                FOREIGN KEY (session_id) REFERENCES agent_sessions (session_id) ON DELETE CASCADE)""")
            conn.execute("""CREATE INDEX IF NOT EXISTS idx_agent_messages_session_id
                ON agent_messages (session_id, id)""")
            conn.commit()
            conn.close()

    def _conn(self):
        if not hasattr(self._local, "connection"):
            conn = sqlite3.connect(self.db_path, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.connection = conn
            self._connections.append(conn)
        return self._local.connection

    async def add_items(self, items):
        if not items:
            return

        def work():
            with self._lock:
                conn = self._conn()
                conn.execute("INSERT OR IGNORE INTO agent_sessions (session_id) VALUES (?)", (self.session_id,))
                conn.executemany("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)",
                                 [(self.session_id, json.dumps(item)) for item in items])
                conn.execute("UPDATE agent_sessions SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?",
                             (self.session_id,))
                conn.commit()

        await asyncio.to_thread(work)

    async def get_items(self, limit=None):
        def work():
            with self._lock:
                conn = self._conn()
                if limit is None:
                    rows = conn.execute("SELECT message_data FROM agent_messages WHERE session_id = ? "
                                        "ORDER BY id ASC", (self.session_id,)).fetchall()
                else:
                    rows = list(reversed(conn.execute(
                        "SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                        (self.session_id, limit)).fetchall()))
                return [json.loads(r[0]) for r in rows]

        return await asyncio.to_thread(work)

    def close(self):
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            if hasattr(self._local, "connection"):
                del self._local.connection
