// SessiondbSaver (sessiondb/langgraph) where LangGraph's conformance suite
// does not look: time travel makes a fork session and both branches stay
// listed, each branch reads its own channel values, savers on one store see
// each other, the checkpoints survive a reopen, and deleteThread trashes.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { TASKS, uuid6 } from "@langchain/langgraph-checkpoint";
import { packageDir, require, sessiondb, tempDir } from "./support.mjs";

const { SessiondbSaver } = require(path.join(packageDir, "lib/langgraph.js"));
const { Store } = sessiondb;

// A checkpoint whose channels have the given values and versions; newVersions
// (what put stores) is every channel of it unless given.
function checkpoint(values, versions) {
  return { v: 4, id: uuid6(-1), ts: new Date().toISOString(), channel_values: values,
           channel_versions: versions, versions_seen: {} };
}
const meta = (step) => ({ source: "loop", step, parents: {} });
const thread = (threadId, checkpointId) =>
  ({ configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId } });

async function all(iterator) {
  const out = [];
  for await (const x of iterator) out.push(x);
  return out;
}

async function branchSessions(saver, threadId) {
  const store = await saver.getStore();
  const out = [];
  for await (const s of store.sessions({ archived: "all" })) {
    if (s.metadata.thread_id === threadId && s.metadata.langgraph_thread) out.push(s);
  }
  return out;
}

// c1 -> c2 -> c3 on the main line, then c4 from c2 (time travel). Channel
// "answer" is version 3 on both c3 and c4 (LangGraph's integer versions
// collide across branches), with different values.
async function timeTravel(saver, threadId) {
  const c1 = checkpoint({ question: "2+2?" }, { question: 1 });
  const c2 = checkpoint({ question: "2+2?", answer: "4" }, { question: 1, answer: 2 });
  const c3 = checkpoint({ question: "2+2?", answer: "four" }, { question: 1, answer: 3 });
  const c4 = checkpoint({ question: "2+2?", answer: "IV" }, { question: 1, answer: 3 });
  await saver.put(thread(threadId), c1, meta(0), { question: 1 });
  await saver.put(thread(threadId, c1.id), c2, meta(1), { answer: 2 });
  await saver.putWrites(thread(threadId, c2.id), [["answer", "four"]], "main-task");
  await saver.put(thread(threadId, c2.id), c3, meta(2), { answer: 3 });
  await saver.putWrites(thread(threadId, c2.id), [["answer", "IV"]], "travel-task");
  await saver.put(thread(threadId, c2.id), c4, { ...meta(2), source: "update" }, { answer: 3 });
  return { c1, c2, c3, c4 };
}

test("a put from an older checkpoint forks the session, and list shows both branches", async () => {
  const saver = new SessiondbSaver(path.join(tempDir(), "store"));
  const { c1, c2, c3, c4 } = await timeTravel(saver, "t1");

  const sessions = await branchSessions(saver, "t1");
  assert.equal(sessions.length, 2);
  const [main, fork] = sessions[0].parent_id ? [sessions[1], sessions[0]] : sessions;
  assert.equal(fork.parent_id, main.id);
  assert.equal(fork.fork_seq, 2, "the fork is made at c2's seq: c1, c2");
  // c1, c2, the writes of c2's two tasks and c3: nothing of c4 on the main line.
  assert.equal(main.message_count, 5);
  assert.equal(fork.message_count, 3, "c1, c2 inherited, and c4");

  const listed = await all(saver.list({ configurable: { thread_id: "t1" } }));
  assert.deepEqual(listed.map((t) => t.checkpoint.id), [c4.id, c3.id, c2.id, c1.id]);
  assert.deepEqual(listed.map((t) => t.parentConfig?.configurable.checkpoint_id),
                   [c2.id, c2.id, c1.id, undefined]);
  assert.deepEqual((await saver.getTuple(thread("t1"))).checkpoint, c4, "the latest is the new branch's");
  assert.deepEqual((await saver.getTuple(thread("t1", c3.id))).checkpoint, c3, "the old branch stays");
  assert.deepEqual((await saver.getTuple(thread("t1", c2.id))).pendingWrites,
                   [["main-task", "answer", "four"], ["travel-task", "answer", "IV"]]);
  assert.deepEqual(await all(saver.list({ configurable: { thread_id: "t1" } }, { filter: { source: "update" } }))
    .then((ts) => ts.map((t) => t.checkpoint.id)), [c4.id]);
  await saver.close();
});

test("each branch reads its own channel values, though their versions collide", async () => {
  const saver = new SessiondbSaver(path.join(tempDir(), "store"));
  const { c3, c4 } = await timeTravel(saver, "t2");
  const child = checkpoint({ question: "2+2?", answer: "IV" }, { question: 1, answer: 3 });
  await saver.put(thread("t2", c4.id), child, meta(3), {});  // nothing changed: all from ancestors
  assert.deepEqual((await saver.getTuple(thread("t2", c3.id))).checkpoint.channel_values,
                   { question: "2+2?", answer: "four" });
  assert.deepEqual((await saver.getTuple(thread("t2", child.id))).checkpoint.channel_values,
                   { question: "2+2?", answer: "IV" });
  await saver.close();
});

