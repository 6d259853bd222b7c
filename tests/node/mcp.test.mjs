// `sessiondb mcp` driven by the official MCP client, @modelcontextprotocol/sdk:
// its stdio transport starts the real binary, its Client lists and calls every
// tool and reads every resource, and every answer is parsed with the SDK's own
// result schemas. The client itself checks each tool's structuredContent
// against the outputSchema tools/list declared (ajv); the test checks it once
// more with the schemas closed (an undeclared field fails) and compares what
// comes back with what the CLI wrote: the text, the PNG bytes, the fork, the
// compaction, the code write. Session arguments are given as prefixes, as a
// person types them on the command line.
//
// The store is made with the CLI (`new`, `append`, `fork`, `compact`, `hook
// claude-code`). The binary is $SESSIONDB_CLI, else ../../build/sessiondb.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import Ajv from "ajv";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  ErrorCode,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  McpError,
  ReadResourceResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = process.env.SESSIONDB_CLI ?? path.resolve(here, "../../build/sessiondb");

// A valid 1x1 PNG.
const png = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex");
const pngSha256 = createHash("sha256").update(png).digest("hex");
const notesText = "line one of the notes\nline two\n";

const MAIN = "alpha-main-session";
const SIDE = "alpha-side-session";
const FORK = "bravo-fork-session";
const CODE_PATH = "/work/app/zeppelin.py";
const CODE = "def zeppelin_altitude(chart):\n    return max(chart)\n";

