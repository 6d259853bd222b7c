// SessiondbSession (sessiondb/agents) against the OpenAI Agents SDK's own
// MemorySession: every behaviour the SDK's Session documents runs on both,
// with the same assertions, so the drop-in is held to the real thing. Then
// what only a store can do: images and bytes kept as blobs, items that
// survive the process, and pops from two processes that neither lose nor
// double an item.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { MemorySession, protocol } from "@openai/agents";
import { packageDir, pngBytes, require, sessiondb, tempDir } from "./support.mjs";

const { SessiondbSession } = require(path.join(packageDir, "lib/agents.js"));
const { Store } = sessiondb;

const pngUrl = (n) => `data:image/png;base64,${pngBytes(n).toString("base64")}`;
const pdfUrl = `data:application/pdf;base64,${Buffer.from("%PDF-1.4\n% a tiny pdf\n").toString("base64")}`;

// One item of each kind a run puts in a session, in the SDK's own shapes
// (each is checked against its schema below, so they stay real).
function everyKindOfItem() {
  return [
    { role: "user", content: "What is in this picture?" },
    { type: "message", role: "user", content: [
      { type: "input_text", text: "and this one" },
      { type: "input_image", image: pngUrl(1), detail: "high" },
      { type: "input_file", file: pdfUrl, filename: "tiny.pdf" },
    ] },
    { type: "message", role: "system", content: "Be brief." },
    { type: "reasoning", id: "rs_1", content: [{ type: "input_text", text: "Two images; describe both." }],
      providerData: { encrypted_content: "gAAAA-opaque" } },
    { type: "function_call", id: "fc_1", callId: "call_1", name: "describe_image",
      arguments: '{"detail":"high"}', status: "completed" },
    { type: "function_call_result", callId: "call_1", name: "describe_image", status: "completed",
      output: { type: "text", text: "a single red pixel" } },
    { type: "function_call_result", callId: "call_2", name: "screenshot", status: "completed",
      output: [{ type: "input_image", image: pngUrl(2) }] },
    { type: "hosted_tool_call", id: "ws_1", name: "web_search_call", status: "completed",
      arguments: '{"query":"red pixel"}', providerData: { action: { type: "search" } } },
    { type: "message", id: "msg_1", role: "assistant", status: "completed",
      content: [{ type: "output_text", text: "Both are one red pixel.", providerData: { annotations: [] } }] },
    { role: "user", content: [{ type: "input_text", text: "" }], providerData: { note: null } },
  ];
}

const implementations = [
  { name: "MemorySession (@openai/agents)", make: (sessionId) => new MemorySession({ sessionId }) },
  { name: "SessiondbSession", make: (sessionId) => new SessiondbSession({ sessionId, store: sharedDir }) },
];
const sharedDir = path.join(tempDir(), "store");
let ids = 0;
const newId = () => `session-${process.pid}-${++ids}`;
const texts = (n) => Array.from({ length: n }, (_, i) => ({ role: "user", content: `item ${i}` }));

test("the test items are valid Agents SDK items", () => {
  for (const item of everyKindOfItem()) {
    assert.ok(protocol.ModelItem.safeParse(item).success, JSON.stringify(item).slice(0, 120));
  }
});

