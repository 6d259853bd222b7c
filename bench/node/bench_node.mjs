// W1-W6 (shared/bench/WORKLOADS.md, data from gen.mjs) from Node: sessiondb
// through the package, beside the in-process stores the same libraries use
// today, in one run on one disk, with the C++ engine's own figures (the
// native floor) measured in the same run.
//
// Peers (peers.mjs):
//   sessiondb-node       the package's Store (store.append / read / listSessions / search)
//   sessiondb-agents     sessiondb/agents SessiondbSession, the Agents SDK drop-in
//   memorysession        the Agents SDK's MemorySession (in memory: the speed ceiling)
//   langgraph-sqlite     LangGraph's SqliteSaver (better-sqlite3), a write per message;
//                        as it comes: WAL at synchronous=NORMAL, no fsync per write
//   langgraph-sqlite-full  the same with synchronous=FULL: durable as the others are
//   sessiondb-langgraph  sessiondb/langgraph SessiondbSaver, the same mapping
//   sessiondb-native     build/bench/sessiondb_bench on the same workloads (a child process)
//
// The in-process peers take turns within each workload (100 W1 messages, a
// W2 session, a W5 image, one W3/W4/W6 call a turn), so a slow stretch of
// the shared disk does not fall on one peer only; the native bench runs
// after each group of workloads that share a store (W1+W3, W2+W4+W6, W5).
// One JSON object per workload and peer on stdout (section 3 of
// WORKLOADS.md), then one line per workload and figure with each peer's time
// over sessiondb-node's, from this run only; progress on stderr.
//
//   make bench-node                                  # npm ci here if needed, then a full run
//   node bench/node/bench_node.mjs --dir /tmp/nodebench
//   node bench/node/bench_node.mjs --dir /tmp/nb --workloads W1,W3 --scale 0.1   # a quick look

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import * as gen from "./gen.mjs";
import { PEERS, dropMemory } from "./peers.mjs";

const USAGE = `usage: node bench_node.mjs --dir DIR [--workloads W1,...,W6] [--scale F]
                      [--peers a,b,...] [--native-bench PATH | --no-native]`;

const { values: args } = parseArgs({
  options: {
    dir: { type: "string" },
    workloads: { type: "string", default: "W1,W2,W3,W4,W5,W6" },
    scale: { type: "string", default: "1" },
    peers: { type: "string", default: PEERS.map((p) => p.name).join(",") },
    "native-bench": { type: "string", default: fileURLToPath(new URL("../../build/bench/sessiondb_bench",
                                                                      import.meta.url)) },
    "no-native": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (args.help || !args.dir) {
  console.error(USAGE);
  process.exit(args.help ? 0 : 2);
}
const workloads = new Set(args.workloads.split(","));
const scale = Number(args.scale);
const base = path.resolve(args.dir);
const NAMES = { W1: "append_durable", W2: "append_many_sessions", W3: "load_session",
                W4: "list_sessions", W5: "images", W6: "search" };
const REPEATS = 20;  // W3, W4, W6

const progress = (text) => process.stderr.write(`bench_node: ${text}\n`);
const emit = (object) => process.stdout.write(`${JSON.stringify(object)}\n`);
const now = () => process.hrtime.bigint();
const round = (x, digits) => Number(x.toFixed(digits));

// ---- figures -------------------------------------------------------------------

/** The ⌈p·n/100⌉-th smallest of sorted nanoseconds, in µs. */
function percentileUs(sortedNs, p) {
  const k = Math.max(1, Math.ceil((p * sortedNs.length) / 100));
  return sortedNs[k - 1] / 1000;
}

/** st_size of every regular file under dir (0 if there is none). */
function bytesOnDisk(dir) {
  if (!fs.existsSync(dir)) return 0;
  let total = 0;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += fs.lstatSync(path.join(entry.parentPath ?? entry.path, entry.name)).size;
  }
  return total;
}

const results = new Map();  // "peer W1" -> the object printed

function report(peer, workload, perCallNs, seconds, extra) {
  const ns = perCallNs.map(Number).sort((a, b) => a - b);
  const out = { peer: peer.name, workload, name: NAMES[workload], n: ns.length,
                seconds: round(seconds, 4), ops_per_s: seconds ? round(ns.length / seconds, 1) : 0,
                p50_us: round(percentileUs(ns, 50), 1), p99_us: round(percentileUs(ns, 99), 1),
                median_ms: round(percentileUs(ns, 50) / 1000, 3), ...extra };
  if (scale !== 1) out.scale = scale;
  if (peer.name.includes("langgraph")) out.mapping = peer.mapping;
  results.set(`${peer.name} ${workload}`, out);
  emit(out);
}

const unsupported = (peerName, workload, reason, status = "unsupported") =>
  emit({ peer: peerName, workload, name: NAMES[workload], status, reason });

// ---- the data (all of it made before any clock starts) ------------------------

function makeData() {
  const take = (it, n) => { const out = []; for (const x of it) { if (out.length === n) break; out.push(x); } return out; };
  const data = {};
  if (["W1", "W3"].some((w) => workloads.has(w))) {
    data.w1 = take(gen.w1Messages(), Math.max(2, Math.floor(gen.W1_N * scale)));
  }
  if (["W2", "W4", "W6"].some((w) => workloads.has(w))) {
    const sessions = Math.max(2, Math.floor(gen.W2_SESSIONS * scale));
    data.w2 = take(gen.w2Messages(), sessions * gen.W2_PER_SESSION);
    data.w2Sessions = sessions;
    // What ac-dc's search returns: a case-insensitive substring (33 at full scale).
    data.substringHits = data.w2.filter(([, , t]) => t.toLowerCase().includes(gen.SEARCH_QUERY)).length;
  }
  if (workloads.has("W5")) {
    data.w5 = take(gen.w5Messages(), Math.max(2, Math.floor(gen.W5_N * scale)))
      .map(([sid, role, text, i]) => [sid, role, text, gen.dataUri(gen.pngImage(i))]);
  }
  return data;
}

// ---- the workloads, for one in-process peer -----------------------------------

// The peers take turns: a turn is one step of the workload for each peer,
// the first of each turn rotating, so that the disk's slow and fast stretches
// (its fsync latency moves several-fold within a run here) fall on all of
// them. A lane is one peer's store and figures; a lane that throws is out of
// the run (its figures reported as failed) and the others go on.
function lanesOf(peers, store) {
  return peers.map((peer) => ({ peer, dir: path.join(base, peer.name, store), handle: null,
                                calls: [], ns: 0n, sessions: 0, current: null, failed: null }));
}

async function turns(lanes, count, step) {
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < lanes.length; k++) {
      const lane = lanes[(i + k) % lanes.length];
      if (lane.failed) continue;
      try {
        await step(lane, i);
      } catch (e) {
        lane.failed = String(e.message);
        progress(`${lane.peer.name} failed: ${e.stack}`);
      }
    }
  }
}

