// A LangGraph checkpoint saver on sessiondb, with time travel as a fork (the
// Node twin of python/sessiondb/langgraph.py).
//
//   const { SessiondbSaver } = require("sessiondb/langgraph");
//   const checkpointer = new SessiondbSaver("graphs");   // was new MemorySaver()
//   const graph = builder.compile({ checkpointer });
//
// A thread (thread_id and checkpoint_ns) is a sessiondb session, each
// checkpoint and each task's pending writes one message of it, a checkpoint's
// parent the checkpoint before it. Resuming from an older checkpoint (time
// travel, updateState on a past state) branches: the new checkpoint goes to
// a fork of the session at its parent's seq, made in constant time (nothing
// is copied; the fork reads the parent's events). A checkpoint stores the
// values of the channels that changed (newVersions) only; _langgraph_index.js
// puts the others back from its ancestors.
//
// Each saver keeps an index of the threads it has read and brings it up to
// date from the store before each call, so savers in other processes on the
// same store see each other's checkpoints; a put whose parent is no longer its
// branch's last checkpoint goes to a fork.
//
// @langchain/langgraph-checkpoint is a peer dependency: the saver extends
// the copy the application's require() finds.
"use strict";

const { isDeepStrictEqual } = require("node:util");
const { BaseCheckpointSaver, TASKS, maxChannelVersion } = require("@langchain/langgraph-checkpoint");
const { storeSource } = require("./_store_source.js");
const { ThreadIndex, RECORD_KEY } = require("./_langgraph_index.js");

const isNotFound = (e) => e && e.code === "not_found";

function rootSessionId(threadId, ns) {
  const digest = require("node:crypto").createHash("sha256")
    .update(`${threadId}\0${ns}`, "utf8").digest("hex").slice(0, 40);
  return `lg-${digest}`;
}

function configOf(threadId, ns, checkpointId) {
  return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId } };
}

// The thread id, namespace and checkpoint id a config names; fails (as
// LangGraph's savers do) when the config has no thread_id.
function threadOf(config, what) {
  const conf = config && config.configurable;
  if (!conf || conf.thread_id === undefined || conf.thread_id === null) {
    throw new Error(`Failed to ${what}: the config has no "thread_id" in its "configurable"; ` +
                    "pass { configurable: { thread_id } } so the saver knows which thread it is");
  }
  return { threadId: String(conf.thread_id), ns: conf.checkpoint_ns ?? "",
           checkpointId: conf.checkpoint_id };
}

class SessiondbSaver extends BaseCheckpointSaver {
  /**
   * store: a sessiondb Store (shared, left open), a directory or postgresql://
   * URI (opened on first use), or nothing: a temporary store of the saver's
   * own, deleted by close() or at exit (MemorySaver's in-memory default).
   * options.serde: LangGraph's SerializerProtocol (default: its JsonPlusSerializer);
   * options.openOptions: Store.open's options when the saver opens the store.
   */
  constructor(store, options = {}) {
    super(options.serde);
    this._source = storeSource(store, options.openOptions);
    this._threads = new Map();  // JSON [thread, ns] -> ThreadIndex
    this._queue = Promise.resolve();
  }

  /** The Store the checkpoints are kept in. */
  getStore() {
    return this._source.get();
  }

  /** Closes the store if the saver opened it (a Store given to it stays open). */
  async close() {
    await this._locked(async () => {
      this._threads.clear();
      await this._source.release();
    });
  }

  // ---- BaseCheckpointSaver ------------------------------------------------

