// What a LangGraph saver (langgraph.js) knows of one thread and namespace:
// its branch sessions, where each checkpoint is (session and seq), the
// pending writes of each checkpoint, the channel values each checkpoint
// stored, and how far each branch's log has been read. Built from the
// records the saver appends (one message's metadata each, under "langgraph"):
//
//   {type: "checkpoint", id, parent_id, checkpoint: packed (without channel_values),
//    values: {channel: [version, packed | null]}, metadata: packed}
//   {type: "writes", checkpoint_id, task_id, task_path, writes: [[channel, packed], ...]}
//
// where packed is [serde type, base64 of the serde's bytes]. A checkpoint
// stores the values of the channels in its newVersions only (null: the
// channel is empty); reading one takes each channel's value at its version
// from the nearest checkpoint on its parent chain that stored it.
//
// Thread-safety: used under the saver's lock only.
"use strict";

const { WRITES_IDX_MAP, compareWritesSortKeys, writesSortKey } =
  require("@langchain/langgraph-checkpoint");

const RECORD_KEY = "langgraph";

class ThreadIndex {
  constructor(threadId, ns) {
    this.threadId = threadId;
    this.ns = ns;
    this.checkpoints = new Map();  // checkpoint id -> record (with session, seq)
    this.writes = new Map();       // checkpoint id -> Map("task\0idx" -> write)
    this.valuesByVersion = new Map();  // "channel\0version" -> packed | null, any branch
    this.tip = new Map();          // branch session -> seq of its last checkpoint
    this.branches = [];            // branch session ids, oldest first
    this.readTo = new Map();       // branch session -> last seq read
  }

  /** Takes in a record found at `seq` of branch `sessionId` (or just appended there). */
  learn(sessionId, seq, record) {
    if (!record) return;
    if (record.type === "checkpoint") {
      this.tip.set(sessionId, Math.max(this.tip.get(sessionId) || 0, seq));
      const known = this.checkpoints.get(record.id);
      // A copy a racing put left on a stale branch yields to its relocated twin.
      if (known && known.relocated && !record.relocated) return;
      this.checkpoints.set(record.id, { ...record, session: sessionId, seq });
      for (const [channel, [version, packed]] of Object.entries(record.values || {})) {
        const key = `${channel}\0${version}`;
        if (!this.valuesByVersion.has(key)) this.valuesByVersion.set(key, packed);
      }
    } else if (record.type === "writes") {
      let slot = this.writes.get(record.checkpoint_id);
      if (!slot) this.writes.set(record.checkpoint_id, (slot = new Map()));
      record.writes.forEach(([channel, packed], position) => {
        // LangGraph's special channels have fixed indexes, and a later write
        // of one replaces the earlier; a task's other writes keep the first.
        const special = Object.prototype.hasOwnProperty.call(WRITES_IDX_MAP, channel);
        const idx = special ? WRITES_IDX_MAP[channel] : position;
        const key = `${record.task_id}\0${idx}`;
        if (slot.has(key) && !special) return;
        slot.set(key, { taskId: record.task_id, channel, packed, taskPath: record.task_path || "", idx });
      });
    }
  }

  /** The latest checkpoint record (by id, as LangGraph's ids sort by time), or undefined. */
  latest() {
    let best;
    for (const record of this.checkpoints.values()) if (!best || record.id > best.id) best = record;
    return best;
  }

  /** The pending writes of a checkpoint, in writesSortKey order (LangGraph's contract). */
  orderedWrites(checkpointId) {
    const slot = this.writes.get(checkpointId);
    if (!slot) return [];
    return [...slot.values()]
      .map((w) => ({ w, key: writesSortKey(w.taskPath, w.taskId, w.idx) }))
      .sort((a, b) => compareWritesSortKeys(a.key, b.key))
      .map(({ w }) => w);
  }

  /**
   * The packed value of each channel of `versions` (channel -> version) for
   * the checkpoint `record`: from the nearest checkpoint on its parent chain
   * that stored that version, else from any of the thread's. A channel
   * stored empty, or stored nowhere, is left out.
   */
  packedValues(record, versions) {
    const wanted = new Map(Object.entries(versions || {}).map(([ch, v]) => [ch, String(v)]));
    const found = new Map();
    const seen = new Set();
    for (let r = record; r && wanted.size && !seen.has(r.id);
         r = r.parent_id ? this.checkpoints.get(r.parent_id) : undefined) {
      seen.add(r.id);
      for (const [channel, version] of [...wanted]) {
        const stored = r.values && Object.prototype.hasOwnProperty.call(r.values, channel)
          ? r.values[channel] : undefined;
        if (stored && String(stored[0]) === version) {
          if (stored[1]) found.set(channel, stored[1]);
          wanted.delete(channel);
        }
      }
    }
    for (const [channel, version] of wanted) {
      const packed = this.valuesByVersion.get(`${channel}\0${version}`);
      if (packed) found.set(channel, packed);
    }
    return found;
  }
}

module.exports = { ThreadIndex, RECORD_KEY };
