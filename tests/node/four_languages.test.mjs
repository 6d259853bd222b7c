// One store, four languages (issue 36): C++ (the `sessiondb` CLI), Python
// (the sessiondb package) and Node, in-process and in a second process, all
// append to one session at the same time; then each reads it back and must
// see every message the others wrote, with every image byte-identical.
// Run on an embedded store (many processes on one SQLite file) and, when the
// throw-away cluster is up, on a PostgreSQL namespace.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

import { cliPath, packageDir, pngBytes, repoRoot, sessiondb, tempDir } from "./support.mjs";

const run = promisify(execFile);
const python = process.env.SESSIONDB_PYTHON || "/usr/bin/python3";
const pythonPath = process.env.SESSIONDB_PYTHONPATH || path.join(repoRoot, "build/python");
const PER_WRITER = 6;
const sha256 = (bytes) => crypto.createHash("sha256").update(bytes).digest("hex");

// The Python writer and reader: argv is store, namespace, session, then
// "write TAG DIR" or "read".
const PYTHON = `
import hashlib, json, sys
from sessiondb import Store, Message, image
location, namespace, sid, verb = sys.argv[1:5]
store = Store(location, namespace=namespace)
if verb == "write":
    tag, folder, count = sys.argv[5], sys.argv[6], int(sys.argv[7])
    for i in range(count):
        with open(f"{folder}/{tag}-{i}.png", "rb") as f:
            data = f.read()
        store.append_message(sid, Message("user", [f"{tag} {i}", image(data)]))
else:
    out = []
    for m in store.read(sid):
        img = [p for p in m.parts if p.type == "image"]
        out.append([m.text, hashlib.sha256(store.read_blob(img[0].resource.content_sha256)).hexdigest()])
    print(json.dumps(out))
store.close()
`;

// The second Node process: the package required by path, as a user would.
const NODE_WRITER = `
const { Store, image } = require(${JSON.stringify(packageDir)});
const fs = require("node:fs");
const [location, namespace, sid, tag, folder, count] = process.argv.slice(1);  // node -e: no script name
(async () => {
  const store = await Store.open(location, namespace ? { namespace } : {});
  for (let i = 0; i < Number(count); ++i) {
    await store.append(sid, { role: "user", content: [tag + " " + i, image(fs.readFileSync(folder + "/" + tag + "-" + i + ".png"))] });
  }
  await store.close();
})().catch((e) => { console.error(e); process.exit(1); });
`;

async function cliWriter(location, namespace, sid, folder) {
  const global = ["--store", location, ...(namespace ? ["--namespace", namespace] : [])];
  for (let i = 0; i < PER_WRITER; ++i) {
    await run(cliPath, [...global, "append", sid, `cli ${i}`, "--image", `${folder}/cli-${i}.png`]);
  }
}

async function cliReader(location, namespace, sid) {
  const global = ["--store", location, ...(namespace ? ["--namespace", namespace] : [])];
  const { stdout } = await run(cliPath, [...global, "--json", "show", sid, "--data-uris"],
                               { maxBuffer: 64 << 20 });
  const shown = JSON.parse(stdout);
  const messages = shown.messages ?? shown;
  return messages.map((m) => {
    const text = m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n");
    const img = m.parts.find((p) => p.type === "image");
    const bytes = Buffer.from(img.data_uri.split(",")[1], "base64");
    return [text, sha256(bytes)];
  });
}

const backends = [["embedded", () => [path.join(tempDir(), "shared"), ""]]];
if (process.env.SESSIONDB_TEST_POSTGRES) {
  backends.push(["postgresql", () => [process.env.SESSIONDB_TEST_POSTGRES,
    "four-" + crypto.randomBytes(5).toString("hex")]]);
}

for (const [backend, make] of backends) {
  test(`CLI, Python and Node write one ${backend} store at once and each reads all of it`, async () => {
    const [location, namespace] = make();
    const folder = tempDir();
    const expected = new Map();  // text -> sha256 of the image sent with it
    let n = 0;
    for (const tag of ["cli", "python", "node", "node2"]) {
      for (let i = 0; i < PER_WRITER; ++i) {
        const bytes = pngBytes(++n);
        fs.writeFileSync(`${folder}/${tag}-${i}.png`, bytes);
        expected.set(`${tag} ${i}`, sha256(bytes));
      }
    }
    const store = await sessiondb.Store.open(location, namespace ? { namespace } : {});
    const session = await store.createSession({ title: "four languages" });
    const env = { ...process.env, PYTHONPATH: pythonPath };

    const nodeInProcess = (async () => {
      for (let i = 0; i < PER_WRITER; ++i) {
        await store.append(session.id, {
          role: "user", content: [`node ${i}`, sessiondb.image(fs.readFileSync(`${folder}/node-${i}.png`))],
        });
      }
    })();
    await Promise.all([
      nodeInProcess,
      cliWriter(location, namespace, session.id, folder),
      run(python, ["-c", PYTHON, location, namespace, session.id, "write", "python", folder, String(PER_WRITER)], { env }),
      run(process.execPath, ["-e", NODE_WRITER, location, namespace, session.id, "node2", folder, String(PER_WRITER)], { env }),
    ]);

    const check = (who, rows) => {
      assert.equal(rows.length, expected.size, `${who} sees every message`);
      const seen = new Map(rows);
      for (const [text, digest] of expected) {
        assert.equal(seen.get(text), digest, `${who}: the image of "${text}" is byte-identical`);
      }
    };
    const nodeRows = [];
    for (const m of await store.read(session.id)) {
      const img = m.parts.find((p) => p.type === "image").resource;
      nodeRows.push([m.parts[0].text, sha256(await store.readBlob(img.content_sha256))]);
    }
    check("Node", nodeRows);
    const py = await run(python, ["-c", PYTHON, location, namespace, session.id, "read"], { env });
    check("Python", JSON.parse(py.stdout));
    check("the CLI", await cliReader(location, namespace, session.id));
    // One order for all: the seqs are 1..N with no gap or repeat.
    assert.deepEqual((await store.read(session.id)).map((m) => m.seq),
                     Array.from({ length: expected.size }, (_, i) => i + 1));
    await store.close();
  });
}