test("checkpoints and writes survive closing the saver and reopening the store", async () => {
  const dir = path.join(tempDir(), "store");
  const first = new SessiondbSaver(dir);
  await timeTravel(first, "t3");
  await first.putWrites(thread("t3", (await first.getTuple(thread("t3"))).checkpoint.id),
                        [[TASKS, { node: "next" }], ["__error__", "boom"]], "task-x", "~0");
  const before = await all(first.list({ configurable: {} }));
  const store = await first.getStore();
  await first.close();
  assert.equal(store.closed, true, "the saver closes the store it opened");
  await assert.rejects(first.getTuple(thread("t3")), (e) => e.code === "failed_precondition");

  const reopened = new SessiondbSaver(dir);
  assert.deepEqual(await all(reopened.list({ configurable: {} })), before);
  assert.deepEqual((await reopened.getTuple(thread("t3"))).pendingWrites,
                   [["task-x", "__error__", "boom"], ["task-x", TASKS, { node: "next" }]]);
  await reopened.close();
});

test("two savers on one store see each other's checkpoints, and a racing child forks", async () => {
  const dir = path.join(tempDir(), "store");
  const a = new SessiondbSaver(dir);
  const b = new SessiondbSaver(dir);
  const root = checkpoint({ n: 0 }, { n: 1 });
  await a.put(thread("t4"), root, meta(0), { n: 1 });
  assert.deepEqual((await b.getTuple(thread("t4"))).checkpoint, root);
  // Both continue from root: b's child lands first, so a's goes to a fork.
  const fromB = checkpoint({ n: 1 }, { n: 2 });
  const fromA = checkpoint({ n: 2 }, { n: 3 });
  await b.put(thread("t4", root.id), fromB, meta(1), { n: 2 });
  await a.put(thread("t4", root.id), fromA, meta(1), { n: 3 });
  for (const saver of [a, b]) {
    const listed = await all(saver.list({ configurable: { thread_id: "t4", checkpoint_ns: "" } }));
    assert.deepEqual(listed.map((t) => t.checkpoint.channel_values.n).sort(), [0, 1, 2]);
  }
  assert.equal((await branchSessions(a, "t4")).length, 2);
  await a.close();
  await b.close();
});

test("a child that lands between another saver's read and its append is moved to a fork", async () => {
  const dir = path.join(tempDir(), "store");
  const store = await Store.open(dir);
  // Saver a's store lets saver b put first, just before a's append reaches the engine.
  let beforeAppend = null;
  const racing = Object.create(store, { append: { value: async (...args) => {
    const hook = beforeAppend;
    beforeAppend = null;
    if (hook) await hook();
    return store.append(...args);
  } } });
  const a = new SessiondbSaver(racing);
  const b = new SessiondbSaver(store);
  const root = checkpoint({ n: 0 }, { n: 1 });
  await b.put(thread("t5"), root, meta(0), { n: 1 });
  await a.getTuple(thread("t5"));
  const fromB = checkpoint({ n: 1 }, { n: 2 });
  const fromA = checkpoint({ n: 2 }, { n: 3 });
  beforeAppend = () => b.put(thread("t5", root.id), fromB, meta(1), { n: 2 });
  await a.put(thread("t5", root.id), fromA, meta(1), { n: 3 });

  const sessions = await branchSessions(b, "t5");
  assert.equal(sessions.length, 2, "the root's session and the fork a's child moved to");
  const fork = sessions.find((s) => s.parent_id);
  assert.equal(fork.fork_seq, 1);
  for (const saver of [a, b, new SessiondbSaver(store)]) {
    for (const child of [fromA, fromB]) {
      const tuple = await saver.getTuple(thread("t5", child.id));
      assert.deepEqual(tuple.checkpoint, child);
      assert.equal(tuple.parentConfig.configurable.checkpoint_id, root.id);
    }
    assert.equal((await all(saver.list({ configurable: { thread_id: "t5" } }))).length, 3);
  }
  // a's child goes on from its fork.
  const next = checkpoint({ n: 3 }, { n: 4 });
  await a.put(thread("t5", fromA.id), next, meta(2), { n: 4 });
  assert.equal((await branchSessions(b, "t5")).length, 2);
  assert.deepEqual((await b.getTuple(thread("t5"))).checkpoint, next);
  await store.close();
});

test("deleteThread trashes the thread's sessions; the thread can start again", async () => {
  const saver = new SessiondbSaver(path.join(tempDir(), "store"));
  await timeTravel(saver, "gone");
  await timeTravel(saver, "kept");
  await saver.deleteThread("gone");
  assert.equal(await saver.getTuple(thread("gone")), undefined);
  assert.deepEqual(await all(saver.list({ configurable: { thread_id: "gone" } })), []);
  assert.equal((await all(saver.list({ configurable: { thread_id: "kept" } }))).length, 4);
  const store = await saver.getStore();
  const trash = await store.listTrash();
  assert.equal(trash.sessions.filter((s) => s.metadata.thread_id === "gone").length, 2);

  const again = checkpoint({ n: 1 }, { n: 1 });
  await saver.put(thread("gone"), again, meta(0), { n: 1 });
  assert.deepEqual((await saver.getTuple(thread("gone"))).checkpoint, again);
  await saver.close();
});

test("put and putWrites refuse a config without a thread, as LangGraph's savers do", async () => {
  const saver = new SessiondbSaver();
  await assert.rejects(saver.put({ configurable: {} }, checkpoint({}, {}), meta(0), {}), /thread_id/);
  await assert.rejects(saver.putWrites({ configurable: { thread_id: "t" } }, [], "task"), /checkpoint_id/);
  assert.equal(await saver.getTuple({ configurable: {} }), undefined);
  await saver.close();
});