// Opens each lane's store (fresh: wiped first, when `fresh`).
async function openAll(lanes, fresh) {
  await turns(lanes, 1, async (lane) => {
    if (fresh) {
      fs.rmSync(lane.dir, { recursive: true, force: true });
      dropMemory(lane.dir);
    }
    lane.handle = await lane.peer.open(lane.dir);
  });
}

async function closeAll(lanes) {
  await turns(lanes, 1, async (lane) => {
    const handle = lane.handle;
    lane.handle = null;
    if (handle) await handle.close();
  });
}

// Writes `stream` ([sid, role, text, uri?], one call per message) to a fresh
// store per lane, `perTurn` messages a turn. A session's begin and end count
// in the lane's seconds, not in its per-call latencies; the close in neither.
async function writeStores(peers, store, stream, perTurn) {
  const lanes = lanesOf(peers, store);
  await openAll(lanes, true);
  await turns(lanes, Math.ceil(stream.length / perTurn), async (lane, i) => {
    const start = now();
    for (const [sid, role, text, uri] of stream.slice(i * perTurn, (i + 1) * perTurn)) {
      if (sid !== lane.current) {
        if (lane.current !== null) await lane.handle.end(lane.current);
        await lane.handle.begin(sid);
        lane.current = sid;
        lane.sessions += 1;
      }
      const t0 = now();
      await lane.handle.append(sid, role, text, uri);
      lane.calls.push(now() - t0);
    }
    lane.ns += now() - start;
  });
  await turns(lanes, 1, async (lane) => {
    const start = now();
    await lane.handle.end(lane.current);
    lane.ns += now() - start;
  });
  await closeAll(lanes);
  return lanes;
}

// Times `call(lane)` REPEATS times a lane, in turns; `check` looks at each
// result outside the clock. Returns the lanes' last results.
async function repeated(lanes, call, check) {
  for (const lane of lanes) Object.assign(lane, { calls: [], ns: 0n });
  const last = new Map();
  await turns(lanes, REPEATS, async (lane) => {
    const t0 = now();
    const result = await call(lane);
    const elapsed = now() - t0;
    lane.calls.push(elapsed);
    lane.ns += elapsed;
    check(lane, result);
    last.set(lane, result);
  });
  return last;
}

