// The package installs offline from the repository folder, as a user's
// project would take it: `npm install --offline --install-links
// <repo>/bindings/node` packs the folder (its prepare step builds the addon
// in this build tree and copies it in) and installs a copy; the project then
// requires "sessiondb" by name, with SESSIONDB_NODE_ADDON unset, and uses a store.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { packageDir, pngBytes, tempDir } from "./support.mjs";

const run = promisify(execFile);

test("npm install of bindings/node, offline, gives a project a working sessiondb", async () => {
  const project = tempDir("sessiondb-npm-");
  fs.writeFileSync(path.join(project, "package.json"),
                   JSON.stringify({ name: "user-app", version: "1.0.0", private: true }));
  const env = { ...process.env, npm_config_cache: path.join(project, ".npm-cache") };
  delete env.SESSIONDB_NODE_ADDON;
  delete env.NODE_PATH;
  await run("npm", ["install", "--offline", "--install-links", "--no-audit", "--no-fund",
                    "--loglevel=error", packageDir], { cwd: project, env, timeout: 240_000 });
  const installed = path.join(project, "node_modules", "sessiondb");
  assert.ok(fs.existsSync(path.join(installed, "native", "sessiondb.node")), "the addon was built in");
  assert.ok(!fs.lstatSync(installed).isSymbolicLink(), "a copy, not a link to the repository");
  for (const file of ["index.d.ts", "agents.d.ts", "langgraph.d.ts", "ai.d.ts", "lib/store.js"]) {
    assert.ok(fs.existsSync(path.join(installed, file)), file);
  }
  const script = `
    const { Store, image } = require("sessiondb");
    (async () => {
      const store = await Store.open("store");
      const s = await store.createSession({ title: "installed" });
      await store.append(s.id, { role: "user", content: ["hi", image(Buffer.from(process.argv[1], "base64"))] });
      const [m] = await store.read(s.id);
      const bytes = await store.readBlob(m.parts[1].resource.content_sha256);
      console.log(JSON.stringify({ text: m.parts[0].text, image: bytes.toString("base64") }));
      await store.close();
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const png = pngBytes(5).toString("base64");
  const { stdout } = await run(process.execPath, ["-e", script, png], { cwd: project, env });
  assert.deepEqual(JSON.parse(stdout), { text: "hi", image: png });
});
