// Chats of the Vercel AI SDK (its UIMessage[], the `ai` package) kept in
// sessiondb: what a chat route needs to persist the conversation.
//
//   const { Store } = require("sessiondb");
//   const { loadChat, saveChat } = require("sessiondb/ai");
//   const store = await Store.open("chats");
//   // in the route:
//   const messages = await loadChat(store, chatId);
//   ... streamText(...).toUIMessageStreamResponse({ originalMessages: messages,
//         onFinish: ({ messages }) => saveChat(store, chatId, messages) });
//
// Each UIMessage is one message of the chat's session, stored losslessly:
// the message itself in the metadata (_lossless.js), its text, reasoning and
// tool calls as parts (for search and the projections), and its files sent
// as data URLs (`file` parts: images, PDFs...) moved to the blob store and
// given back as the same data URL. saveChat takes the whole list, as the
// SDK's onFinish gives it, and appends only what is new; a message that
// changed (a regenerated answer, a tool result that arrived) rewinds the
// chat to before it, so the log keeps every version.
"use strict";

const { BusyError } = require("./errors.js");

const crypto = require("node:crypto");
const lossless = require("./_lossless.js");
const { storeSessionId } = require("./_session_ids.js");

const MESSAGE_KEY = "ai_ui_message";   // the UIMessage's template
const SLOTS_KEY = "ai_ui_slots";       // its slots (_lossless.js)
const DIGEST_KEY = "ai_ui_sha256";     // what it was, to tell a changed message from a kept one
const ROLES = new Set(["user", "assistant", "system"]);
const SAVE_ATTEMPTS = 50;
const MAX_ATTACHMENT_BYTES = 100 * 1024 * 1024;  // the engine's default max_file_bytes

const isNotFound = (e) => e && e.code === "not_found";

function digestOf(message) {
  return crypto.createHash("sha256").update(JSON.stringify(message) ?? "", "utf8").digest("hex");
}

function jsonObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? JSON.parse(JSON.stringify(value)) : {};
}

// The parts search and projections see for one UI part (the storage is the metadata).
function searchableParts(part) {
  if (part.type === "text" && part.text) return [{ type: "text", text: part.text }];
  if (part.type === "reasoning" && part.text) return [{ type: "reasoning", text: part.text }];
  const isTool = typeof part.type === "string" && (part.type.startsWith("tool-") || part.type === "dynamic-tool");
  if (!isTool || !part.toolCallId) return [];
  const toolName = part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
  const out = [{ type: "tool_call", tool_call_id: part.toolCallId, tool_name: toolName || "tool",
                 arguments: jsonObject(part.input) }];
  if (part.state === "output-available") {
    const text = typeof part.output === "string" ? part.output : JSON.stringify(part.output ?? null);
    out.push({ type: "tool_result", tool_call_id: part.toolCallId, text });
  } else if (part.state === "output-error") {
    out.push({ type: "tool_result", tool_call_id: part.toolCallId, text: String(part.errorText ?? ""),
               is_error: true });
  }
  return out;
}

/** The store message that keeps `message` (extract: move its data URLs to blobs). */
function toStoreMessage(message, extract = true) {
  if (!message || typeof message !== "object" || !ROLES.has(message.role) || !Array.isArray(message.parts)) {
    throw new TypeError("a UIMessage has a role (user, assistant or system) and a list of parts");
  }
  const { template, slots, attachments } = lossless.encode(message, { extract, maxBytes: MAX_ATTACHMENT_BYTES });
  // Each UI part's own parts, then its attachments, so a picture stays beside
  // its text; attachments outside the parts (in metadata) come last.
  const parts = [];
  const ordered = [];
  const byPart = new Map();
  const elsewhere = [];
  for (const a of attachments) {
    const [root, index] = a.slot[0];
    if (root === "parts" && Number.isInteger(index)) {
      if (!byPart.has(index)) byPart.set(index, []);
      byPart.get(index).push(a);
    } else {
      elsewhere.push(a);
    }
  }
  message.parts.forEach((part, i) => {
    if (part && typeof part === "object") parts.push(...searchableParts(part));
    for (const a of byPart.get(i) || []) {
      const name = part && typeof part.filename === "string" ? part.filename : undefined;
      parts.push({ type: "file", source: a.bytes, mime: part.mediaType || a.mime, ...(name ? { name } : {}) });
      ordered.push(a);
    }
  });
  for (const a of elsewhere) {
    parts.push({ type: "file", source: a.bytes, mime: a.mime });
    ordered.push(a);
  }
  if (parts.length === 0) parts.push({ type: "text", text: `(${message.role} message)` });
  const metadata = { [MESSAGE_KEY]: template, [DIGEST_KEY]: digestOf(message) };
  const allSlots = [...ordered.map((a) => a.slot), ...slots];
  if (allSlots.length) metadata[SLOTS_KEY] = allSlots;
  return { role: message.role, parts, metadata };
}

