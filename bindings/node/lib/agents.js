// The OpenAI Agents SDK's Session on sessiondb: a drop-in for its
// MemorySession (the Node twin of python/sessiondb/agents.py).
//
//   const { run } = require("@openai/agents");
//   const { SessiondbSession } = require("sessiondb/agents");
//   const session = new SessiondbSession({ sessionId: "user-123", store: "conversations" });
//   await run(agent, "Hello", { session });
//
// Each item is one message of the session, stored losslessly (_agent_items.js):
// an item read back deep-equals the item written, and images and files sent
// as data URLs (or byte arrays) are kept once in the blob store instead of as
// base64 in every row. popItem and clearSession rewind the session's view
// (the engine's rewind event): nothing is deleted, the removed items stay in
// the log for audit and for forks.
//
// Many session objects on one id (a server making one per request, several
// processes) see one session: popItem takes out the last item only if
// nothing landed since it read it (Store.rewindIfUnchanged) and reads again
// otherwise, so no add and no pop is lost or doubled. With no `store`, a
// session keeps its items in a temporary store of its own, removed by close()
// or at exit, as MemorySession keeps them in memory: pass a directory or URI
// to keep them.
//
// The SDK need not be installed: the class follows its Session interface
// (agents-core memory/session.d.ts) by shape; agents.d.ts says so to the compiler.
"use strict";

const crypto = require("node:crypto");
const items = require("./_agent_items.js");
const { storeSource } = require("./_store_source.js");
const { storeSessionId } = require("./_session_ids.js");

// How many times popItem reads again while other writers keep landing
// between its read and its rewind.
const POP_ATTEMPTS = 200;
// The engine's default limit on one non-image attachment (StoreOptions::max_file_bytes).
const MAX_ATTACHMENT_BYTES = 100 * 1024 * 1024;

const { BusyError, FailedPreconditionError } = require("./errors.js");

const isNotFound = (e) => e && e.code === "not_found";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class SessiondbSession {
  /**
   * options.sessionId: the SDK's session id (default: a random UUID).
   * options.store: a sessiondb Store (shared, left open), a directory or a
   *   postgresql:// URI (opened on first use, shared by the sessions of this
   *   process on it), or nothing (a temporary store of this session's own).
   * options.openOptions: Store.open's options when this session opens it.
   * options.title, options.metadata: the store session's, when this creates it.
   */
  constructor(options = {}) {
    const { sessionId, store, openOptions, title, metadata } = options;
    this._sessionId = sessionId === undefined ? crypto.randomUUID() : String(sessionId);
    this._storeId = storeSessionId(this._sessionId, "agents");
    // Up to 64 images a message: an item may carry many, the engine's default is 5.
    this._source = storeSource(store, openOptions, { maxImagesPerMessage: 64 });
    this._title = title;
    this._metadata = { ...(metadata || {}) };
    if (this._storeId !== this._sessionId) this._metadata.agents_session_id = this._sessionId;
    this._closed = false;
  }

  /** The SDK's session id (not the store's, which differs when the id is not a valid store id). */
  async getSessionId() {
    return this._sessionId;
  }

  /** The store's id of this session's messages. */
  get storeSessionId() {
    return this._storeId;
  }

  /** The Store this session keeps its items in (opening it if need be). */
  async getStore() {
    this._checkOpen();
    return this._source.get();
  }

  /** The items in chronological order; with a limit, the latest `limit` (0 or less: none). */
  async getItems(limit) {
    const store = await this.getStore();
    if (limit !== undefined && limit !== null && limit <= 0) return [];
    let messages;
    try {
      messages = limit === undefined || limit === null
        ? await this._readAll(store)
        : await store.readLast(this._storeId, limit);
    } catch (e) {
      if (isNotFound(e)) return [];
      throw e;
    }
    return Promise.all(messages.map((m) => items.toItem(store, m)));
  }

  /** Appends the items, in order, in one transaction. */
  async addItems(newItems) {
    const store = await this.getStore();
    if (!newItems || newItems.length === 0) return;
    const messages = newItems.map((item) => items.toMessage(item, { maxBytes: MAX_ATTACHMENT_BYTES }));
    try {
      await this._append(store, messages);
    } catch (e) {
      // An attachment the store refused (its size, its pixels, too many in
      // one message): keep the items whole, their bytes inline, rather than
      // lose the turn.
      if (!(e && e.code === "invalid_argument") || !messages.some(items.hasAttachments)) throw e;
      await this._append(store, newItems.map((item) => items.toMessage(item, { extract: false })));
    }
  }

  /** Removes the most recent item and returns it; undefined if there is none. */
  async popItem() {
    const store = await this.getStore();
    for (let attempt = 0; attempt < POP_ATTEMPTS; attempt++) {
      // Read the log's last seq, then the view's last message, and rewind to
      // just before that message only if the log is still at that seq: an
      // add or pop of another object (or process) landing in between makes
      // the rewind write nothing, and the pop reads again.
      let lastSeq;
      let last;
      try {
        lastSeq = (await store.getSession(this._storeId)).last_seq;
        last = await store.readLast(this._storeId, 1);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
      if (last.length === 0) return undefined;
      const message = last[last.length - 1];
      if (message.seq <= lastSeq) {
        // Read before the rewind, so an item whose bytes cannot be read stays in the session.
        const item = await items.toItem(store, message);
        if (await store.rewindIfUnchanged(this._storeId, message.seq - 1, lastSeq)) return item;
      }
      await sleep(Math.random() * Math.min(attempt, 20));
    }
    throw new BusyError(`popItem on session ${JSON.stringify(this._sessionId)}: other ` +
                        `writers kept changing it (${POP_ATTEMPTS} attempts); try again`, "busy");
  }

  /** Removes every item (the session's view is rewound to nothing; the log keeps them). */
  async clearSession() {
    const store = await this.getStore();
    try {
      await store.rewind(this._storeId, 0);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /**
   * Closes the session: later calls fail with code "failed_precondition". A
   * store it opened closes with the last session of the process on it; its
   * own temporary store is deleted. A Store given to it stays open.
   */
  async close() {
    if (this._closed) return;
    this._closed = true;
    await this._source.release();
  }

  // ---- the work -----------------------------------------------------------

  _checkOpen() {
    if (this._closed) {
      throw new FailedPreconditionError(
        `SessiondbSession ${JSON.stringify(this._sessionId)} is closed`, "failed_precondition");
    }
  }

  async _readAll(store) {
    const out = [];
    for await (const message of store.messages(this._storeId)) out.push(message);
    return out;
  }

  async _append(store, messages) {
    try {
      await store.appendBatch(this._storeId, messages);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      try {
        const made = { id: this._storeId };
        if (this._title !== undefined) made.title = this._title;
        if (Object.keys(this._metadata).length) made.metadata = this._metadata;
        await store.createSession(made);
      } catch (e2) {
        if (!(e2 && e2.code === "already_exists")) throw e2;  // else another object made it
      }
      await store.appendBatch(this._storeId, messages);
    }
  }
}

module.exports = { SessiondbSession };