const ALL_TOOLS = [
  "list_sessions", "read_session", "search_history", "search_code_memory", "code_churn",
  "view_resource", "rewind_session",
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-mcp-"));
const store = path.join(dir, "store");
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI on the test's store; returns stdout, failing on a non-zero exit. */
function sdb(args, input) {
  const r = spawnSync(cli, ["--store", store, ...args], {
    input, encoding: "utf8", env: { PATH: process.env.PATH, HOME: dir },
  });
  assert.equal(r.status, 0, `sessiondb ${args.join(" ")}: ${r.stderr}${r.error ?? ""}`);
  return r.stdout;
}

function makeStore() {
  fs.writeFileSync(path.join(dir, "chart.png"), png);
  fs.writeFileSync(path.join(dir, "notes.txt"), notesText);
  sdb(["new", "--id", MAIN, "--title", "Zeppelin chart", "--meta", "project=/work/app"]);
  sdb(["append", MAIN, "What does the zeppelin chart show?", "--image",
       path.join(dir, "chart.png")]);
  sdb(["append", MAIN, "--role", "assistant", "It shows the altitude spike at noon.", "--model",
       "model-x", "--tokens", "10,5"]);
  sdb(["append", MAIN, "my notes", "--file", path.join(dir, "notes.txt")]);
  sdb(["fork", MAIN, "--at", "2", "--id", FORK, "--title", "Retry"]);
  sdb(["append", FORK, "Try the other altimeter"]);
  sdb(["compact", MAIN, "--from", "1", "--to", "2", "--summary", "asked about the chart"]);
  sdb(["new", "--id", SIDE, "--title", "Side chat"]);
  sdb(["append", SIDE, "a side question about kites"]);
  sdb(["hook", "claude-code"], JSON.stringify({
    session_id: MAIN, cwd: "/work/app", hook_event_name: "PostToolUse", tool_name: "Write",
    tool_input: { file_path: CODE_PATH, content: CODE }, tool_response: { success: true },
  }));
}

/** A connected client of `sessiondb mcp` with these extra arguments. */
async function connect(extra = []) {
  const transport = new StdioClientTransport({
    command: cli,
    args: ["--store", store, "mcp", ...extra],
    env: { HOME: dir },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => { stderr += chunk; });
  const client = new Client({ name: "sessiondb-mcp-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

// ajv as strict as it goes, and each outputSchema closed: every object that
// lists its properties gets additionalProperties false, so a field the
// server sends but the schema does not declare fails here.
const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
function closed(schema) {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = key === "enum" ? value : closed(value);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

describe("sessiondb mcp through @modelcontextprotocol/sdk", () => {
  let mcp;
  let tools;
  const validators = new Map();

  before(async () => {
    makeStore();
    mcp = await connect(["--allow-rewind"]);
  });
  after(async () => { await mcp?.client.close(); });

  /** Calls a tool that must succeed; checks the result against the SDK's schema and ours. */
  async function call(name, args) {
    const result = await mcp.client.callTool({ name, arguments: args });
    CallToolResultSchema.parse(result);
    const text = result.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
    assert.equal(result.isError, false, `${name} ${JSON.stringify(args)}: ${text}`);
    assert.ok(result.structuredContent, `${name} returned no structuredContent`);
    const validate = validators.get(name);
    assert.ok(validate(result.structuredContent),
              `${name}: ${ajv.errorsText(validate.errors)}\n` +
              JSON.stringify(result.structuredContent).slice(0, 2000));
    return { ...result, text, data: result.structuredContent };
  }

  /** Calls a tool that must fail as a tool (isError); returns its text. */
  async function callFailing(name, args) {
    const result = await mcp.client.callTool({ name, arguments: args });
    CallToolResultSchema.parse(result);
    assert.equal(result.isError, true, JSON.stringify(result));
    return result.content.map((b) => b.text).join("\n");
  }

  /** A call the server refuses with a JSON-RPC error of this code; returns its message. */
  async function refused(code, promise) {
    const error = await promise.then(
      (r) => assert.fail(`expected a JSON-RPC error, got ${JSON.stringify(r)}`), (e) => e);
    assert.ok(error instanceof McpError, String(error));
    assert.equal(error.code, code, error.message);
    return error.message;
  }

  test("tools/list declares every tool with an inputSchema and an outputSchema", async () => {
    const listed = await mcp.client.listTools();
    ListToolsResultSchema.parse(listed);
    tools = new Map(listed.tools.map((t) => [t.name, t]));
    assert.deepEqual([...tools.keys()].sort(), [...ALL_TOOLS].sort());
    for (const tool of listed.tools) {
      assert.equal(tool.inputSchema.type, "object", tool.name);
      assert.equal(tool.outputSchema?.type, "object", `${tool.name} declares no outputSchema`);
      assert.ok(tool.outputSchema.required?.length > 0, tool.name);
      validators.set(tool.name, ajv.compile(closed(tool.outputSchema)));
    }
    // Every argument naming a session says it takes a prefix.
    for (const name of ["read_session", "search_history", "view_resource", "rewind_session"]) {
      assert.match(tools.get(name).inputSchema.properties.session_id.description, /prefix/);
    }
  });

  test("list_sessions pages through the sessions, the fork with its parent", async () => {
    const { data, text } = await call("list_sessions", {});
    assert.deepEqual(data.sessions.map((s) => s.id).sort(), [MAIN, SIDE, FORK]);
    assert.equal(data.next_cursor, null);
    const fork = data.sessions.find((s) => s.id === FORK);
    assert.equal(fork.parent_id, MAIN);
    assert.equal(fork.fork_seq, 2);
    assert.equal(data.sessions.find((s) => s.id === MAIN).parent_id, null);
    assert.match(text, /Zeppelin chart/);

    const first = await call("list_sessions", { limit: 2 });
    assert.equal(first.data.sessions.length, 2);
    assert.equal(typeof first.data.next_cursor, "string");
    const rest = await call("list_sessions", { limit: 2, cursor: first.data.next_cursor });
    assert.deepEqual([...first.data.sessions, ...rest.data.sessions].map((s) => s.id).sort(),
                     [MAIN, SIDE, FORK]);
    assert.equal(rest.data.next_cursor, null);

    // The fork inherits its parent's metadata, the project with it.
    const project = await call("list_sessions", { project: "/work/app", archived: "all" });
    assert.deepEqual(project.data.sessions.map((s) => s.id).sort(), [MAIN, FORK]);
    assert.deepEqual(project.data.sessions[0].metadata, { project: "/work/app" });
  });

  test("read_session takes a prefix and gives back the messages written", async () => {
    const { data, text } = await call("read_session", { session_id: "alpha-m" });
    assert.equal(data.session.id, MAIN);
    assert.equal(data.next_from_seq, null);
    const [ask, answer, notes] = data.messages;
    assert.equal(data.messages.length, 3);
    assert.deepEqual(data.messages.map((m) => m.seq), [1, 2, 3]);  // #4 is the compaction
    assert.equal(ask.role, "user");
    assert.equal(ask.parts[0].text, "What does the zeppelin chart show?");
    assert.equal(ask.parts[1].type, "image");
    assert.equal(ask.parts[1].resource.content_sha256, pngSha256);
    assert.equal(ask.parts[1].resource.mime, "image/png");
    assert.equal(ask.parts[1].resource.size, png.length);
    assert.equal(ask.usage, null);
    assert.equal(answer.role, "assistant");
    assert.equal(answer.model, "model-x");
    assert.deepEqual(answer.usage,
                     { input_tokens: 10, output_tokens: 5, cached_tokens: 0, reasoning_tokens: 0,
                       cache_write_tokens: 0 });
    assert.equal(notes.parts[1].type, "file");
    assert.match(text, /It shows the altitude spike at noon\./);

    const page = await call("read_session", { session_id: "alpha-ma", limit: 1 });
    assert.equal(page.data.messages.length, 1);
    assert.equal(page.data.next_from_seq, 2);
    const cut = await call("read_session", { session_id: MAIN, from_seq: 2, max_text_chars: 8 });
    assert.equal(cut.data.messages[0].parts[0].text, "It shows");

    // The fork: the parent's first two messages, then its own.
    const fork = await call("read_session", { session_id: "bravo", last: 1 });
    assert.equal(fork.data.session.id, FORK);
    assert.equal(fork.data.messages[0].parts[0].text, "Try the other altimeter");
    const whole = await call("read_session", { session_id: "bravo-f" });
    assert.deepEqual(whole.data.messages.map((m) => m.parts[0].text), [
      "What does the zeppelin chart show?", "It shows the altitude spike at noon.",
      "Try the other altimeter",
    ]);
  });

  test("search_history finds messages, the compaction and the code write", async () => {
    const { data } = await call("search_history",
                                { query: "altitude", mode: "keyword", session_id: "alpha-ma" });
    assert.equal(data.query, "altitude");
    assert.equal(data.mode, "keyword");
    assert.ok(data.hits.length >= 1, JSON.stringify(data));
    for (const hit of data.hits) assert.equal(hit.session_id, MAIN);
    assert.ok(data.hits.some((h) => h.kind === "message" && h.seq === 2 && h.role === "assistant"));

    const summary = await call("search_history", { query: "asked chart", mode: "keyword" });
    assert.ok(summary.data.hits.some((h) => h.kind === "compaction" && h.role === null),
              JSON.stringify(summary.data.hits));

    const code = await call("search_history", { query: "zeppelin_altitude", kind: "code" });
    const write = code.data.hits.find((h) => h.kind === "code_write");
    assert.ok(write, JSON.stringify(code.data));
    assert.equal(write.file_path, CODE_PATH);

    const hybrid = await call("search_history", { query: "altimeter", limit: 5 });
    assert.ok(hybrid.data.hits.some((h) => h.session_id === FORK), JSON.stringify(hybrid.data));
  });

  test("search_code_memory and code_churn recall the code write", async () => {
    const { data } = await call("search_code_memory", { path: CODE_PATH, code: CODE });
    assert.equal(data.path, CODE_PATH);
    assert.equal(data.recalled[0]?.file_path, CODE_PATH, JSON.stringify(data));
    assert.equal(data.recalled[0].session_id, MAIN);
    assert.match(data.recalled[0].preview, /zeppelin_altitude/);
    assert.equal(data.churn.file_path, CODE_PATH);
    assert.equal(data.churn.edits_30d, 1);
    assert.ok(Array.isArray(data.warnings));

    const churn = await call("code_churn", {});
    assert.deepEqual(churn.data.entries.map((e) => [e.file_path, e.edits_30d, e.tier]),
                     [[CODE_PATH, 1, "gold"]]);
    const functions = await call("code_churn", { functions: true, path_prefix: "/work" });
    assert.ok(functions.data.entries.every((e) => e.file_path === CODE_PATH));
  });

  test("view_resource returns the PNG byte for byte and the notes as text", async () => {
    const read = await call("read_session", { session_id: MAIN });
    const imageId = read.data.messages[0].parts[1].resource.resource_id;
    const notesId = read.data.messages[2].parts[1].resource.resource_id;

    for (const session of ["alpha-m", "bravo"]) {  // the fork inherits the image
      const r = await call("view_resource", { session_id: session, resource_id: imageId });
      const image = r.content.find((b) => b.type === "image");
      assert.ok(image, JSON.stringify(r.content));
      assert.equal(image.mimeType, "image/png");
      assert.deepEqual(Buffer.from(image.data, "base64"), png);
      assert.equal(r.data.resource.resource_id, imageId);
      assert.equal(r.data.resource.content_sha256, pngSha256);
      assert.equal(r.data.message_seq, 1);
    }
    const notes = await call("view_resource", { session_id: "alpha-mai", resource_id: notesId });
    assert.ok(notes.text.includes(notesText), notes.text);
    assert.equal(notes.data.message_seq, 3);
  });

  test("resources and templates list and read back what the store holds", async () => {
    const listed = await mcp.client.listResources();
    ListResourcesResultSchema.parse(listed);
    assert.deepEqual(listed.resources.map((r) => r.uri).sort(),
                     [MAIN, SIDE, FORK].map((id) => `sessiondb://session/${id}`).sort());
    for (const resource of listed.resources) {
      const read = await mcp.client.readResource({ uri: resource.uri });
      ReadResourceResultSchema.parse(read);
      assert.equal(read.contents[0].uri, resource.uri);
      assert.equal(read.contents[0].mimeType, "text/plain");
      assert.match(read.contents[0].text, new RegExp(resource.name));
    }
    const main = await mcp.client.readResource({ uri: `sessiondb://session/${MAIN}` });
    assert.match(main.contents[0].text, /What does the zeppelin chart show\?/);
    // A prefix names the session here too.
    const byPrefix = await mcp.client.readResource({ uri: "sessiondb://session/bravo" });
    assert.match(byPrefix.contents[0].text, /Try the other altimeter/);

    const templates = await mcp.client.listResourceTemplates();
    ListResourceTemplatesResultSchema.parse(templates);
    assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), [
      "sessiondb://session/{session_id}",
      "sessiondb://session/{session_id}/resource/{resource_id}",
    ]);
    const read = await call("read_session", { session_id: MAIN });
    const imageId = read.data.messages[0].parts[1].resource.resource_id;
    const notesId = read.data.messages[2].parts[1].resource.resource_id;
    const fill = (id, resource) => templates.resourceTemplates[1].uriTemplate
      .replace("{session_id}", id).replace("{resource_id}", resource);

    const image = await mcp.client.readResource({ uri: fill(MAIN, imageId) });
    ReadResourceResultSchema.parse(image);
    assert.equal(image.contents[0].mimeType, "image/png");
    assert.deepEqual(Buffer.from(image.contents[0].blob, "base64"), png);
    const inherited = await mcp.client.readResource({ uri: fill("bravo", imageId) });
    assert.deepEqual(Buffer.from(inherited.contents[0].blob, "base64"), png);
    const notes = await mcp.client.readResource({ uri: fill(MAIN, notesId) });
    ReadResourceResultSchema.parse(notes);
    assert.equal(notes.contents[0].text, notesText);
    const session = await mcp.client.readResource({
      uri: templates.resourceTemplates[0].uriTemplate.replace("{session_id}", SIDE),
    });
    assert.match(session.contents[0].text, /a side question about kites/);
  });

  test("hostile calls get clear errors and the server serves the next call", async () => {
    const unknownTool = await refused(
      ErrorCode.InvalidParams, mcp.client.callTool({ name: "delete_session", arguments: {} }));
    assert.match(unknownTool, /Unknown tool: delete_session/);
    await mcp.client.ping();

    const wrongType = await refused(ErrorCode.InvalidParams, mcp.client.callTool(
      { name: "read_session", arguments: { session_id: 42 } }));
    assert.match(wrongType, /'session_id' must be a string/);
    const notANumber = await refused(ErrorCode.InvalidParams, mcp.client.callTool(
      { name: "read_session", arguments: { session_id: MAIN, limit: "many" } }));
    assert.match(notANumber, /'limit' must be an integer/);
    assert.equal((await call("list_sessions", {})).data.sessions.length, 3);

    // An ambiguous prefix names the candidates, as the CLI does.
    for (const [name, args] of [
      ["read_session", { session_id: "alpha" }],
      ["search_history", { query: "chart", session_id: "alpha" }],
      ["view_resource", { session_id: "alpha", resource_id: "res_x" }],
      ["rewind_session", { session_id: "alpha", to_seq: 0 }],
    ]) {
      const text = await callFailing(name, args);
      assert.match(text, /prefix 'alpha' is ambiguous/, name);
      assert.ok(text.includes(MAIN) && text.includes(SIDE), text);
    }
    const ambiguous = await refused(-32602, mcp.client.readResource(
      { uri: "sessiondb://session/alpha" }));
    assert.match(ambiguous, /ambiguous/);

    // Unknown ids, and a prefix too short to be looked up.
    for (const id of ["zulu-nope", "alp"]) {
      const text = await callFailing("read_session", { session_id: id });
      assert.match(text, new RegExp(`session '${id}' does not exist`), text);
      assert.match(text, /list_sessions/);
    }
    assert.match(await callFailing("view_resource", { session_id: MAIN, resource_id: "res_nope" }),
                 /res_nope/);
    const missing = await refused(-32002, mcp.client.readResource(
      { uri: "sessiondb://session/zulu-nope" }));
    assert.match(missing, /zulu-nope/);

    await mcp.client.ping();
    const still = await call("read_session", { session_id: "alpha-s" });
    assert.equal(still.data.messages[0].parts[0].text, "a side question about kites");
    assert.equal(mcp.stderr().includes("Internal error"), false, mcp.stderr());
  });

  test("rewind_session (with --allow-rewind) ends a session's view", async () => {
    const { data, text } = await call("rewind_session", { session_id: "alpha-s", to_seq: 0 });
    assert.equal(data.event.type, "rewind");
    assert.equal(data.event.session_id, SIDE);
    assert.equal(data.event.rewind.to_seq, 0);
    assert.equal(data.session.id, SIDE);
    assert.equal(data.session.message_count, 0);
    assert.match(text, /to seq 0/);
    const read = await call("read_session", { session_id: SIDE });
    assert.deepEqual(read.data.messages, []);
    assert.match(await callFailing("rewind_session", { session_id: "alpha-m", to_seq: 99 }), /99/);
  });

  test("without --allow-rewind no rewind_session, and the same outputSchemas", async () => {
    const readOnly = await connect();
    try {
      const listed = await readOnly.client.listTools();
      ListToolsResultSchema.parse(listed);
      assert.deepEqual(listed.tools.map((t) => t.name).sort(),
                       ALL_TOOLS.filter((n) => n !== "rewind_session").sort());
      for (const tool of listed.tools) {
        assert.deepEqual(tool.outputSchema, tools.get(tool.name).outputSchema, tool.name);
        assert.equal(tool.annotations.readOnlyHint, true, tool.name);
      }
      const message = await refused(ErrorCode.InvalidParams, readOnly.client.callTool(
        { name: "rewind_session", arguments: { session_id: MAIN, to_seq: 0 } }));
      assert.match(message, /Unknown tool: rewind_session/);
      const result = await readOnly.client.callTool(
        { name: "read_session", arguments: { session_id: "alpha-ma", last: 1 } });
      CallToolResultSchema.parse(result);
      assert.equal(result.structuredContent.messages[0].parts[0].text, "my notes");
    } finally {
      await readOnly.client.close();
    }
  });
});
