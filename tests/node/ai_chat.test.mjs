// sessiondb/ai: chats of the Vercel AI SDK (UIMessage[]) saved and loaded
// unchanged, their files in the blob store, each save appending only what is
// new; and its types, compiled with the real `ai` package's UIMessage.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { packageDir, pngBytes, require, sessiondb, tempDir } from "./support.mjs";

const { createChat, loadChat, saveChat } = require(path.join(packageDir, "lib/ai.js"));
const here = path.dirname(fileURLToPath(import.meta.url));
const pdf = Buffer.from("%PDF-1.4\n% one page\n");

// A conversation with every kind of part a chat route saves.
function conversation() {
  return [
    { id: "u1", role: "user", parts: [
      { type: "text", text: "What is in this picture, and what is the weather in Paris?" },
      { type: "file", mediaType: "image/png", filename: "pixel.png",
        url: `data:image/png;base64,${pngBytes(1).toString("base64")}` },
    ] },
    { id: "a1", role: "assistant", metadata: { model: "gpt-test", createdAt: 1700000000000 }, parts: [
      { type: "step-start" },
      { type: "reasoning", text: "A picture and a tool call.", state: "done",
        providerMetadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: null } } },
      { type: "tool-weather", toolCallId: "call_1", state: "output-available",
        input: { city: "Paris" }, output: { tempC: 21, sky: "clear" } },
      { type: "dynamic-tool", toolName: "lookup", toolCallId: "call_2", state: "output-error",
        input: { q: "pixel" }, errorText: "timed out" },
      { type: "source-url", sourceId: "s1", url: "https://example.com/pixels", title: "Pixels" },
      { type: "data-progress", id: "p1", data: { percent: 100 } },
      { type: "text", text: "One red pixel; 21 °C and clear in Paris.", state: "done" },
    ] },
    { id: "u2", role: "user", parts: [
      { type: "file", mediaType: "application/pdf", filename: "notes.pdf",
        url: `data:application/pdf;base64,${pdf.toString("base64")}` },
      { type: "file", mediaType: "image/png", url: "https://example.com/remote.png" },
      { type: "text", text: "Summarize these.", providerMetadata: undefined },
    ] },
  ];
}

async function openStore() {
  return sessiondb.Store.open(path.join(tempDir(), "store"));
}

test("a saved chat loads back equal: text, reasoning, tools, data, sources and files", async () => {
  const store = await openStore();
  await saveChat(store, "chat-1", conversation());
  assert.deepStrictEqual(await loadChat(store, "chat-1"), conversation());
  await store.close();
});

test("files sent as data URLs are kept as blobs, not as base64 in the metadata", async () => {
  const store = await openStore();
  await saveChat(store, "chat-2", conversation());
  const stored = await store.read("chat-2");
  const metadata = JSON.stringify(stored.map((m) => m.metadata));
  assert.ok(!metadata.includes(pngBytes(1).toString("base64")));
  assert.ok(!metadata.includes(pdf.toString("base64")));
  const files = stored.flatMap((m) => m.parts).filter((p) => p.type === "image" || p.type === "file");
  assert.deepEqual(files.map((p) => [p.type, p.resource.mime]), [["image", "image/png"], ["file", "application/pdf"]]);
  assert.deepEqual(await store.readBlob(files[0].resource.content_sha256), pngBytes(1));
  assert.deepEqual(await store.readBlob(files[1].resource.content_sha256), pdf);
  // The parts search and the projections see.
  assert.deepEqual(stored[1].parts.map((p) => p.type),
                   ["reasoning", "tool_call", "tool_result", "tool_call", "tool_result", "text"]);
  assert.equal(stored[1].parts[4].is_error, true);
  await store.close();
});