for (const impl of implementations) {
  describe(impl.name, () => {
    test("a new session has no items, and popItem on it gives undefined", async () => {
      const session = impl.make(newId());
      assert.deepEqual(await session.getItems(), []);
      assert.deepEqual(await session.getItems(5), []);
      assert.equal(await session.popItem(), undefined);
    });

    test("getSessionId gives the id it was made with", async () => {
      const id = newId();
      assert.equal(await impl.make(id).getSessionId(), id);
    });

    test("every kind of item comes back equal, in the order added", async () => {
      const session = impl.make(newId());
      const items = everyKindOfItem();
      await session.addItems(items.slice(0, 4));
      await session.addItems(items.slice(4));
      assert.deepStrictEqual(await session.getItems(), everyKindOfItem());
    });

    test("getItems(limit) gives the latest `limit` items, oldest first", async () => {
      const session = impl.make(newId());
      await session.addItems(texts(5));
      assert.deepStrictEqual(await session.getItems(2), texts(5).slice(3));
      assert.deepStrictEqual(await session.getItems(1), texts(5).slice(4));
      assert.deepStrictEqual(await session.getItems(5), texts(5));
      assert.deepStrictEqual(await session.getItems(50), texts(5));
      assert.deepStrictEqual(await session.getItems(0), []);
      assert.deepStrictEqual(await session.getItems(-1), []);
    });

    test("addItems of nothing changes nothing", async () => {
      const session = impl.make(newId());
      await session.addItems(texts(2));
      await session.addItems([]);
      assert.deepStrictEqual(await session.getItems(), texts(2));
    });

    test("popItem removes and returns the latest item, down to undefined", async () => {
      const session = impl.make(newId());
      const items = everyKindOfItem();
      await session.addItems(items);
      for (let i = items.length - 1; i >= 0; i--) {
        assert.deepStrictEqual(await session.popItem(), everyKindOfItem()[i]);
        assert.equal((await session.getItems()).length, i);
      }
      assert.equal(await session.popItem(), undefined);
      await session.addItems(texts(1));
      assert.deepStrictEqual(await session.getItems(), texts(1));
    });

    test("clearSession removes every item; adds after it start afresh", async () => {
      const session = impl.make(newId());
      await session.addItems(texts(3));
      await session.clearSession();
      assert.deepStrictEqual(await session.getItems(), []);
      assert.equal(await session.popItem(), undefined);
      await session.clearSession();  // clearing an empty session is fine
      await session.addItems(texts(2));
      assert.deepStrictEqual(await session.getItems(), texts(2));
    });

    test("items given and taken are copies", async () => {
      const session = impl.make(newId());
      const item = { type: "message", role: "user", content: [{ type: "input_text", text: "kept" }] };
      await session.addItems([item]);
      item.content[0].text = "changed after adding";
      const [read] = await session.getItems();
      read.content[0].text = "changed after reading";
      assert.equal((await session.getItems())[0].content[0].text, "kept");
    });
  });
}