  /** Saves a checkpoint as the child of config's checkpoint_id (if any). */
  async put(config, checkpoint, metadata, newVersions) {
    const { threadId, ns, checkpointId: parentId } = threadOf(config, "put checkpoint");
    const { channel_values: values = {}, ...rest } = checkpoint;
    const stored = {};
    for (const [channel, version] of Object.entries(newVersions || {})) {
      stored[channel] = [String(version), Object.prototype.hasOwnProperty.call(values, channel) &&
        values[channel] !== undefined ? await this._pack(values[channel]) : null];
    }
    const record = { type: "checkpoint", id: checkpoint.id, parent_id: parentId ?? null,
                     checkpoint: await this._pack(rest), values: stored,
                     metadata: await this._pack(metadata) };
    await this._locked(async () => {
      const store = await this._source.get();
      const t = await this._thread(store, threadId, ns);
      const sessionId = await this._branchFor(store, t, parentId);
      const parent = parentId ? t.checkpoints.get(parentId) : undefined;
      const seq = await this._append(store, t, sessionId, record, `checkpoint ${checkpoint.id}`);
      if (parent && parent.session === sessionId &&
          await this._landedBetween(store, sessionId, parent.seq, seq)) {
        // Another saver put a child of the same parent on this branch between
        // our read and our append: ours goes to a fork at the parent, and that
        // copy is the one every saver reads.
        const fork = await store.fork(sessionId, { atSeq: parent.seq,
                                                   metadata: this._branchMetadata(threadId, ns) });
        t.branches.push(fork.id);
        t.readTo.set(fork.id, parent.seq);
        await this._append(store, t, fork.id, { ...record, relocated: true },
                           `checkpoint ${checkpoint.id}`);
      }
    });
    return configOf(threadId, ns, checkpoint.id);
  }

  /** Saves a task's pending writes for config's checkpoint. */
  async putWrites(config, writes, taskId, taskPath = "") {
    const { threadId, ns, checkpointId } = threadOf(config, "put writes");
    if (!checkpointId) {
      throw new Error('Failed to put writes: the config has no "checkpoint_id" in its "configurable"');
    }
    const packed = [];
    for (const [channel, value] of writes) packed.push([channel, await this._pack(value)]);
    const record = { type: "writes", checkpoint_id: checkpointId, task_id: taskId,
                     task_path: taskPath || "", writes: packed };
    await this._locked(async () => {
      const store = await this._source.get();
      const t = await this._thread(store, threadId, ns);
      const owner = t.checkpoints.get(checkpointId);
      // Writes for a checkpoint this thread does not hold (yet) go to its first branch.
      const sessionId = owner ? owner.session : (t.branches[0] ?? await this._branchFor(store, t, null));
      await this._append(store, t, sessionId, record, `writes of ${taskId}`);
    });
  }

  /** The checkpoint config names (its checkpoint_id), else the thread's latest; undefined if none. */
  async getTuple(config) {
    const conf = (config && config.configurable) || {};
    if (conf.thread_id === undefined || conf.thread_id === null) return undefined;
    const threadId = String(conf.thread_id);
    const ns = conf.checkpoint_ns ?? "";
    return this._locked(async () => {
      const store = await this._source.get();
      const t = await this._thread(store, threadId, ns);
      const record = conf.checkpoint_id ? t.checkpoints.get(conf.checkpoint_id) : t.latest();
      return record ? this._tuple(t, record) : undefined;
    });
  }

  /**
   * Checkpoints newest first (by checkpoint id): of config's thread (and
   * namespace, and checkpoint id, when given), or of every thread; only
   * those whose metadata has filter's values, older than `before`, at most `limit`.
   */
  async *list(config, options = {}) {
    const { limit, before, filter } = options || {};
    const conf = (config && config.configurable) || {};
    const tuples = await this._locked(async () => {
      const store = await this._source.get();
      const threads = await this._threadsFor(store, conf);
      const beforeId = before && before.configurable && before.configurable.checkpoint_id;
      const found = [];
      for (const t of threads) {
        for (const record of t.checkpoints.values()) {
          if (conf.checkpoint_id && record.id !== conf.checkpoint_id) continue;
          if (beforeId && !(record.id < beforeId)) continue;
          found.push([t, record]);
        }
      }
      found.sort((a, b) => (a[1].id < b[1].id ? 1 : a[1].id > b[1].id ? -1 : 0));
      const out = [];
      for (const [t, record] of found) {
        if (limit !== undefined && limit !== null && out.length >= limit) break;
        if (filter && Object.keys(filter).length) {
          const metadata = await this._unpack(record.metadata);
          if (!Object.entries(filter).every(([k, v]) => isDeepStrictEqual(metadata?.[k], v))) continue;
        }
        out.push(await this._tuple(t, record));
      }
      return out;
    });
    yield* tuples;
  }