test("each save appends only the new messages; an unchanged save writes nothing", async () => {
  const store = await openStore();
  const [u1, a1, u2] = conversation();
  assert.deepEqual(await saveChat(store, "chat-3", [u1]), { kept: 0, appended: 1 });
  assert.deepEqual(await saveChat(store, "chat-3", [u1, a1]), { kept: 1, appended: 1 });
  assert.deepEqual(await saveChat(store, "chat-3", [u1, a1, u2]), { kept: 2, appended: 1 });
  assert.deepEqual(await saveChat(store, "chat-3", conversation()), { kept: 3, appended: 0 });
  assert.equal((await store.readEvents("chat-3")).length, 3);
  assert.deepStrictEqual(await loadChat(store, "chat-3"), conversation());
  await store.close();
});

test("a changed message rewinds the chat to before it; the log keeps the old version", async () => {
  const store = await openStore();
  const [u1, a1, u2] = conversation();
  await saveChat(store, "chat-4", [u1, a1, u2]);
  const regenerated = { ...a1, parts: [{ type: "text", text: "Regenerated answer." }] };
  assert.deepEqual(await saveChat(store, "chat-4", [u1, regenerated]), { kept: 1, appended: 1 });
  assert.deepStrictEqual(await loadChat(store, "chat-4"), [u1, regenerated]);
  assert.deepEqual(await saveChat(store, "chat-4", [u1]), { kept: 1, appended: 0 });
  assert.deepStrictEqual(await loadChat(store, "chat-4"), [u1]);
  const events = await store.readEvents("chat-4");
  assert.deepEqual(events.map((e) => e.type), ["message", "message", "message", "rewind", "message", "rewind"]);
  await store.close();
});

test("a chat never saved loads as []; createChat and any chat id work", async () => {
  const store = await openStore();
  assert.deepEqual(await loadChat(store, "nobody"), []);
  const id = await createChat(store, { title: "New chat" });
  assert.deepEqual(await loadChat(store, id), []);
  assert.equal((await store.getSession(id)).title, "New chat");
  const odd = "user@example.com/chat #1";  // not a store session id: kept under a hash
  await saveChat(store, odd, conversation().slice(0, 1));
  assert.deepStrictEqual(await loadChat(store, odd), conversation().slice(0, 1));
  await store.close();
});

test("the types check a chat route against the ai package's UIMessage, and refuse misuse", () => {
  // A project as a user's would be: node_modules with the tests' packages and
  // sessiondb (this checkout's bindings/node, through its package.json exports).
  const project = tempDir("sessiondb-ts-");
  const modules = path.join(project, "node_modules");
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(here, "node_modules"))) {
    if (!entry.startsWith(".")) fs.symlinkSync(path.join(here, "node_modules", entry), path.join(modules, entry));
  }
  fs.symlinkSync(packageDir, path.join(modules, "sessiondb"));
  for (const file of ["ai_types.ts", "ai_types_wrong.ts"]) fs.copyFileSync(path.join(here, file), path.join(project, file));
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ type: "module" }));
  fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext",
                       moduleResolution: "NodeNext", preserveSymlinks: true, types: ["node"],
                       // The installed `ai` types name @types/json-schema, which is not installed.
                       skipLibCheck: true },
    files: ["ai_types.ts", "ai_types_wrong.ts"] }));
  const tsc = spawnSync(path.join(here, "node_modules/.bin/tsc"), ["-p", project, "--pretty", "false"],
                        { cwd: project, encoding: "utf8", timeout: 60_000 });
  const errors = tsc.stdout.split("\n").filter((line) => /error TS\d+/.test(line));
  assert.deepEqual(errors.filter((e) => !e.startsWith("ai_types_wrong.ts(")), [], "ai_types.ts must compile");
  // Every misuse fails, on the line after its WRONG comment, and nothing else does.
  const wrongLines = fs.readFileSync(path.join(here, "ai_types_wrong.ts"), "utf8").split("\n")
    .flatMap((line, i) => (line.includes("// WRONG") ? [i + 2] : []));
  assert.equal(wrongLines.length, 4);
  const failedLines = [...new Set(errors.map((e) => Number(/^ai_types_wrong\.ts\((\d+),/.exec(e)?.[1])))];
  assert.deepEqual(failedLines, wrongLines, tsc.stdout);
  assert.notEqual(tsc.status, 0);
});