const seconds = (lane) => Number(lane.ns) / 1e9;

function expect(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

const sameRows = (rows, stream) => rows.length === stream.length &&
  stream.every(([, role, text, uri], i) => rows[i].role === role && rows[i].text === text &&
                                           (uri === undefined || rows[i].uri === uri));

// The failed lanes' workloads, as failed lines.
function reportFailures(lanes, chosen) {
  for (const lane of lanes.filter((l) => l.failed)) {
    for (const w of chosen) {
      if (!results.has(`${lane.peer.name} ${w}`)) unsupported(lane.peer.name, w, lane.failed, "failed");
    }
  }
}

const groups = {
  // W1, then W3 on its store.
  async W1W3(peers, data) {
    const lanes = await writeStores(peers, "w1", data.w1, 100);
    for (const lane of lanes.filter((l) => !l.failed && workloads.has("W1"))) {
      report(lane.peer, "W1", lane.calls, seconds(lane), { bytes_on_disk: bytesOnDisk(lane.dir),
                                                           durability: lane.peer.durability });
    }
    if (workloads.has("W3")) {
      await openAll(lanes, false);
      await repeated(lanes, (lane) => lane.handle.load("w1-s0"), (lane, got) =>
        expect(sameRows(lane.handle.rows(got), data.w1), "W3: the session read back differs from W1"));
      await closeAll(lanes);
      for (const lane of lanes.filter((l) => !l.failed)) {
        report(lane.peer, "W3", lane.calls, seconds(lane), { messages: data.w1.length,
                                                             bytes_on_disk: bytesOnDisk(lane.dir) });
      }
    }
    lanes.forEach((lane) => dropMemory(lane.dir));
    reportFailures(lanes, ["W1", "W3"].filter((w) => workloads.has(w)));
  },

  // W2 (a session a turn), then W4 and W6 on its store.
  async W2W4W6(peers, data) {
    const lanes = await writeStores(peers, "w2", data.w2, gen.W2_PER_SESSION);
    for (const lane of lanes.filter((l) => !l.failed && workloads.has("W2"))) {
      report(lane.peer, "W2", lane.calls, seconds(lane), { sessions: lane.sessions,
                                                           bytes_on_disk: bytesOnDisk(lane.dir),
                                                           durability: lane.peer.durability });
    }
    await openAll(lanes, false);
    const live = lanes.filter((l) => !l.failed);
    if (workloads.has("W4")) {
      for (const lane of live.filter((l) => !l.handle.list)) {
        unsupported(lane.peer.name, "W4", lane.peer.name.includes("langgraph")
          ? "a checkpointer has no list of threads (list() yields checkpoints with their writes)"
          : "the SDK's Session interface has no list of sessions");
      }
      const listing = live.filter((l) => l.handle.list);
      const newest = data.w2[data.w2.length - 1][0];
      const want = Math.min(gen.LIST_LIMIT, data.w2Sessions);
      const last = await repeated(listing, (lane) => lane.handle.list(gen.LIST_LIMIT), (lane, ids) =>
        expect(ids.length === want && ids[0] === newest, `W4: ${ids.length} sessions, first ${ids[0]}`));
      for (const lane of listing.filter((l) => !l.failed)) {
        report(lane.peer, "W4", lane.calls, seconds(lane), { returned: last.get(lane).length });
      }
    }
    if (workloads.has("W6")) {
      for (const lane of live.filter((l) => !l.handle.search)) {
        unsupported(lane.peer.name, "W6", lane.peer.name.includes("langgraph")
          ? "a checkpointer has no search" : "the SDK's Session interface has no search");
      }
      const searching = live.filter((l) => l.handle.search);
      const last = await repeated(searching, (lane) => lane.handle.search(gen.SEARCH_QUERY), () => {});
      for (const lane of searching.filter((l) => !l.failed)) {
        report(lane.peer, "W6", lane.calls, seconds(lane), {
          query: gen.SEARCH_QUERY, hits: last.get(lane).length, matches: lane.handle.searchMatches,
          substring_hits: data.substringHits, bytes_on_disk: bytesOnDisk(lane.dir) });
      }
    }
    await closeAll(lanes);
    lanes.forEach((lane) => dropMemory(lane.dir));
    reportFailures(lanes, ["W2", "W4", "W6"].filter((w) => workloads.has(w)));
  },

  // W5: the appends (an image a turn), then per peer: close, reopen and one
  // load (timed: the open and the load).
  async W5(peers, data) {
    const lanes = await writeStores(peers, "w5", data.w5, 1);
    const raw = data.w5.length * gen.IMAGE_SIZE;
    const mib = raw / (1 << 20);
    await turns(lanes, 1, async (lane) => {
      const t0 = now();
      const handle = await lane.peer.open(lane.dir);
      const loaded = await handle.load("w5-s0");
      const readSeconds = Number(now() - t0) / 1e9;
      expect(sameRows(handle.rows(loaded), data.w5), "W5: texts or data URIs read back differ");
      await handle.close();
      dropMemory(lane.dir);
      const onDisk = bytesOnDisk(lane.dir);
      report(lane.peer, "W5", lane.calls, seconds(lane), {
        write_MiBps: round(mib / seconds(lane), 1), read_seconds: round(readSeconds, 4),
        read_MiBps: round(mib / readSeconds, 1), raw_image_bytes: raw, bytes_on_disk: onDisk,
        disk_over_raw: round(onDisk / raw, 3), durability: lane.peer.durability });
    });
    reportFailures(lanes, ["W5"]);
  },
};

const GROUPS = [["W1W3", ["W1", "W3"]], ["W2W4W6", ["W2", "W4", "W6"]], ["W5", ["W5"]]];

// ---- the native floor: the C++ engine's bench on the same workloads -------------

function runNative(chosen) {
  const dir = path.join(base, "native");
  progress(`sessiondb-native ${chosen.join(",")} (${args["native-bench"]})`);
  const run = spawnSync(args["native-bench"], ["--dir", dir, "--workloads", chosen.join(",")],
                        { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 26 });
  if (run.error || run.status !== 0) {
    const reason = run.error ? run.error.message : `exit ${run.status}`;
    for (const w of chosen) unsupported("sessiondb-native", w, `sessiondb_bench failed: ${reason}`, "failed");
    return;
  }
  for (const line of run.stdout.split("\n").filter(Boolean)) {
    const out = JSON.parse(line);
    if (out.workload === "summary") continue;
    if (out.peer === "floor") {
      out.source = "sessiondb_bench";
    } else {
      out.peer = "sessiondb-native";
      if (NAMES[out.workload] === out.name) results.set(`sessiondb-native ${out.workload}`, out);
    }
    emit(out);
  }
}

// ---- the run -------------------------------------------------------------------

async function main() {
  const wanted = args.peers.split(",");
  const peers = PEERS.filter((p) => wanted.includes(p.name));
  const loadStart = os.loadavg();
  progress(`generating the data (scale ${scale})`);
  const data = makeData();
  fs.mkdirSync(base, { recursive: true });
  for (const [group, members] of GROUPS) {
    const chosen = members.filter((w) => workloads.has(w));
    if (chosen.length === 0) continue;
    for (const peer of peers.filter((p) => p.failed)) {
      for (const w of chosen) unsupported(peer.name, w, `the peer did not load: ${peer.failed}`);
    }
    progress(`${chosen.join(",")}: ${peers.filter((p) => !p.failed).map((p) => p.name).join(", ")}, in turns`);
    await groups[group](peers.filter((p) => !p.failed), data);
    if (!args["no-native"]) runNative(chosen);
  }
  printRatios(peers);
  emit({ peer: "run", node: process.version, scale, workloads: [...workloads].sort(),
         loadavg_start: loadStart.map((x) => round(x, 2)), loadavg_end: os.loadavg().map((x) => round(x, 2)),
         note: "native figures are at full scale whatever --scale says" });
}

// Each peer's time over sessiondb-node's, per workload and figure (above 1:
// sessiondb-node is that many times faster). The native bench runs at full
// scale only, so it is in the ratios only at --scale 1.
function printRatios(peers) {
  const names = [...peers.map((p) => p.name), ...(scale === 1 ? ["sessiondb-native"] : [])];
  const figures = [["W1", "seconds"], ["W2", "seconds"], ["W3", "median_ms"], ["W4", "median_ms"],
                   ["W5", "seconds"], ["W5", "read_seconds"], ["W6", "median_ms"]];
  for (const [w, figure] of figures) {
    const ours = results.get(`sessiondb-node ${w}`);
    if (!ours || !ours[figure]) continue;
    const over = {};
    for (const name of names) {
      const theirs = results.get(`${name} ${w}`);
      if (name !== "sessiondb-node" && theirs && theirs[figure] !== undefined) {
        over[name] = round(theirs[figure] / ours[figure], 3);
      }
    }
    emit({ workload: w, figure, "sessiondb-node": ours[figure], over_sessiondb_node: over });
  }
}

await main();
