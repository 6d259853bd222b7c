// The stores bench_node.mjs compares, behind one small shape. Each peer is
// { name, durability, mapping, open(dir) }; open gives a handle with
//   begin(sid)            a session starts (its time counts in the phase, not per call)
//   append(sid, role, text, uri?)   one message; the call that is timed
//   end(sid)              the session's handle is let go
//   load(sid)             everything needed to use the session (images as data URIs)
//   rows(loaded)          -> [{ role, text, uri }], for the checks (not timed)
//   list(limit), search(query)     only where the peer has them
//   close()
// A peer whose package does not load is { name, failed: reason }.
//
// The npm packages are bench/node/node_modules (`npm ci` here). The sessiondb
// package (bindings/node) is CommonJS and require()s its LangGraph peer
// dependency itself: NODE_PATH points its require() at this folder's copy,
// as tests/node does.

import fs from "node:fs";
import { createRequire, Module } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../..");
const modules = path.join(here, "node_modules");
process.env.NODE_PATH = [modules, process.env.NODE_PATH].filter(Boolean).join(path.delimiter);
Module._initPaths();  // NODE_PATH is read once at start-up; read it again
const require = createRequire(import.meta.url);

const packageDir = path.join(repoRoot, "bindings/node");
const sessiondb = require(packageDir);

/** What each peer keeps in one item / write, the same objects for all. */
const itemOf = (role, text) => ({ role, content: text });
const imageItemOf = (text, uri) => ({
  role: "user",
  content: [{ type: "input_text", text }, { type: "input_image", image: uri, detail: "auto" }],
});
const withImage = (role, text, uri) => (uri === undefined ? itemOf(role, text) : imageItemOf(text, uri));

// An item (either shape above) as a row for the checks.
function rowOfItem(item) {
  if (typeof item.content === "string") return { role: item.role, text: item.content };
  const image = item.content.find((c) => c.type === "input_image");
  return { role: item.role, text: item.content.find((c) => c.type === "input_text").text,
           uri: image && image.image };
}

// Loads what a peer needs, or says why it cannot.
function loading(name, load) {
  try {
    return load();
  } catch (e) {
    return { name, failed: `${e.code ? e.code + ": " : ""}${e.message.split("\n")[0]}` };
  }
}

// ---- sessiondb through the package's Store ---------------------------------

const sessiondbNode = {
  name: "sessiondb-node",
  durability: "fsync per append (Store.open default: durable)",
  mapping: "store.append(sid, {role, content: [text, image(dataUri)]}); store.read; " +
           "store.listSessions; store.search keyword",
  async open(dir) {
    const store = await sessiondb.Store.open(dir);
    return {
      begin: (sid) => store.createSession({ id: sid }),
      append: (sid, role, text, uri) =>
        store.append(sid, { role, content: uri === undefined ? text : [text, sessiondb.image(uri)] }),
      end: async () => {},
      async load(sid) {
        const messages = await store.read(sid);
        const uris = await Promise.all(messages.map((m) => {
          const image = m.parts.find((p) => p.type === "image");
          return image ? store.dataUri(image.resource) : undefined;
        }));
        return { messages, uris };
      },
      rows: ({ messages, uris }) => messages.map((m, i) => ({
        role: m.role, text: m.parts.filter((p) => p.type === "text").map((p) => p.text).join(""),
        uri: uris[i] })),
      list: async (limit) => (await store.listSessions({ limit })).sessions.map((s) => s.id),
      // The phrase, as the native bench asks it (sessiondb_bench W6).
      search: async (query) => (await store.search(`"${query}"`, { mode: "keyword", limit: 1000 })).hits,
      searchMatches: "the phrase as words (FTS5, BM25-ranked, snippets), keyword mode, limit 1000",
      close: () => store.close(),
    };
  },
};

// ---- the OpenAI Agents SDK's Session: our drop-in and its MemorySession ------

// A peer over the SDK's Session interface (addItems / getItems); `make(sid,
// store)` gives the session object, `openStore(dir)` what they share.
function sessionPeer({ name, durability, mapping, make, openStore, closeStore }) {
  return {
    name, durability, mapping,
    async open(dir) {
      const store = await openStore(dir);
      const sessions = new Map();
      const sessionFor = (sid) => {
        if (!sessions.has(sid)) sessions.set(sid, make(sid, store));
        return sessions.get(sid);
      };
      return {
        begin: async (sid) => { sessionFor(sid); },
        append: (sid, role, text, uri) => sessionFor(sid).addItems([withImage(role, text, uri)]),
        async end(sid) {
          const s = sessions.get(sid);
          sessions.delete(sid);
          if (s && s.close) await s.close();
        },
        load: (sid) => sessionFor(sid).getItems(),
        rows: (items) => items.map(rowOfItem),
        async close() {
          for (const s of sessions.values()) if (s.close) await s.close();
          await closeStore(store);
        },
      };
    },
  };
}

const sessiondbAgents = loading("sessiondb-agents", () => {
  const { SessiondbSession } = require(path.join(packageDir, "lib/agents.js"));
  return sessionPeer({
    name: "sessiondb-agents",
    durability: "fsync per append (addItems: one durable transaction)",
    mapping: "new SessiondbSession({sessionId, store}) per session on one shared Store; " +
             "addItems([item]); getItems()",
    make: (sid, store) => new SessiondbSession({ sessionId: sid, store }),
    openStore: (dir) => sessiondb.Store.open(dir),
    closeStore: (store) => store.close(),
  });
});