// The UIMessage a stored message holds; one this module did not write (an
// import, another face) is given its text and reasoning parts.
async function toUIMessage(store, stored) {
  const metadata = stored.metadata || {};
  if (!(MESSAGE_KEY in metadata)) {
    const parts = stored.parts
      .filter((p) => (p.type === "text" || p.type === "reasoning") && p.text)
      .map((p) => ({ type: p.type, text: p.text }));
    return { id: stored.id, role: ROLES.has(stored.role) ? stored.role : "assistant", parts };
  }
  const slots = metadata[SLOTS_KEY] || [];
  const blobs = await lossless.readAttachments(store, stored, slots.filter(lossless.hasAttachment).length);
  return lossless.decode(structuredClone(metadata[MESSAGE_KEY]), slots, blobs);
}

async function readView(store, sessionId) {
  const out = [];
  try {
    for await (const m of store.messages(sessionId)) out.push(m);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  return out;
}

/**
 * A new chat (a session of the store); resolves to its id. options.id: the
 * id to use (an AI SDK chat id); options.title, options.metadata: the session's.
 */
async function createChat(store, options = {}) {
  const made = {};
  if (options.id !== undefined) made.id = storeSessionId(options.id, "chat");
  if (options.title !== undefined) made.title = options.title;
  if (options.metadata !== undefined) made.metadata = options.metadata;
  return (await store.createSession(made)).id;
}

/** The chat's messages, as saveChat was last given them; [] for a chat never saved. */
async function loadChat(store, chatId) {
  const stored = await readView(store, storeSessionId(chatId, "chat"));
  return Promise.all(stored.map((m) => toUIMessage(store, m)));
}

/**
 * Saves the chat as `messages` (the whole list, as useChat and onFinish give
 * it), creating it if need be. The messages the chat already holds, in the
 * same place and unchanged, are kept; from the first that differs on, the
 * chat is rewound (the log keeps the old versions) and the rest appended in
 * one batch. Resolves to { kept, appended }.
 *
 * Two saves of one chat at once: each rewinds only the log it read
 * (Store.rewindIfUnchanged) and reads again otherwise.
 */
async function saveChat(store, chatId, messages) {
  if (!Array.isArray(messages)) throw new TypeError("saveChat(store, chatId, messages): messages is a UIMessage[]");
  const sessionId = storeSessionId(chatId, "chat");
  const digests = messages.map(digestOf);
  for (let attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
    let lastSeq = 0;
    try {
      lastSeq = (await store.getSession(sessionId)).last_seq;
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await createChatIfMissing(store, sessionId, chatId);
      continue;
    }
    const stored = await readView(store, sessionId);
    let kept = 0;
    while (kept < stored.length && kept < messages.length &&
           (stored[kept].metadata || {})[DIGEST_KEY] === digests[kept]) kept++;
    if (kept < stored.length) {
      const toSeq = kept === 0 ? 0 : stored[kept - 1].seq;
      if (!(await store.rewindIfUnchanged(sessionId, toSeq, lastSeq))) continue;  // another save landed
    }
    const rest = messages.slice(kept);
    if (rest.length) await appendMessages(store, sessionId, rest);
    return { kept, appended: rest.length };
  }
  throw new BusyError(`saveChat ${JSON.stringify(chatId)}: other saves kept changing ` +
                      `the chat (${SAVE_ATTEMPTS} attempts); try again`, "busy");
}

async function createChatIfMissing(store, sessionId, chatId) {
  try {
    await store.createSession(sessionId === String(chatId) ? { id: sessionId }
                                                           : { id: sessionId, metadata: { ai_chat_id: String(chatId) } });
  } catch (e) {
    if (!(e && e.code === "already_exists")) throw e;
  }
}

async function appendMessages(store, sessionId, messages) {
  const stored = messages.map((m) => toStoreMessage(m));
  try {
    await store.appendBatch(sessionId, stored);
  } catch (e) {
    // A file the store refused (its size, an image's pixels, too many images
    // in one message): keep the messages whole, their files inline.
    if (!(e && e.code === "invalid_argument") ||
        !stored.some((m) => m.parts.some((p) => p.type === "file"))) throw e;
    await store.appendBatch(sessionId, messages.map((m) => toStoreMessage(m, false)));
  }
}

module.exports = { createChat, loadChat, saveChat };
