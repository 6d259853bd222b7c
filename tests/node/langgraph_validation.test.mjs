// LangGraph's conformance suite for checkpoint savers
// (@langchain/langgraph-checkpoint-validation), unchanged, on SessiondbSaver:
// vitest runs langgraph_conformance.spec.mjs (the suite's validate() with
// langgraph_initializer.mjs) and this test holds its report to every test
// passing, none skipped, and as many as the suite has (it had 718 in 1.1.1).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { tempDir } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

test("SessiondbSaver passes LangGraph's checkpoint saver conformance suite", () => {
  const report = path.join(tempDir(), "report.json");
  const run = spawnSync(
    path.join(here, "node_modules/.bin/vitest"),
    ["run", "--no-cache", "--globals", "--reporter=json", `--outputFile=${report}`, "langgraph_conformance.spec.mjs"],
    { cwd: here, encoding: "utf8", timeout: 120_000,
      // The saver requires its peer (@langchain/langgraph-checkpoint) as an
      // application would; here the application's node_modules are ours.
      env: { ...process.env, NODE_PATH: path.join(here, "node_modules") } });
  const result = JSON.parse(fs.readFileSync(report, "utf8"));
  const failed = result.testResults.flatMap((file) => [
    ...(file.message ? [file.message] : []),
    ...file.assertionResults.filter((a) => a.status !== "passed")
      .map((a) => `${a.status}: ${a.fullName}\n${(a.failureMessages || []).join("\n").slice(0, 500)}`)]);
  assert.deepEqual(failed, [], `vitest said:\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-2000)}`);
  assert.equal(run.status, 0);
  assert.equal(result.success, true);
  assert.equal(result.numPendingTests + result.numTodoTests, 0, "no test may be skipped");
  assert.equal(result.numPassedTests, result.numTotalTests);
  assert.ok(result.numTotalTests >= 700, `only ${result.numTotalTests} tests ran`);
  const names = result.testResults.flatMap((f) => f.assertionResults.map((a) => a.fullName));
  for (const method of ["#put", "#putWrites", "#getTuple", "#list", "#deleteThread"]) {
    assert.ok(names.some((n) => n.startsWith(`sessiondb sessiondb${method} `)), `no ${method} tests ran`);
  }
});