// MemorySession keeps its items in the process: "closing" keeps them, so the
// W3/W5 reads find them; nothing reaches the disk.
const memoryStores = new Map();
const memorySession = loading("memorysession", () => {
  const { MemorySession } = require("@openai/agents");
  return sessionPeer({
    name: "memorysession",
    durability: "none (in memory)",
    mapping: "new MemorySession({sessionId}) per session; addItems([item]); getItems(); " +
             "W5's reopen reads the same objects",
    make: (sid, sessions) => {
      if (!sessions.has(sid)) sessions.set(sid, new MemorySession({ sessionId: sid }));
      return sessions.get(sid);
    },
    openStore: async (dir) => {
      if (!memoryStores.has(dir)) memoryStores.set(dir, new Map());
      return memoryStores.get(dir);
    },
    closeStore: async () => {},
  });
});

/** Forgets a MemorySession "store" (the phase that made it is over). */
export const dropMemory = (dir) => memoryStores.delete(dir);

// ---- LangGraph checkpointers ------------------------------------------------

// A thread per session: one checkpoint put when the session begins, then each
// message one putWrites (channel "messages", task id = its zero-padded index)
// on that checkpoint; a load is getTuple(thread), the messages its
// pendingWrites. The cheapest way a checkpointer can keep a chat (a graph's
// own checkpoint per turn would store the whole list again each time).
const LANGGRAPH_MAPPING = "thread = session; one put() of an empty checkpoint when the session " +
  "begins, then per message putWrites(config, [['messages', item]], taskId = index); " +
  "load = getTuple({thread_id}).pendingWrites";

function checkpointPeer({ name, durability, openSaver, closeSaver }) {
  const { emptyCheckpoint } = require("@langchain/langgraph-checkpoint");
  return {
    name, durability, mapping: LANGGRAPH_MAPPING,
    async open(dir) {
      const saver = await openSaver(dir);
      const threads = new Map();  // sid -> { config, next }
      return {
        saver,
        async begin(sid) {
          const config = await saver.put({ configurable: { thread_id: sid, checkpoint_ns: "" } },
                                         emptyCheckpoint(), { source: "input", step: -1, parents: {} }, {});
          threads.set(sid, { config, next: 0 });
        },
        append(sid, role, text, uri) {
          const t = threads.get(sid);
          const taskId = String(t.next++).padStart(8, "0");
          return saver.putWrites(t.config, [["messages", withImage(role, text, uri)]], taskId);
        },
        end: async (sid) => { threads.delete(sid); },
        load: (sid) => saver.getTuple({ configurable: { thread_id: sid, checkpoint_ns: "" } }),
        rows: (tuple) => tuple.pendingWrites.map(([, , value]) => rowOfItem(value)),
        close: () => closeSaver(saver),
      };
    },
  };
}

// LangGraph's SqliteSaver as it comes, and the same with synchronous=FULL set
// on its connection: better-sqlite3 builds SQLite with WAL's default at
// NORMAL, where a commit is not fsynced (a power loss can take the last ones).
const sqlitePeer = (name, synchronous) => loading(name, () => {
  const { SqliteSaver } = require("@langchain/langgraph-checkpoint-sqlite");
  const peer = checkpointPeer({
    name,
    durability: "(read from the connection when it opens)",
    openSaver: async (dir) => {
      fs.mkdirSync(dir, { recursive: true });
      const saver = SqliteSaver.fromConnString(path.join(dir, "checkpoints.db"));
      saver.setup();
      if (synchronous) saver.db.pragma(`synchronous=${synchronous}`);
      // What one write costs in durability, as the connection is set up.
      const mode = saver.db.pragma("journal_mode", { simple: true });
      const sync = ["OFF", "NORMAL", "FULL", "EXTRA"][saver.db.pragma("synchronous", { simple: true })];
      peer.durability = `journal_mode=${mode}, synchronous=${sync}` +
        (mode !== "wal" ? "" : sync === "NORMAL" ? ": no fsync per putWrites (the WAL is synced at checkpoints)"
                                                 : ": fsync of the WAL per putWrites") +
        (synchronous ? " (set by the bench)" : " (the saver's default)");
      return saver;
    },
    closeSaver: async (saver) => saver.db.close(),
  });
  return peer;
});
const langgraphSqlite = sqlitePeer("langgraph-sqlite");
const langgraphSqliteFull = sqlitePeer("langgraph-sqlite-full", "FULL");

const sessiondbLanggraph = loading("sessiondb-langgraph", () => {
  const { SessiondbSaver } = require(path.join(packageDir, "lib/langgraph.js"));
  return checkpointPeer({
    name: "sessiondb-langgraph",
    durability: "fsync per putWrites (one durable append)",
    openSaver: async (dir) => new SessiondbSaver(await sessiondb.Store.open(dir)),
    closeSaver: async (saver) => {
      const store = await saver.getStore();
      await saver.close();
      await store.close();
    },
  });
});

export const PEERS = [sessiondbNode, sessiondbAgents, memorySession, langgraphSqlite, langgraphSqliteFull,
                      sessiondbLanggraph];
