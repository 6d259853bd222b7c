// The OpenAI Agents SDK's items (AgentInputItem of @openai/agents-core) as
// sessiondb messages, losslessly; the Node twin of python/sessiondb/_items.py.
//
// An item becomes one message: its text, tool calls, tool outputs and
// reasoning as parts (so search, projections and the web page see them), and
// the item itself in the message's metadata (_lossless.js), so that reading
// it back gives an item deep-equal to the one written, whatever its type.
// Data URLs (input_image, input_file) and byte arrays (tool output images)
// leave the JSON for the blob store, kept once however often they are sent.
// A plain { role, content: "text" } item needs no template: role and text say it all.
//
// Thread-safety: pure functions (but toItem reads the store).
"use strict";

const lossless = require("./_lossless.js");

const ITEM_KEY = "openai_item";          // the item's template in the message metadata
const SLOTS_KEY = "openai_item_slots";   // its slots (_lossless.js), when it has any
const ROLES = new Set(["user", "assistant", "system"]);

function textsOf(content) {
  if (typeof content === "string") return content ? [content] : [];
  if (!Array.isArray(content)) return [];
  const out = [];
  for (const part of content) {
    if (part && typeof part.text === "string" && part.text) out.push(part.text);
    else if (part && typeof part.refusal === "string" && part.refusal) out.push(part.refusal);
    else if (part && typeof part.transcript === "string" && part.transcript) out.push(part.transcript);
  }
  return out;
}

/** The store role of an item: its own, else "tool" for a tool's result, else "assistant". */
function roleOf(item) {
  if (ROLES.has(item.role)) return item.role;
  if (item.role === "developer") return "system";
  const type = typeof item.type === "string" ? item.type : "";
  if (type.endsWith("_result") || type.endsWith("_output")) return "tool";
  return "assistant";
}

function argumentsObject(args) {
  if (args !== null && typeof args === "object" && !Array.isArray(args)) return args;
  if (typeof args === "string") {
    try {
      const parsed = JSON.parse(args);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: the call still gets a part, with no arguments
    }
  }
  return {};
}

function outputText(output) {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && !Array.isArray(output) && output.type === "text") {
    return String(output.text ?? "");
  }
  const texts = textsOf(Array.isArray(output) ? output : []);
  return texts.length ? texts.join("\n") : JSON.stringify(output ?? null, (k, v) =>
    v instanceof Uint8Array ? `[${v.length} bytes]` : v);
}

// The parts search and projections see (not the item's storage: that is the metadata).
function searchableParts(item) {
  const parts = textsOf(item.content).map((text) => ({ type: "text", text }));
  const type = item.type;
  const callId = String(item.callId ?? item.call_id ?? item.id ?? "call");
  if (type === "function_call" || type === "custom_tool_call" || type === "hosted_tool_call") {
    parts.push({ type: "tool_call", tool_call_id: callId, tool_name: String(item.name || type),
                 arguments: argumentsObject(item.arguments) });
  } else if (type === "function_call_result" || type === "custom_tool_call_output") {
    parts.push({ type: "tool_result", tool_call_id: callId, text: outputText(item.output) });
  } else if (type === "reasoning") {
    const texts = [...textsOf(item.content), ...textsOf(item.rawContent)];
    parts.length = 0;  // reasoning text is reasoning, not text
    if (texts.length) parts.push({ type: "reasoning", text: texts.join("\n") });
  }
  return parts;
}

/**
 * The message that stores `item`. options.extract: move data URLs and byte
 * arrays to attachment parts (false: keep them in the metadata, for a store
 * that refused them); options.maxBytes: the largest moved.
 */
function toMessage(item, { extract = true, maxBytes } = {}) {
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    throw new TypeError(`a session item is an object, not ${item === null ? "null" : typeof item}`);
  }
  const keys = Object.keys(item);
  if (keys.length === 2 && ROLES.has(item.role) && typeof item.content === "string" && item.content) {
    return { role: item.role, content: [{ type: "text", text: item.content }] };
  }
  const { template, slots, attachments } = lossless.encode(item, { extract, maxBytes });
  const parts = searchableParts(item);
  for (const a of attachments) parts.push({ type: "file", source: a.bytes, mime: a.mime });
  if (!parts.some((p) => p.type !== "text" || p.text)) {
    // The engine keeps no empty message: an item with nothing to index is named by its type.
    parts.unshift({ type: "text", text: String(item.type || item.role || "item") });
  }
  const metadata = { [ITEM_KEY]: template };
  const allSlots = [...attachments.map((a) => a.slot), ...slots];
  if (allSlots.length) metadata[SLOTS_KEY] = allSlots;
  return { role: roleOf(item), parts, metadata };
}

/** Whether `message` (from toMessage) moved anything to attachment parts. */
function hasAttachments(message) {
  return (message.parts || []).some((p) => p.type === "file" || p.type === "image");
}

/** The item a stored message holds; reads its attachments' bytes from `store`. */
async function toItem(store, message) {
  const metadata = message.metadata || {};
  if (!(ITEM_KEY in metadata)) {
    const text = message.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n");
    return { role: ROLES.has(message.role) ? message.role : "assistant", content: text };
  }
  const slots = metadata[SLOTS_KEY] || [];
  const blobs = await lossless.readAttachments(store, message,
                                               slots.filter(lossless.hasAttachment).length);
  return lossless.decode(structuredClone(metadata[ITEM_KEY]), slots, blobs);
}

module.exports = { toMessage, toItem, hasAttachments, ITEM_KEY, SLOTS_KEY };
