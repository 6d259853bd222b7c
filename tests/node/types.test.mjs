// The package's TypeScript types (bindings/node/index.d.ts) are real: a
// program using the Store as docs/node.md shows compiles with tsc --strict,
// the package's declarations checked too (no skipLibCheck), and a misuse
// does not.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { packageDir, tempDir } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

test("a program using the Store type-checks against index.d.ts; a misuse does not", () => {
  const project = tempDir("sessiondb-types-");
  const modules = path.join(project, "node_modules");
  fs.mkdirSync(path.join(modules, "@types"), { recursive: true });
  fs.symlinkSync(path.join(here, "node_modules/@types/node"), path.join(modules, "@types/node"));
  fs.symlinkSync(path.join(here, "node_modules/undici-types"), path.join(modules, "undici-types"));
  fs.symlinkSync(packageDir, path.join(modules, "sessiondb"));
  fs.copyFileSync(path.join(here, "store_types.ts"), path.join(project, "store_types.ts"));
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ type: "module" }));
  fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext",
                       moduleResolution: "NodeNext", preserveSymlinks: true, types: ["node"] },
    files: ["store_types.ts"] }));
  const tsc = spawnSync(path.join(here, "node_modules/.bin/tsc"), ["-p", project, "--pretty", "false"],
                        { cwd: project, encoding: "utf8", timeout: 120_000 });
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  // The same program with a wrong argument: the types must catch it.
  fs.writeFileSync(path.join(project, "store_types.ts"),
                   fs.readFileSync(path.join(here, "store_types.ts"), "utf8")
                     .replace('{ fromSeq: 1, limit: 10 }', '{ fromSeq: "1", limit: 10 }'));
  const wrong = spawnSync(path.join(here, "node_modules/.bin/tsc"), ["-p", project, "--pretty", "false"],
                          { cwd: project, encoding: "utf8", timeout: 120_000 });
  assert.notEqual(wrong.status, 0);
  assert.match(wrong.stdout, /store_types\.ts\(\d+,\d+\): error TS2322/);
});