  /**
   * Deletes every checkpoint and write of the thread (all namespaces): its
   * sessions go to the store's trash (Store.trashSession), where no saver
   * sees them, until Store.restoreFromTrash brings them back or the trash is
   * emptied (Store.emptyTrash, the retention policy).
   */
  async deleteThread(threadId) {
    const id = String(threadId);
    await this._locked(async () => {
      const store = await this._source.get();
      const sessions = (await this._allBranchSessions(store)).filter((s) => s.metadata.thread_id === id);
      // Forks before the sessions they fork, deepest first.
      const byId = new Map(sessions.map((s) => [s.id, s]));
      const depth = (s) => (s.parent_id && byId.has(s.parent_id) ? 1 + depth(byId.get(s.parent_id)) : 0);
      sessions.sort((a, b) => depth(b) - depth(a));
      for (const s of sessions) {
        try {
          await store.trashSession(s.id);
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
      for (const key of [...this._threads.keys()]) {
        if (JSON.parse(key)[0] === id) this._threads.delete(key);
      }
    });
  }

  // ---- the index of a thread ----------------------------------------------

  // Runs `work` after every call before it: the index is one saver's, and
  // its calls interleave at each await.
  _locked(work) {
    const run = this._queue.then(work, work);
    this._queue = run.catch(() => {});
    return run;
  }

  async _pack(value) {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return [type, Buffer.from(bytes).toString("base64")];
  }

  async _unpack(packed) {
    return this.serde.loadsTyped(packed[0], new Uint8Array(Buffer.from(packed[1], "base64")));
  }

  _branchMetadata(threadId, ns) {
    return { langgraph_thread: rootSessionId(threadId, ns), thread_id: threadId, checkpoint_ns: ns };
  }

  async _listAll(store, options) {
    const out = [];
    let cursor;
    do {
      const page = await store.listSessions({ ...options, archived: "all", cursor });
      out.push(...page.sessions);
      cursor = page.next_cursor || undefined;
    } while (cursor);
    return out;
  }

  async _allBranchSessions(store) {
    const out = [];
    for await (const s of store.sessions({ archived: "all" })) {
      if (s.metadata && typeof s.metadata.langgraph_thread === "string") out.push(s);
    }
    return out;
  }

  // The indexes of the threads a list() config names: one (thread and
  // namespace), every namespace of a thread, or every thread.
  async _threadsFor(store, conf) {
    const threadId = conf.thread_id === undefined || conf.thread_id === null ? undefined : String(conf.thread_id);
    if (threadId !== undefined && conf.checkpoint_ns !== undefined) {
      return [await this._thread(store, threadId, conf.checkpoint_ns)];
    }
    const groups = new Map();  // JSON [thread, ns] -> its branch sessions
    for (const s of await this._allBranchSessions(store)) {
      if (threadId !== undefined && s.metadata.thread_id !== threadId) continue;
      if (conf.checkpoint_ns !== undefined && s.metadata.checkpoint_ns !== conf.checkpoint_ns) continue;
      const key = JSON.stringify([s.metadata.thread_id, s.metadata.checkpoint_ns ?? ""]);
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(s);
    }
    const out = [];
    for (const [key, sessions] of groups) {
      const [t, ns] = JSON.parse(key);
      out.push(await this._thread(store, t, ns, sessions));
    }
    return out;
  }

  /**
   * The thread's index, brought up to date with the store: branches made and
   * records written since the last call, by any saver. `sessions`: the
   * thread's branch sessions when the caller has just listed them.
   */
  async _thread(store, threadId, ns, sessions) {
    const key = JSON.stringify([threadId, ns]);
    const branches = (sessions || await this._listAll(store, {
      metadataKey: "langgraph_thread", metadataValue: rootSessionId(threadId, ns) }))
      .slice().sort((a, b) => a.created_ms - b.created_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    let t = this._threads.get(key);
    const listed = new Set(branches.map((s) => s.id));
    if (t && !t.branches.every((id) => listed.has(id))) t = undefined;  // a branch went: read it all again
    if (!t) {
      t = new ThreadIndex(threadId, ns);
      this._threads.set(key, t);
    }
    for (const s of branches) if (!t.branches.includes(s.id)) t.branches.push(s.id);
    const own = new Set(t.branches);
    for (const s of branches) {
      let done = t.readTo.get(s.id) || 0;
      while (s.last_seq > done) {
        const events = await store.readEvents(s.id, { fromSeq: done + 1 });
        if (events.length === 0) break;
        for (const event of events) {
          // A branch's own events; those it inherits from its parent branch
          // are learned from the parent itself.
          if (event.type === "message" && (event.session_id === s.id || !own.has(event.session_id))) {
            t.learn(s.id, event.seq, event.message.metadata && event.message.metadata[RECORD_KEY]);
          }
          done = Math.max(done, event.seq);
        }
      }
      t.readTo.set(s.id, Math.max(done, s.last_seq));
    }
    return t;
  }

  async _append(store, t, sessionId, record, summary) {
    const { seq } = await store.append(sessionId, {
      role: "assistant", content: [{ type: "text", text: summary }], metadata: { [RECORD_KEY]: record } });
    t.learn(sessionId, seq, record);
    if ((t.readTo.get(sessionId) || 0) === seq - 1) t.readTo.set(sessionId, seq);  // nothing landed between
    return seq;
  }

  // Whether a checkpoint of another put landed in the branch between two seqs.
  async _landedBetween(store, sessionId, afterSeq, beforeSeq) {
    if (beforeSeq <= afterSeq + 1) return false;
    const events = await store.readEvents(sessionId, { fromSeq: afterSeq + 1, limit: beforeSeq - afterSeq - 1 });
    return events.some((e) => e.type === "message" && e.session_id === sessionId &&
                              e.message.metadata && e.message.metadata[RECORD_KEY] &&
                              e.message.metadata[RECORD_KEY].type === "checkpoint");
  }

  /**
   * The session the child of `parentId` goes to: the parent's own session
   * while the parent is its last checkpoint, else a fork of it at the parent
   * (constant time). With no (known) parent: the thread's first session, or a
   * new branch when the thread already has checkpoints (a new root).
   */
  async _branchFor(store, t, parentId) {
    const metadata = this._branchMetadata(t.threadId, t.ns);
    const parent = parentId ? t.checkpoints.get(parentId) : undefined;
    if (!parent) {
      if (t.branches.length === 0) {
        const root = rootSessionId(t.threadId, t.ns);
        let id = root;
        try {
          await store.createSession({ id: root, title: `LangGraph thread ${t.threadId}`, metadata });
        } catch (e) {
          if (!(e && e.code === "already_exists")) throw e;
          // Another saver made it since our read, or it is in the trash
          // (deleteThread): then the thread starts again in a new session.
          const listed = await this._listAll(store, { metadataKey: "langgraph_thread", metadataValue: root });
          if (!listed.some((s) => s.id === root)) {
            id = (await store.createSession({ title: `LangGraph thread ${t.threadId}`, metadata })).id;
          }
        }
        t.branches.push(id);
        return id;
      }
      if (t.checkpoints.size === 0) return t.branches[0];
      const made = await store.createSession({ title: `LangGraph thread ${t.threadId}`, metadata });
      t.branches.push(made.id);
      return made.id;
    }
    if (t.tip.get(parent.session) === parent.seq) return parent.session;
    const fork = await store.fork(parent.session, { atSeq: parent.seq, metadata });
    t.branches.push(fork.id);
    t.tip.set(fork.id, parent.seq);
    t.readTo.set(fork.id, parent.seq);
    return fork.id;
  }

  // The CheckpointTuple of a record, its channel values and writes read back.
  async _tuple(t, record) {
    const checkpoint = await this._unpack(record.checkpoint);
    const values = {};
    for (const [channel, packed] of t.packedValues(record, checkpoint.channel_versions)) {
      values[channel] = await this._unpack(packed);
    }
    checkpoint.channel_values = values;
    const pendingWrites = [];
    for (const w of t.orderedWrites(record.id)) {
      pendingWrites.push([w.taskId, w.channel, await this._unpack(w.packed)]);
    }
    if (checkpoint.v < 4 && record.parent_id) {
      // Checkpoints before format 4 kept pending sends as writes of the parent.
      const sends = [];
      for (const w of t.orderedWrites(record.parent_id)) {
        if (w.channel === TASKS) sends.push(await this._unpack(w.packed));
      }
      checkpoint.channel_values[TASKS] = sends;
      checkpoint.channel_versions = { ...checkpoint.channel_versions };
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] = versions.length > 0
        ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
    const tuple = { config: configOf(t.threadId, t.ns, record.id), checkpoint,
                    metadata: await this._unpack(record.metadata), pendingWrites };
    if (record.parent_id) tuple.parentConfig = configOf(t.threadId, t.ns, record.parent_id);
    return tuple;
  }
}

module.exports = { SessiondbSaver };
