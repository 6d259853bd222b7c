// The Node package's Store against the real engine (bindings/node): every
// group of calls, on an embedded store and, when the throw-away PostgreSQL
// cluster is up ($SESSIONDB_TEST_POSTGRES), on a namespace of it.
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";

import { packageDir, pngBytes, sessiondb, tempDir } from "./support.mjs";

const { Store } = sessiondb;

const backends = [["embedded", () => [path.join(tempDir(), "store"), {}]]];
if (process.env.SESSIONDB_TEST_POSTGRES) {
  backends.push(["postgresql", () => [process.env.SESSIONDB_TEST_POSTGRES,
    { namespace: "node-" + crypto.randomBytes(6).toString("hex") }]]);
}

const opened = [];
after(async () => { for (const s of opened) await s.close(); });

async function openStore(make, extra = {}) {
  const [location, options] = make();
  const store = await Store.open(location, { ...options, ...extra });
  opened.push(store);
  return store;
}

const sha256 = (bytes) => crypto.createHash("sha256").update(bytes).digest("hex");

for (const [backend, make] of backends) {
  describe(`Store on ${backend}`, () => {
    test("sessions are created, found, listed page by page, renamed, archived, deleted", async () => {
      const store = await openStore(make);
      const made = [];
      for (let i = 0; i < 7; ++i) {
        made.push(await store.createSession({ title: `chat ${i}`, metadata: { project: "/p", i } }));
      }
      assert.equal((await store.getSession(made[3].id)).title, "chat 3");
      assert.deepEqual((await store.getSession(made[3].id)).metadata, { project: "/p", i: 3 });
      const page = await store.listSessions({ limit: 3 });
      assert.equal(page.sessions.length, 3);
      assert.equal(typeof page.next_cursor, "string");
      const all = [];
      for await (const s of store.sessions({ pageSize: 2 })) all.push(s.id);
      assert.deepEqual(new Set(all), new Set(made.map((s) => s.id)));
      await store.renameSession(made[0].id, "renamed");
      assert.equal((await store.getSession(made[0].id)).title, "renamed");
      await store.archiveSession(made[1].id);
      assert.equal((await store.getSession(made[1].id)).archived, true);
      const archived = await store.listSessions({ archived: "archived" });
      assert.deepEqual(archived.sessions.map((s) => s.id), [made[1].id]);
      await store.deleteSession(made[2].id);
      await assert.rejects(store.getSession(made[2].id), sessiondb.NotFoundError);
      await assert.rejects(store.createSession({ id: made[3].id }), sessiondb.AlreadyExistsError);
    });

    test("images from a Buffer, Uint8Array, ArrayBuffer, data: URL and path read back byte-identical, kept once", async () => {
      const store = await openStore(make);
      const s = await store.createSession();
      const png = pngBytes(7);
      const file = path.join(tempDir(), "shot.png");
      fs.writeFileSync(file, pngBytes(8));
      const dataUrl = "data:image/png;base64," + pngBytes(9).toString("base64");
      const r = await store.append(s.id, {
        role: "user",
        content: [
          "look at these",
          sessiondb.image(png),
          sessiondb.image(new Uint8Array(png)),  // the same bytes again: one blob
          sessiondb.image(Uint8Array.from(pngBytes(10)).buffer),
          sessiondb.image(dataUrl),
        ],
      });
      assert.equal(r.seq, 1);
      assert.equal(r.resources.length, 4);
      const r2 = await store.append(s.id, {
        role: "user",
        parts: [sessiondb.image(file), sessiondb.file(Buffer.from("a,b\n1,2\n"), { mime: "text/csv", name: "t.csv" })],
      });
      assert.equal(r2.seq, 2);
      const [m1, m2] = await store.read(s.id);
      const images = m1.parts.filter((p) => p.type === "image").map((p) => p.resource);
      assert.equal(images[0].content_sha256, sha256(png));
      assert.equal(images[1].content_sha256, sha256(png));
      assert.deepEqual(await store.readBlob(images[0].content_sha256), png);
      assert.deepEqual(await store.readBlob(images[2].content_sha256), pngBytes(10));
      assert.deepEqual(await store.readBlob(images[3].content_sha256), pngBytes(9));
      assert.equal(await store.dataUri(images[3]), dataUrl);
      assert.deepEqual(await store.readBlob(m2.parts[0].resource.content_sha256), pngBytes(8));
      assert.equal(m2.parts[1].resource.mime, "text/csv");
      assert.equal(m2.parts[1].resource.name, "t.csv");
      assert.equal((await store.readBlob(m2.parts[1].resource.content_sha256)).toString(), "a,b\n1,2\n");
      const stats = await store.stats();
      assert.equal(stats.blobs, 5, "the repeated image is one blob");
    });

    test("every part kind, usage, metadata and files round-trip; lone surrogates become U+FFFD", async () => {
      const store = await openStore(make);
      const s = await store.createSession();
      await store.appendBatch(s.id, [
        { role: "user", content: "what is in main.cc?", metadata: { turn: { n: 1 } } },
        {
          role: "assistant", model: "gpt-5", provider: "openai",
          usage: { input_tokens: 10, output_tokens: 5, cached_tokens: 2, reasoning_tokens: 1, cache_write_tokens: 3 },
          parts: [sessiondb.reasoning("let me look", "sig-1"), sessiondb.toolCall("c1", "read", { path: "main.cc" })],
          files: ["main.cc"],
        },
        { role: "tool", parts: [sessiondb.toolResult("c1", "int main() {}", false)] },
        { role: "assistant", content: [sessiondb.link("https://example.com/x", { name: "x" }), "half \ud83d emoji"] },
      ]);
      const m = await store.read(s.id);
      assert.deepEqual(m.map((x) => x.role), ["user", "assistant", "tool", "assistant"]);
      assert.deepEqual(m[0].metadata, { turn: { n: 1 } });
      assert.deepEqual(m[1].parts[0], { type: "reasoning", text: "let me look" });
      assert.deepEqual(m[1].parts[1], { type: "tool_call", tool_call_id: "c1", tool_name: "read", arguments: { path: "main.cc" } });
      assert.deepEqual(m[1].usage, { input_tokens: 10, output_tokens: 5, cached_tokens: 2, reasoning_tokens: 1, cache_write_tokens: 3 });
      assert.deepEqual(m[1].files, ["main.cc"]);
      assert.deepEqual(m[2].parts[0], { type: "tool_result", tool_call_id: "c1", text: "int main() {}", is_error: false });
      assert.equal(m[3].parts[0].resource.uri, "https://example.com/x");
      assert.equal(m[3].parts[1].text, "half \ufffd emoji");
      const usage = await store.usage(s.id);
      assert.equal(usage.total.input_tokens, 10);
      assert.equal(usage.by_model[0].model, "gpt-5");
      assert.equal((await store.readLast(s.id, 2)).map((x) => x.seq).join(), "3,4");
    });

    test("a long session reads through the async iterator, page by page, in order", async () => {
      const store = await openStore(make);
      const s = await store.createSession();
      const batch = Array.from({ length: 1203 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` }));
      await store.appendBatch(s.id, batch);
      let n = 0;
      for await (const m of store.messages(s.id, { pageSize: 500 })) {
        assert.equal(m.seq, n + 1);
        assert.equal(m.parts[0].text, `m${n}`);
        ++n;
      }
      assert.equal(n, 1203);
      const tail = [];
      for await (const m of store.messages(s.id, { fromSeq: 1200, pageSize: 2 })) tail.push(m.seq);
      assert.deepEqual(tail, [1200, 1201, 1202, 1203]);
    });

    test("forks, rewinds, compaction, prune, projections, drafts and resource views", async () => {
      const store = await openStore(make);
      const s = await store.createSession();
      for (let i = 1; i <= 4; ++i) await store.append(s.id, { role: i % 2 ? "user" : "assistant", content: `turn ${i}` });
      await store.append(s.id, { role: "user", content: ["see", sessiondb.image(pngBytes(1))] });
      const child = await store.fork(s.id, { atSeq: 2, title: "what if" });
      assert.equal(child.parent_id, s.id);
      assert.equal(child.fork_seq, 2);
      assert.deepEqual((await store.read(child.id)).map((m) => m.parts[0].text), ["turn 1", "turn 2"]);
      await store.append(child.id, { role: "user", content: "other way" });
      assert.equal((await store.read(s.id)).length, 5, "the parent is unchanged");

      const rewind = await store.rewind(child.id, 1);
      assert.equal(rewind.type, "rewind");
      assert.deepEqual((await store.read(child.id)).map((m) => m.parts[0].text), ["turn 1"]);
      const last = (await store.getSession(child.id)).last_seq;
      assert.equal(await store.rewindIfUnchanged(child.id, 0, last - 1), null, "a stale expectation writes nothing");
      assert.equal((await store.rewindIfUnchanged(child.id, 0, last)).type, "rewind");
      assert.deepEqual(await store.read(child.id), []);

      const compaction = await store.compact(s.id, 1, 3, "they said hello", { strategy: "test" });
      assert.equal(compaction.compaction.summary, "they said hello");
      const projected = await store.readForProjection(s.id);
      assert.equal(projected[0].type, "compaction");
      for (const format of ["openai-chat", "openai-responses", "anthropic"]) {
        const body = await store.project(s.id, format);
        const text = JSON.stringify(body);
        assert.match(text, /they said hello/, format);
        assert.doesNotMatch(text, /turn 1/, format);
      }
      const image = (await store.read(s.id)).at(-1).parts[1].resource;
      const view = await store.viewResource(s.id, image.resource_id, "check the chart");
      assert.equal(view.resource_view.reason, "check the chart");
      const pruned = await store.prune(s.id, compaction.seq);
      assert.equal(pruned.events_pruned, 3);
      assert.equal((await store.read(s.id))[0].pruned, true);

      const draft = await store.openDraft(s.id, { model: "m" });
      await store.saveDraft({ ...draft, text: "streaming..." });
      assert.equal((await store.listDrafts(s.id))[0].text, "streaming...");
      const finished = await store.finishDraft(draft.id);
      assert.equal((await store.read(s.id)).at(-1).parts[0].text, "streaming...");
      assert.ok(finished.seq > 0);
      const d2 = await store.openDraft(s.id);
      await store.discardDraft(d2.id);
      assert.deepEqual(await store.listDrafts(s.id), []);
    });

    test("search, the code memory, export and import", async () => {
      const store = await openStore(make);
      const s = await store.createSession({ title: "tokenizer" });
      await store.append(s.id, { role: "user", content: "why does the zebrafish tokenizer crash?" });
      const found = await store.search("zebrafish", { mode: "keyword" });
      assert.equal(found.hits[0].session_id, s.id);
      assert.match(found.hits[0].snippet, /zebrafish/);
      const w = await store.recordWrite("/src/tok.cc", "int tokenize() { return 1; }\n", { sessionId: s.id, project: "/src" });
      assert.equal(w.recorded, true);
      assert.equal((await store.recall("/src/tok.cc", "int tokenize() { return 1; }"))[0].file_path, "/src/tok.cc");
      assert.equal((await store.fileChurn("/src/tok.cc")).file_path, "/src/tok.cc");
      assert.ok(Array.isArray(await store.hotspots()));

      const out = path.join(tempDir(), "export.json");
      const exported = await store.export(out, { sessions: [s.id] });
      assert.equal(exported.messages, 1);
      const other = await Store.open(path.join(tempDir(), "other"));
      opened.push(other);
      const imported = await other.importPath(out);
      assert.equal(imported.messages_added, 1);
      assert.equal((await other.read(s.id))[0].parts[0].text, "why does the zebrafish tokenizer crash?");
      assert.equal((await other.verify()).clean, true);
    });

    test("the trash, erasure with a receipt that proves itself, the ledger and retention", async () => {
      const store = await openStore(make, { actor: "node-test" });
      const a = await store.createSession({ title: "a" });
      const b = await store.createSession({ title: "b" });
      await store.append(a.id, { role: "user", content: ["secret plan", sessiondb.image(pngBytes(3))] });
      await store.append(b.id, { role: "user", content: "keep me" });
      await store.trashSession(a.id);
      assert.deepEqual((await store.listTrash()).sessions.map((s) => s.id), [a.id]);
      assert.ok((await store.listTrash()).sessions[0].trashed_ms > 0);
      await store.restoreFromTrash(a.id);
      assert.equal((await store.listTrash()).sessions.length, 0);
      const receipt = await store.erase({ sessionIds: [a.id], reason: "user asked" });
      assert.equal(typeof receipt.digest, "string");
      const check = await store.verifyErased(receipt);
      assert.equal(check.erased, true, JSON.stringify(check.problems));
      assert.equal((await store.verifyErased(JSON.stringify(receipt))).erased, true);
      await assert.rejects(store.getSession(a.id), sessiondb.NotFoundError);
      assert.equal((await store.read(b.id)).length, 1);
      const ledger = await store.ledger();
      assert.ok(ledger.some((e) => e.action.includes("erase") && e.actor === "node-test"), JSON.stringify(ledger));
      await store.setRetentionPolicy({ trash_grace_days: 3, rules: [{ project: "", trash_after_idle_days: 30 }] });
      assert.equal((await store.getRetentionPolicy()).trash_grace_days, 3);
      const run = await store.applyRetention({ dryRun: true });
      assert.equal(run.dry_run, true);
      await assert.rejects(store.setRetentionPolicy({ nope: 1 }), sessiondb.InvalidArgumentError);
      const emptied = await store.emptyTrash({ olderThanDays: 0 });
      assert.equal(typeof emptied.digest, "string");
      const gc = await store.collectGarbage({ graceMs: 0 });
      assert.equal(typeof gc.blobs_scanned, "number");
      assert.equal((await store.verify()).clean, true);
    });

    test("hostile input: a clear error of the right class, nothing written, the store serves on", async () => {
      const store = await openStore(make, { maxImageBytes: 1024, maxFileBytes: 1024 * 1024 });
      const s = await store.createSession();
      await store.append(s.id, { role: "user", content: "before" });
      const big = Buffer.concat([pngBytes(0), Buffer.alloc(4096)]);
      await assert.rejects(store.append(s.id, { role: "user", content: ["x", sessiondb.image(big)] }),
        (e) => e instanceof sessiondb.InvalidArgumentError && /limit/.test(e.message) && e.code === "invalid_argument");
      let deep = {};
      for (let i = 0; i < 300; ++i) deep = { d: deep };
      await assert.rejects(store.append(s.id, { role: "user", content: "x", metadata: deep }),
        (e) => e instanceof sessiondb.InvalidArgumentError && /nested deeper/.test(e.message));
      await assert.rejects(store.append(s.id, { role: "user", content: [sessiondb.image(path.join(tempDir(), "missing.png"))] }),
        sessiondb.SessiondbError);
      // An 8 GiB file (sparse: it takes no disk) given by path is refused by its
      // size, before the engine reads it: the cap applies while reading.
      const huge = path.join(tempDir(), "huge.bin");
      fs.closeSync(fs.openSync(huge, "w"));
      fs.truncateSync(huge, 8 * 1024 ** 3);
      await assert.rejects(store.append(s.id, { role: "user", content: [sessiondb.file(huge)] }),
        (e) => e instanceof sessiondb.InvalidArgumentError && /limit/.test(e.message));
      await assert.rejects(store.append(s.id, { role: "robot", content: "x" }), sessiondb.InvalidArgumentError);
      await assert.rejects(store.append(s.id, "just text"), sessiondb.InvalidArgumentError);
      await assert.rejects(store.append(s.id, { role: "user", content: [42] }), sessiondb.InvalidArgumentError);
      await assert.rejects(store.read(123), (e) => e instanceof sessiondb.InvalidArgumentError && /sessionId/.test(e.message));
      await assert.rejects(store.appendBatch(s.id, [{ role: "user", content: "ok" }, { role: "user", content: [{ type: "image", source: big }] }]),
        /message 2 of the batch/);
      await assert.rejects(store.readBlob("00".repeat(32)), sessiondb.NotFoundError);
      await assert.rejects(store.getSession("../../etc"), sessiondb.SessiondbError);
      const messages = await store.read(s.id);
      assert.deepEqual(messages.map((m) => m.parts[0].text), ["before"], "nothing was written");
      assert.equal((await store.append(s.id, { role: "user", content: "after" })).seq, 2);
      assert.equal((await store.verify()).clean, true);
    });

    test("calls run off the main thread, many at once; a closed store refuses calls", async () => {
      const store = await openStore(make);
      const sessions = await Promise.all(Array.from({ length: 8 }, () => store.createSession()));
      let ticks = 0;
      const timer = setInterval(() => ++ticks, 1);
      const appends = [];
      for (let i = 0; i < 200; ++i) {
        appends.push(store.append(sessions[i % 8].id, { role: "user", content: `n${i}` }));
      }
      const results = await Promise.all(appends);
      clearInterval(timer);
      assert.equal(results.length, 200);
      for (const s of sessions) assert.equal((await store.read(s.id)).length, 25);
      assert.ok(ticks > 0, "the event loop ran while the appends were under way");
      const pending = store.read(sessions[0].id);
      await store.close();
      assert.equal((await pending).length, 25, "a call under way finishes before the close");
      assert.equal(store.closed, true);
      await assert.rejects(store.read(sessions[0].id), sessiondb.FailedPreconditionError);
      await store.close();  // twice is fine
    });
  });
}

test("Store.open refuses what is not a store, with the reason", async () => {
  await assert.rejects(Store.open(""), sessiondb.InvalidArgumentError);
  await assert.rejects(Store.open(path.join(tempDir(), "absent"), { createIfMissing: false }),
    (e) => e instanceof sessiondb.SessiondbError && e.code !== undefined);
  await assert.rejects(Store.open(tempDir(), { durability: "sometimes" }),
    (e) => e instanceof sessiondb.InvalidArgumentError && /durability/.test(e.message));
  const file = path.join(tempDir(), "plain-file");
  fs.writeFileSync(file, "not a store");
  await assert.rejects(Store.open(file), sessiondb.SessiondbError);
});

test("ES modules import the package's names, as require gives them", async () => {
  const { pathToFileURL } = await import("node:url");
  const esm = await import(pathToFileURL(path.join(packageDir, "lib", "index.js")).href);
  for (const name of ["Store", "SessiondbError", "NotFoundError", "InvalidArgumentError", "image", "file", "toolCall"]) {
    assert.equal(esm[name], sessiondb[name], name);
  }
});

test("a data: URL's bytes are stored as sent; a damaged one is refused by the engine, by name", async () => {
  const store = await Store.open(path.join(tempDir(), "store"));
  const s = await store.createSession();
  const png = pngBytes(42);
  const url = "data:image/png;base64," + png.toString("base64");
  const r = await store.append(s.id, { role: "user", content: [sessiondb.image(url), sessiondb.file("data:text/plain;base64,aGVsbG8=", { name: "h.txt" })] });
  assert.equal(r.resources[0].content_sha256, sha256(png));
  assert.equal(r.resources[0].mime, "image/png");
  assert.equal(r.resources[1].mime, "text/plain");
  assert.equal((await store.readBlob(r.resources[1].content_sha256)).toString(), "hello");
  // A stray character, a missing pad, a declared type the bytes contradict.
  await assert.rejects(store.append(s.id, { role: "user", content: [sessiondb.image(url.slice(0, -2) + "!=")] }), sessiondb.InvalidArgumentError);
  await assert.rejects(store.append(s.id, { role: "user", content: [sessiondb.image(url.slice(0, -1))] }), sessiondb.InvalidArgumentError);
  await assert.rejects(store.append(s.id, { role: "user", content: [sessiondb.image("data:image/jpeg;base64," + png.toString("base64"))] }),
    (e) => e instanceof sessiondb.InvalidArgumentError && /image\/jpeg/.test(e.message));
  assert.equal((await store.read(s.id)).length, 1);
  await store.close();
});
