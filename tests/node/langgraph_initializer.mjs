// The CheckpointerTestInitializer of LangGraph's conformance suite
// (@langchain/langgraph-checkpoint-validation) for SessiondbSaver: each
// checkpointer the suite asks for gets a store of its own, in a new
// directory, removed when the suite is done with it, so no run reads
// another's threads (the suite's isolation rule).
//
// The saver is loaded with Node's own require (support.mjs), not through
// vitest's module runner: it is a CommonJS package, and this is how an
// application loads it.
import fs from "node:fs";
import path from "node:path";
import { require, tempDir } from "./support.mjs";

const { SessiondbSaver } = require("../../bindings/node/lib/langgraph.js");
const dirs = new WeakMap();

export default {
  checkpointerName: "sessiondb",
  async createCheckpointer() {
    const dir = tempDir("sessiondb-langgraph-");
    const saver = new SessiondbSaver(path.join(dir, "store"));
    dirs.set(saver, dir);
    return saver;
  },
  async destroyCheckpointer(saver) {
    await saver.close();
    fs.rmSync(dirs.get(saver), { recursive: true, force: true });
  },
};
