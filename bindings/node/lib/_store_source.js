// Where a drop-in's store comes from: a Store the caller opened (shared,
// never closed here), a directory or postgresql:// URI (opened on first use,
// one Store per location and options in this process, closed with the last
// user), or nothing (a temporary store of the drop-in's own, deleted when it
// is closed or the process exits: the in-memory default of the frameworks'
// own MemorySession / MemorySaver, kept on disk).
//
// Thread-safety: Node runs this on one thread; the shared table is only
// touched between awaits.
"use strict";

const { FailedPreconditionError } = require("./errors.js");

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

// location key -> { promise: Promise<Store>, users: number }
const shared = new Map();
const temporaryDirs = new Set();
process.once("exit", () => {
  for (const dir of temporaryDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function isStore(value) {
  return value !== null && typeof value === "object" && typeof value.append === "function" &&
         typeof value.readBlob === "function";
}

function keyOf(location, options) {
  const where = /^postgres(ql)?:\/\//.test(location) ? location : path.resolve(location);
  const sorted = Object.keys(options).sort().map((k) => [k, options[k]]);
  return JSON.stringify([where, sorted]);
}

// Opens the package's Store (required late: lib/index.js loads the addon).
function openStore(location, options) {
  return require("./index.js").Store.open(location, options);
}

/**
 * A handle on the store `source` names; `defaults` are open options the
 * drop-in wants unless the caller's `openOptions` say otherwise.
 * handle.get(): Promise<Store>; handle.release(): Promise<void>.
 */
function storeSource(source, openOptions = {}, defaults = {}) {
  const handle = sourceOf(source, openOptions, defaults);
  let released = false;
  // Once released, the handle opens nothing again: its user is closed.
  return {
    get() {
      if (released) {
        return Promise.reject(new FailedPreconditionError(
          "sessiondb: this object is closed; make a new one", "failed_precondition"));
      }
      return handle.get();
    },
    async release() {
      if (released) return;
      released = true;
      await handle.release();
    },
  };
}

function sourceOf(source, openOptions, defaults) {
  if (isStore(source)) {
    return { get: async () => source, release: async () => {} };
  }
  const options = { ...defaults, ...openOptions };
  if (source === undefined || source === null) {
    let opening = null;
    let dir = null;
    return {
      get() {
        if (!opening) {
          dir = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-temp-"));
          temporaryDirs.add(dir);
          opening = openStore(path.join(dir, "store"), options);
        }
        return opening;
      },
      async release() {
        if (!opening) return;
        const store = await opening.catch(() => null);
        if (store && !store.closed) await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
        temporaryDirs.delete(dir);
      },
    };
  }
  if (typeof source !== "string") {
    throw new TypeError("store must be a sessiondb Store, a directory, a postgresql:// URI, or undefined");
  }
  const key = keyOf(source, options);
  let taken = false;
  return {
    get() {
      let entry = shared.get(key);
      if (!entry) {
        entry = { promise: openStore(source, options), users: 0 };
        // A failed open is tried again by the next call.
        entry.promise.catch(() => shared.get(key) === entry && shared.delete(key));
        shared.set(key, entry);
        taken = false;
      }
      if (!taken) {
        entry.users += 1;
        taken = true;
      }
      return entry.promise;
    },
    async release() {
      if (!taken) return;
      taken = false;
      const entry = shared.get(key);
      if (!entry || --entry.users > 0) return;
      shared.delete(key);
      const store = await entry.promise.catch(() => null);
      if (store && !store.closed) await store.close();
    },
  };
}

module.exports = { storeSource, isStore };
