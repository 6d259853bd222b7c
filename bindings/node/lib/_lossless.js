// A JavaScript value kept in a message's metadata (JSON) without loss, its
// attachments in the blob store: what the Agents SDK session (agents.js) and
// the AI SDK chat helpers (ai.js) share.
//
// `encode` gives a JSON template of the value, where each thing JSON cannot
// hold or should not hold is a null placeholder and a "slot" says what goes
// back there:
//   [path, "url", head]     a base64 data URL ("data:image/png", "data:application/pdf;x=y")
//                           whose bytes left for an attachment part of the message
//   [path, "bytes"]         a Uint8Array whose bytes left for an attachment part
//   [path, "inline", b64]   a Uint8Array kept in the template (too small or refused)
//   [path, "undefined"]     an undefined (JSON would drop the key, or write null)
// The slots with an attachment are listed in the order of the message's
// attachment parts (image and file parts: the engine stores a file that is an
// image as an image), which is how `decode` pairs them with their bytes.
//
// Only canonical base64 is moved out (re-encoding the bytes gives the same
// text), so the data URL read back is the one written, byte for byte.
//
// Thread-safety: pure functions.
"use strict";

const URL_KIND = "url";
const BYTES_KIND = "bytes";
const INLINE_KIND = "inline";
const UNDEFINED_KIND = "undefined";

/** Whether a slot's value lives in an attachment part (vs in the slot itself). */
function hasAttachment(slot) {
  return slot[1] === URL_KIND || slot[1] === BYTES_KIND;
}

// The bytes of a base64 data URL the blob store can keep and give back as the
// same text; null otherwise (a plain URL, percent-encoding, non-canonical
// base64, empty or over `maxBytes`).
function dataUrlBytes(value, maxBytes) {
  if (!value.startsWith("data:")) return null;
  const marker = value.indexOf(";base64,");
  if (marker < 0) return null;
  const payload = value.slice(marker + ";base64,".length);
  if (payload.length === 0 || payload.length % 4 !== 0) return null;
  if ((payload.length / 4) * 3 > maxBytes + 3) return null;
  const bytes = Buffer.from(payload, "base64");
  // Node's decoder skips what is not base64: equality after re-encoding
  // proves the payload was valid, canonical and free of whitespace.
  if (bytes.length === 0 || bytes.length > maxBytes || bytes.toString("base64") !== payload) {
    return null;
  }
  return { head: value.slice(0, marker), bytes };
}

// The media type a data URL's head declares ("data:text/plain;charset=x" -> "text/plain").
function headMime(head) {
  const type = head.slice("data:".length).split(";")[0].trim().toLowerCase();
  return type || "application/octet-stream";
}

/**
 * The template of `value` and its slots (see the top of the file).
 * options.extract: move data URLs and byte arrays out (else only the
 * undefineds and byte arrays are slotted, everything else stays inline);
 * options.maxBytes: the largest attachment moved out.
 * Returns { template, slots, attachments }, attachments[i] = { slot, bytes,
 * mime } for each slot whose bytes left, in the order found.
 */
function encode(value, { extract = true, maxBytes = 100 * 1024 * 1024 } = {}) {
  const slots = [];
  const attachments = [];
  const walk = (v, path) => {
    if (v === undefined) {
      slots.push([path, UNDEFINED_KIND]);
      return null;
    }
    if (typeof v === "string") {
      const found = extract ? dataUrlBytes(v, maxBytes) : null;
      if (!found) return v;
      const slot = [path, URL_KIND, found.head];
      attachments.push({ slot, bytes: found.bytes, mime: headMime(found.head) });
      return null;
    }
    if (v instanceof Uint8Array) {
      const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
      if (extract && bytes.length > 0 && bytes.length <= maxBytes) {
        const slot = [path, BYTES_KIND];
        attachments.push({ slot, bytes: Buffer.from(bytes), mime: "application/octet-stream" });
      } else {
        slots.push([path, INLINE_KIND, bytes.toString("base64")]);
      }
      return null;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (v !== null && typeof v === "object") {
      if (typeof v.toJSON === "function") return v.toJSON();  // a Date, say: as JSON keeps it
      const out = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, [...path, k]);
      return out;
    }
    return v;
  };
  const template = walk(value, []);
  return { template, slots, attachments };
}

/**
 * The value back from its template and slots; `blobs[i]` holds the bytes of
 * the i-th slot that has an attachment (in slot order). The template is
 * changed in place and returned (or the value itself when the root was a slot).
 */
function decode(template, slots, blobs) {
  let root = template;
  let next = 0;
  const put = (path, value) => {
    if (path.length === 0) {
      root = value;
      return;
    }
    let target = root;
    for (const key of path.slice(0, -1)) target = target[key];
    target[path[path.length - 1]] = value;
  };
  for (const slot of slots || []) {
    const [path, kind] = slot;
    if (kind === URL_KIND) {
      put(path, `${slot[2]};base64,${Buffer.from(blobs[next++]).toString("base64")}`);
    } else if (kind === BYTES_KIND) {
      put(path, new Uint8Array(blobs[next++]));
    } else if (kind === INLINE_KIND) {
      put(path, new Uint8Array(Buffer.from(slot[2], "base64")));
    } else if (kind === UNDEFINED_KIND) {
      put(path, undefined);
    } else {
      throw new Error(`sessiondb: unknown slot kind ${JSON.stringify(kind)} in stored metadata`);
    }
  }
  return root;
}

/** The message's attachment parts (image and file), in order. */
function attachmentParts(message) {
  return message.parts.filter((p) => p.type === "image" || p.type === "file");
}

/**
 * The bytes of each attachment part of `message`, read from the store, in order.
 * Fails with NotFoundError naming the digest when a blob is gone.
 */
async function readAttachments(store, message, count) {
  const parts = attachmentParts(message).slice(0, count);
  if (parts.length < count) {
    throw new Error(`sessiondb: message ${message.id} has ${parts.length} attachments; ` +
                    `its metadata names ${count}`);
  }
  return Promise.all(parts.map((p) => store.readBlob(p.resource.content_sha256)));
}

module.exports = { encode, decode, hasAttachment, readAttachments };
