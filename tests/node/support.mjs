// What the Node tests share: the package under test (bindings/node, loaded
// as a user's `require("sessiondb")` would load it), the built CLI, and
// temporary directories removed when the test process ends.
//
// The package finds its native addon through SESSIONDB_NODE_ADDON, which
// tests/CMakeLists.txt sets to the build's addon; run by hand, it falls back
// to ../../build/node/sessiondb.node. The npm packages the tests plug the
// package into live in tests/node/node_modules: NODE_PATH points there, so
// the package's own require() of a peer (@langchain/langgraph-checkpoint)
// finds the one the tests installed.
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "../..");
export const packageDir = path.join(repoRoot, "bindings/node");
export const require = createRequire(import.meta.url);

process.env.SESSIONDB_NODE_ADDON ??= path.join(repoRoot, "build/node/sessiondb.node");
export const cliPath = process.env.SESSIONDB_CLI ?? path.join(repoRoot, "build/sessiondb");

/** The package, as `require("sessiondb")` gives it. */
export const sessiondb = require(packageDir);

const made = [];
process.on("exit", () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory, removed when the process exits. */
export function tempDir(prefix = "sessiondb-node-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** A valid 1x1 PNG whose last byte varies with `n`, so each is a new blob. */
export function pngBytes(n = 0) {
  const png = Buffer.from(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
      "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
    "hex");
  return Buffer.concat([png, Buffer.from([n & 0xff])]);
}
