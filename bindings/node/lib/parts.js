'use strict';
// Messages as the engine takes them (api/message_json.h): the JSON form of
// docs/http-api.md, with each image's or file's bytes sent beside the JSON
// as an attachment the part names ({"upload": "<index>"}) rather than as
// base64, a data: URL passed as is, and a path read by the engine (with its
// caps on size), never by JavaScript.
const { invalid } = require('./errors');

const text = (value) => ({ type: 'text', text: value });
const reasoning = (value, signature) =>
  (signature ? { type: 'reasoning', text: value, signature } : { type: 'reasoning', text: value });
const image = (source, options = {}) => ({ type: 'image', source, ...options });
const file = (source, options = {}) => ({ type: 'file', source, ...options });
const link = (uri, options = {}) => ({ type: 'resource_link', uri, ...options });
const toolCall = (id, name, args = {}) =>
  ({ type: 'tool_call', tool_call_id: id, tool_name: name, arguments: args });
const toolResult = (toolCallId, output, isError = false) =>
  ({ type: 'tool_result', tool_call_id: toolCallId, text: output, is_error: isError });

// A base64 data: URL's bytes and media type, decoded here (Buffer's decoder
// is native) so that the bytes cross into the engine as an attachment rather
// than as megabytes of JSON text: several times faster for a 1 MiB image.
// Only canonical base64 is decoded here: Buffer.from skips characters that
// are not base64, so the bytes must encode back to the very text (which is
// faster than any check of the text itself). Anything else goes as the data
// URL, for the engine to check and name what is wrong.
function dataUrlBytes(url) {
  const comma = url.indexOf(',');
  if (comma < 0) return null;
  const head = url.slice(5, comma);
  if (!head.endsWith(';base64')) return null;
  const payload = url.slice(comma + 1);
  const data = Buffer.from(payload, 'base64');
  if (data.length === 0 || data.toString('base64') !== payload) return null;
  return { mime: head.slice(0, -';base64'.length).split(';')[0], data };
}

function isBytes(value) {
  return value instanceof Uint8Array || value instanceof ArrayBuffer;
}

// One attachment part: its source becomes upload, data_uri or path.
function encodeAttachment(part, index, attachments) {
  const { source, ...rest } = part;
  if (source === undefined) return rest;  // already data_uri, upload or path
  if (isBytes(source)) {
    attachments.push(source);
    return { ...rest, upload: String(attachments.length - 1) };
  }
  if (typeof source === 'string') {
    if (!source.startsWith('data:')) return { ...rest, path: source };
    const bytes = dataUrlBytes(source);
    if (!bytes) return { ...rest, data_uri: source };
    attachments.push(bytes.data);
    return { ...rest, mime: rest.mime || bytes.mime, upload: String(attachments.length - 1) };
  }
  throw invalid(`parts[${index}]: an ${part.type}'s source is a Buffer, a Uint8Array, an ` +
                `ArrayBuffer, a data: URL or a path, not ${typeName(source)}`);
}

function typeName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? (value.constructor?.name ?? 'an object') : typeof value;
}

function encodePart(part, index, attachments) {
  if (typeof part === 'string') return text(part);
  if (part === null || typeof part !== 'object') {
    throw invalid(`parts[${index}] is ${typeName(part)}; a part is a string or an object ` +
                  'such as {type: "text", text: "hello"}');
  }
  if (part.type === 'image' || part.type === 'file') {
    return encodeAttachment(part, index, attachments);
  }
  return part;
}

// { json, attachments }: the message's JSON form and the bytes its parts name.
// `attachments` is shared by the messages of one batch.
function encodeMessage(message, attachments = []) {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw invalid(`a message is an object such as {role: "user", content: "hello"}, not ` +
                  typeName(message));
  }
  const { content, parts, ...fields } = message;
  let list = parts;
  if (list === undefined) {
    if (typeof content === 'string') list = [content];
    else if (Array.isArray(content)) list = content;
    else if (content === undefined || content === null) list = [];
    else throw invalid(`content is a string or a list of parts, not ${typeName(content)}`);
  }
  if (!Array.isArray(list)) throw invalid(`parts is a list, not ${typeName(list)}`);
  const json = { ...fields, parts: list.map((p, i) => encodePart(p, i, attachments)) };
  return { json, attachments };
}

module.exports = { text, reasoning, image, file, link, toolCall, toolResult, encodeMessage };