describe("SessiondbSession, beyond MemorySession", () => {
  test("images and files leave the JSON for blobs, and come back byte-identical", async () => {
    const dir = path.join(tempDir(), "store");
    const session = new SessiondbSession({ sessionId: "blobs", store: dir });
    const bytes = new Uint8Array(pngBytes(7));
    const items = [
      { type: "message", role: "user", content: [{ type: "input_image", image: pngUrl(5) },
                                                   { type: "input_file", file: pdfUrl, filename: "a.pdf" }] },
      { type: "function_call_result", callId: "c", name: "shot", status: "completed",
        output: { type: "image", image: { data: bytes, mediaType: "image/png" } } },
    ];
    await session.addItems(items);
    const got = await session.getItems();
    assert.deepStrictEqual(got, items);
    assert.ok(got[1].output.image.data instanceof Uint8Array);

    const store = await session.getStore();
    const [withImage, withBytes] = await store.read("blobs");
    const metadataText = JSON.stringify([withImage.metadata, withBytes.metadata]);
    for (const payload of [pngBytes(5), Buffer.from("%PDF-1.4\n% a tiny pdf\n"), pngBytes(7)]) {
      assert.ok(!metadataText.includes(payload.toString("base64")), "base64 left in the metadata");
    }
    const attachments = [...withImage.parts, ...withBytes.parts].filter((p) => p.type === "image" || p.type === "file");
    assert.deepEqual(attachments.map((p) => p.resource.mime), ["image/png", "application/pdf", "image/png"]);
    assert.deepEqual(await store.readBlob(attachments[0].resource.content_sha256), pngBytes(5));
    assert.deepEqual(await store.readBlob(attachments[2].resource.content_sha256), pngBytes(7));
    await session.close();
  });

  test("an attachment the store refuses is kept inline, and the item still comes back equal", async () => {
    const store = await Store.open(path.join(tempDir(), "store"), { maxFileBytes: 8 });
    const session = new SessiondbSession({ sessionId: "refused", store });
    const items = [{ type: "message", role: "user", content: [{ type: "input_image", image: pngUrl(9) }] }];
    await session.addItems(items);
    assert.deepStrictEqual(await session.getItems(), items);
    const [stored] = await store.read("refused");
    assert.equal(stored.parts.filter((p) => p.type === "image" || p.type === "file").length, 0);
    await session.close();
    assert.equal(store.closed, false, "a Store given to the session stays open");
    await store.close();
  });

  test("items outlive the session object and the store: a reopen reads them", async () => {
    const dir = path.join(tempDir(), "store");
    const id = "user@example.com/chat 1";  // not a store id: kept under a hash of it
    const first = new SessiondbSession({ sessionId: id, store: dir });
    await first.addItems(everyKindOfItem());
    await first.popItem();
    await first.close();
    const again = new SessiondbSession({ sessionId: id, store: dir });
    assert.deepStrictEqual(await again.getItems(), everyKindOfItem().slice(0, -1));
    assert.equal(await again.getSessionId(), id);
    assert.match(again.storeSessionId, /^agents-[0-9a-f]{40}$/);
    const store = await again.getStore();
    assert.equal((await store.getSession(again.storeSessionId)).metadata.agents_session_id, id);
    await again.close();
  });

  test("popItem and clearSession rewind the view; the log keeps every item", async () => {
    const session = new SessiondbSession({ sessionId: "audit", store: path.join(tempDir(), "store") });
    await session.addItems(texts(3));
    await session.popItem();
    await session.clearSession();
    const store = await session.getStore();
    const events = await store.readEvents("audit");
    assert.deepEqual(events.map((e) => e.type), ["message", "message", "message", "rewind", "rewind"]);
    assert.deepEqual(events.slice(3).map((e) => e.rewind.to_seq), [2, 0]);
    await session.close();
  });

  test("with no store, a session keeps its items in a temporary store that close() deletes", async () => {
    const session = new SessiondbSession();
    await session.addItems(texts(2));
    assert.deepStrictEqual(await session.getItems(), texts(2));
    const store = await session.getStore();
    assert.ok(fs.existsSync(store.location));
    await session.close();
    assert.ok(!fs.existsSync(store.location));
    await assert.rejects(session.getItems(), (e) => e.code === "failed_precondition");
  });

  test("pops from two processes on one session neither lose nor double an item", async () => {
    const dir = path.join(tempDir(), "store");
    const count = 120;
    const seed = new SessiondbSession({ sessionId: "shared", store: dir });
    await seed.addItems(texts(count));
    await seed.close();
    const child = `
      const { createRequire } = await import("node:module");
      const require = createRequire(${JSON.stringify(import.meta.url)});
      const { SessiondbSession } = require(${JSON.stringify(path.join(packageDir, "lib/agents.js"))});
      const session = new SessiondbSession({ sessionId: "shared", store: ${JSON.stringify(dir)} });
      const popped = [];
      for (let item; (item = await session.popItem()) !== undefined;) popped.push(item.content);
      await session.close();
      process.stdout.write(JSON.stringify(popped));`;
    const run = () => promisify(execFile)(process.execPath, ["--input-type=module", "-e", child],
                                          { env: process.env, maxBuffer: 1 << 24 });
    const outputs = await Promise.all([run(), run()]);
    const popped = outputs.map(({ stdout }) => JSON.parse(stdout));
    const all = popped.flat();
    assert.equal(all.length, count, `popped ${popped.map((p) => p.length).join(" + ")}`);
    assert.deepEqual(new Set(all), new Set(texts(count).map((i) => i.content)));
    for (const mine of popped) {  // each process took them newest first
      const numbers = mine.map((c) => Number(c.split(" ")[1]));
      assert.deepEqual(numbers, [...numbers].sort((a, b) => b - a));
    }
    const after = new SessiondbSession({ sessionId: "shared", store: dir });
    assert.deepStrictEqual(await after.getItems(), []);
    await after.close();
  });
});
