'use strict';
// Store: one sessiondb database (a directory, or a postgresql:// URI) for a
// Node program. Every method that reaches the engine runs on a libuv worker
// thread (src/addon.cc) and returns a Promise; many may run at once. Values
// come back in the JSON forms every face of sessiondb shares (docs/cli.md).
const native = require('./native');
const { fromNative, invalid, FailedPreconditionError } = require('./errors');
const { encodeMessage } = require('./parts');

// JSON.stringify writes a lone surrogate (half of an emoji a string was cut
// through, common in streamed text) as the escape \udXXX, which is not
// UTF-8 and which the engine refuses; a well-formed pair it writes as the
// character itself. So every \ud800-\udfff escape left in its output (one
// not itself escaped, as in "\\ud800") is a lone surrogate: it becomes
// U+FFFD, as TextEncoder would make it.
const LONE_SURROGATE = /(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g;

function argsText(args) {
  const text = JSON.stringify(args ?? {});
  return text.includes('\\u') ? text.replace(LONE_SURROGATE, '$1\\ufffd') : text;
}

function call(handle, verb, args, attachments) {
  let pending;
  try {
    pending = native.call(handle, verb, argsText(args), attachments ?? []);
  } catch (error) {
    return Promise.reject(fromNative(error));
  }
  return pending.then(
    (answer) => (typeof answer === 'string' ? JSON.parse(answer) : answer),
    (error) => { throw fromNative(error); });
}

// Milliseconds or a Date as the ISO time the engine's JSON forms take.
function isoTime(value, name) {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw invalid(`${name} is not a time: ${String(value)}`);
  return date.toISOString();
}

class Store {
  /** Use Store.open(). */
  constructor(handle, location) {
    this._handle = handle;
    this._closing = null;
    // Calls sent and not yet answered. close() waits for them: a call made
    // before close() is one under way, whichever worker thread libuv gives
    // it first (the native lock alone cannot order a call still queued).
    this._underWay = new Set();
    Object.defineProperty(this, 'location', { value: location, enumerable: true });
  }

  static async open(location, options = {}) {
    if (typeof location !== 'string' || location === '') {
      throw invalid('Store.open(location): a directory or a postgresql:// URI');
    }
    if (options === null || typeof options !== 'object') throw invalid('options must be an object');
    let handle;
    try {
      handle = await native.open(location, JSON.stringify(options));
    } catch (error) {
      throw fromNative(error);
    }
    return new Store(handle, location);
  }

  get closed() { return this._closing !== null; }

  close() {
    if (this._closing === null) {
      this._closing = Promise.allSettled([...this._underWay])
        .then(() => native.close(this._handle))
        .catch((error) => { throw fromNative(error); });
    }
    return this._closing;
  }

  _call(verb, args, attachments) {
    if (this._closing !== null) {
      return Promise.reject(new FailedPreconditionError(
        `the store at ${this.location} is closed`, 'failed_precondition'));
    }
    const answer = call(this._handle, verb, args, attachments);
    this._underWay.add(answer);
    const done = () => this._underWay.delete(answer);
    answer.then(done, done);
    return answer;
  }

  // ---- sessions
  createSession(options = {}) { return this._call('createSession', options); }
  getSession(id) { return this._call('getSession', { id }); }
  listSessions(options = {}) { return this._call('listSessions', options); }
  async *sessions(options = {}) {
    const { pageSize = 100, ...filter } = options;
    let cursor = '';
    do {
      const page = await this.listSessions({ ...filter, limit: pageSize, cursor });
      yield* page.sessions;
      cursor = page.next_cursor;
    } while (cursor);
  }
  async renameSession(id, title) { await this._call('renameSession', { id, title }); }
  async archiveSession(id, archived = true) { await this._call('archiveSession', { id, archived }); }
  async deleteSession(id) { await this._call('deleteSession', { id }); }
  purgeArchived(beforeMs) { return this._call('purgeArchived', { beforeMs }); }

  // ---- messages
  append(sessionId, message) {
    let encoded;
    try {
      encoded = encodeMessage(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return this._call('append', { sessionId, message: encoded.json }, encoded.attachments);
  }
  appendBatch(sessionId, messages) {
    if (!Array.isArray(messages)) return Promise.reject(invalid('messages must be a list'));
    const attachments = [];
    let json;
    try {
      json = messages.map((m) => encodeMessage(m, attachments).json);
    } catch (error) {
      return Promise.reject(error);
    }
    return this._call('appendBatch', { sessionId, messages: json }, attachments);
  }
  read(sessionId, options = {}) { return this._call('read', { sessionId, ...options }); }
  readLast(sessionId, count) { return this._call('readLast', { sessionId, count }); }
  async *messages(sessionId, options = {}) {
    const { pageSize = 500 } = options;
    let fromSeq = options.fromSeq ?? 1;
    for (;;) {
      const page = await this.read(sessionId, { fromSeq, limit: pageSize });
      yield* page;
      if (page.length < pageSize) return;
      fromSeq = page[page.length - 1].seq + 1;
    }
  }
  readEvents(sessionId, options = {}) { return this._call('readEvents', { sessionId, ...options }); }
  readForProjection(sessionId) { return this._call('readForProjection', { sessionId }); }

  // ---- the harness
  fork(parentId, options = {}) { return this._call('fork', { ...options, parentId }); }
  compact(sessionId, fromSeq, toSeq, summary, options = {}) {
    return this._call('compact', { ...options, sessionId, fromSeq, toSeq, summary });
  }
  prune(sessionId, compactionSeq) { return this._call('prune', { sessionId, compactionSeq }); }
  rewind(sessionId, toSeq) { return this._call('rewind', { sessionId, toSeq }); }
  rewindIfUnchanged(sessionId, toSeq, expectedLastSeq) {
    return this._call('rewindIfUnchanged', { sessionId, toSeq, expectedLastSeq });
  }
  viewResource(sessionId, resourceId, reason = '') {
    return this._call('viewResource', { sessionId, resourceId, reason });
  }
  usage(sessionId) { return this._call('usage', { sessionId }); }
  openDraft(sessionId, options = {}) { return this._call('openDraft', { ...options, sessionId }); }
  async saveDraft(draft) { await this._call('saveDraft', { draft }); }
  listDrafts(sessionId) { return this._call('listDrafts', { sessionId }); }
  finishDraft(draftId, message) {
    if (message === undefined) return this._call('finishDraft', { draftId });
    let encoded;
    try {
      encoded = encodeMessage(message);
    } catch (error) {
      return Promise.reject(error);
    }
    return this._call('finishDraft', { draftId, message: encoded.json }, encoded.attachments);
  }
  async discardDraft(draftId) { await this._call('discardDraft', { draftId }); }

  // ---- blobs, housekeeping, projections
  readBlob(sha256, options = {}) { return this._call('readBlob', { sha256, ...options }); }
  async dataUri(resource) {
    if (!resource || typeof resource.content_sha256 !== 'string') {
      throw invalid('dataUri(resource): a resource as read() gives it (with content_sha256)');
    }
    const bytes = await this.readBlob(resource.content_sha256);
    return `data:${resource.mime || 'application/octet-stream'};base64,${bytes.toString('base64')}`;
  }
  collectGarbage(options = {}) { return this._call('collectGarbage', options); }
  verify() { return this._call('verify'); }
  stats() { return this._call('stats'); }
  project(sessionId, format = 'openai-chat') { return this._call('project', { sessionId, format }); }

  // ---- search and code memory
  search(query, options = {}) { return this._call('search', { ...options, query }); }
  embed(options = {}) { return this._call('embed', options); }
  recordWrite(filePath, newCode, options = {}) {
    return this._call('recordWrite', { ...options, filePath, newCode });
  }
  churnWarnings(filePath, newCode, options = {}) {
    return this._call('churnWarnings', { ...options, filePath, newCode });
  }
  recall(filePath, code, options = {}) { return this._call('recall', { ...options, filePath, code }); }
  hotspots(options = {}) { return this._call('hotspots', options); }
  fileChurn(filePath) { return this._call('fileChurn', { filePath }); }

  // ---- import and export
  importPath(path, options = {}) { return this._call('importPath', { ...options, path }); }
  export(out, options = {}) { return this._call('export', { ...options, out }); }

  // ---- forgetting (docs/retention.md)
  async trashSession(id) { await this._call('trashSession', { id }); }
  restoreFromTrash(id) { return this._call('restoreFromTrash', { id }); }
  listTrash(options = {}) { return this._call('listSessions', { ...options, trash: true }); }
  emptyTrash(options = {}) { return this._call('emptyTrash', options); }
  erase(request = {}) {
    let before;
    try {
      before = isoTime(request.before, 'before');
    } catch (error) {
      return Promise.reject(error);
    }
    return this._call('erase', {
      request: {
        session_ids: request.sessionIds, project: request.project, before,
        everything: request.everything, messages: request.messages, reason: request.reason,
      },
    });
  }
  verifyErased(receipt) { return this._call('verifyErased', { receipt }); }
  ledger(options = {}) { return this._call('ledger', options); }
  applyRetention(options = {}) { return this._call('applyRetention', options); }
  getRetentionPolicy() { return this._call('getRetentionPolicy'); }
  async setRetentionPolicy(policy) { await this._call('setRetentionPolicy', { policy }); }

  get [Symbol.toStringTag]() { return 'sessiondb.Store'; }
}

module.exports = { Store };
