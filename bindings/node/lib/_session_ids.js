// The store's session id for a framework's conversation id (an Agents SDK
// session id, an AI SDK chat id): the id itself when the store accepts it,
// else a prefix and a hash of it, since frameworks accept any string and the
// store takes 1..128 of [A-Za-z0-9._-] not starting with "." (ids end up in
// file names and URLs; src/core/text_rules.h). The mapping is a pure
// function, so every process finds the same session for the same id.
"use strict";

const crypto = require("node:crypto");

const VALID_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** `id` when it is a valid store session id, else `${prefix}-` and 40 hex digits of its SHA-256. */
function storeSessionId(id, prefix) {
  const text = String(id);
  if (VALID_ID.test(text)) return text;
  return `${prefix}-${crypto.createHash("sha256").update(text, "utf8").digest("hex").slice(0, 40)}`;
}

module.exports = { storeSessionId };
