// The workload data of shared/bench/WORKLOADS.md in Node: a port of gen.py
// (bench/python/gen.py), byte for byte. `node bench/node/gen.mjs digest`
// prints the digests of section 1.6 and exits 1 if one differs from the
// reference values.
//
//   import * as gen from "./gen.mjs";
//   for (const [sid, role, text] of gen.w1Messages()) ...
//   const uri = gen.dataUri(gen.pngImage(0));

import crypto from "node:crypto";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const MASK64 = (1n << 64n) - 1n;

/** SplitMix64 (WORKLOADS.md 1.1); next() is a BigInt, wrapping mod 2^64. */
export class SplitMix64 {
  constructor(seed) {
    this.state = BigInt(seed) & MASK64;
  }

  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }

  /** next() % k, as a Number (the full 64-bit output mod k, no rejection). */
  below(k) {
    return Number(this.next() % BigInt(k));
  }
}

// Exactly 256 distinct lowercase ASCII words, index 0..255 in this order (1.2).
export const WORDS = `
the of and to in is it that for on with as this be are was by at or from
not but have has had can will would should could may might must do does
did done make makes made use uses used using get gets set run runs add
adds change changes fix fixes check test tests build builds write read
load save open close start stop return call calls value values file files
line lines code function method class type types object list array string
number index key keys map table row rows column data database query cache
memory buffer stream error errors warning issue bug patch version release
branch commit merge review log logs output input user users server
client request response message messages session sessions history context
model models token tokens prompt answer question example case cases path
paths module package library system service process thread lock time
timeout size limit first last next previous new old same different other
each every all some any more most less few many small large fast slow
simple complex good better best clear correct wrong safe here there now
then when where why how what which who because before after while until
if else also only just still again very really quite already often never
always maybe probably think know see look need want try keep find show
works working seems like instead rather please thanks sure okay
yes no step plan idea reason result results problem solution approach
design layer config option options default
`.split(/\s+/).filter(Boolean);
if (WORDS.length !== 256 || new Set(WORDS).size !== 256) throw new Error(`word list: ${WORDS.length}`);

export const SEED_W1 = 1001, SEED_W2 = 1002, SEED_W5 = 1005;
export const W1_N = 10_000;
export const W2_SESSIONS = 1000, W2_PER_SESSION = 20;
export const W5_N = 200;
export const IMAGE_SIZE = 1 << 20;          // bytes per PNG file, exactly
export const SEARCH_QUERY = "token limit";  // W6; case-insensitive substring semantics
export const LIST_LIMIT = 50;               // W4

/** One message of ASCII text, ~500 bytes (1.3). The order of the draws matters. */
export function messageText(rng) {
  const target = 388 + rng.below(161);  // 388..548
  let out = "";
  let first = true;
  while (out.length < target) {
    let sep = "";
    if (!first) sep = rng.below(6) === 0 ? "\n\n" : " ";
    const nwords = 4 + rng.below(13);  // 4..16 words
    const words = [];
    for (let i = 0; i < nwords; i++) words.push(WORDS[rng.below(256)]);
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    const end = rng.below(8) === 0 ? "?" : ".";
    out += sep + words.join(" ") + end;
    first = false;
  }
  return out;
}

const roleOf = (j) => (j % 2 === 0 ? "user" : "assistant");

/** [sessionId, role, text] x 10,000, one session. */
export function* w1Messages() {
  const rng = new SplitMix64(SEED_W1);
  for (let j = 0; j < W1_N; j++) yield ["w1-s0", roleOf(j), messageText(rng)];
}

/** 1,000 sessions x 20 messages, session-major; ids w2-s0000..w2-s0999. */
export function* w2Messages() {
  const rng = new SplitMix64(SEED_W2);
  for (let s = 0; s < W2_SESSIONS; s++) {
    const sid = `w2-s${String(s).padStart(4, "0")}`;
    for (let j = 0; j < W2_PER_SESSION; j++) yield [sid, roleOf(j), messageText(rng)];
  }
}

/** [sessionId, role, text, imageIndex] x 200, one session, all role user. */
export function* w5Messages() {
  const rng = new SplitMix64(SEED_W5);
  for (let i = 0; i < W5_N; i++) yield ["w5-s0", "user", messageText(rng), i];
}

const u32be = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n >>> 0); return b; };
const u32le = (n) => { const b = Buffer.alloc(4); b.writeUInt32LE(n >>> 0); return b; };

function chunk(type, data) {
  const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
  return Buffer.concat([u32be(data.length), typed, u32be(zlib.crc32(typed))]);
}

const PNG_SIG = Buffer.from("89504e470d0a1a0a", "hex");
const IHDR = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);  // 1x1, 8-bit gray
const IDAT = Buffer.from("789c6360000000020001", "hex");           // zlib of 00 00

/** A valid 1x1 PNG of exactly IMAGE_SIZE bytes, padded by a private 'rnDm'
 * chunk of SHA-256 counter-mode bytes (1.5). */
export function pngImage(i) {
  const head = Buffer.concat([PNG_SIG, chunk("IHDR", IHDR), chunk("IDAT", IDAT)]);
  const tail = chunk("IEND", Buffer.alloc(0));
  const plen = IMAGE_SIZE - head.length - tail.length - 12;
  const payload = Buffer.alloc(Math.ceil(plen / 32) * 32);
  const block = Buffer.concat([Buffer.from("peerbench-img", "ascii"), u32le(i), Buffer.alloc(4)]);
  for (let k = 0; k * 32 < plen; k++) {
    block.writeUInt32LE(k, block.length - 4);
    crypto.createHash("sha256").update(block).digest().copy(payload, k * 32);
  }
  const img = Buffer.concat([head, chunk("rnDm", payload.subarray(0, plen)), tail]);
  if (img.length !== IMAGE_SIZE) throw new Error(`image ${i}: ${img.length} bytes`);
  return img;
}

export const dataUri = (png) => `data:image/png;base64,${png.toString("base64")}`;

// The reference digests of WORKLOADS.md 1.6.
export const REFERENCE = {
  w1: { messages: 10000, text_bytes: 5020510,
        sha256: "e76fc1ce1f1f05e03e790a039e8668b9729db632e95d3a6087a9b6f18b9bd95a" },
  w2: { messages: 20000, text_bytes: 10009523,
        sha256: "8be7805d0101b06bfdeea63e03ee3a6c141ed5abe9eb7d1ab7f77fce541b2128" },
  w5_text: { messages: 200, text_bytes: 100951,
             sha256: "b358677bbdee6484d6deead38f30c0806c0a601969c68a1b914c4d4b218d92b9" },
  w5_images: { images: 200,
               sha256: "37a68bee502b5232dd0843241b481e68803131a40787ab3d9d8841a9bfdf741f",
               image0_sha256: "e1cb7a7758a6f8fe3646b6ea8d5dfba6e81b836d31c70172795f0f0954d41f59" },
};

/** The digests of every stream, as gen.py's `digest` prints them. */
export function digests() {
  const textDigest = (stream) => {
    const h = crypto.createHash("sha256");
    let messages = 0, textBytes = 0;
    for (const [sid, role, text] of stream) {
      h.update(`${sid}\t${role}\t${text}\n`, "utf8");
      messages += 1;
      textBytes += text.length;
    }
    return { messages, text_bytes: textBytes, sha256: h.digest("hex") };
  };
  const out = { w1: textDigest(w1Messages()), w2: textDigest(w2Messages()),
                w5_text: textDigest(w5Messages()) };
  const all = crypto.createHash("sha256");
  let image0;
  for (let i = 0; i < W5_N; i++) {
    const png = pngImage(i);
    if (i === 0) image0 = crypto.createHash("sha256").update(png).digest("hex");
    all.update(png);
  }
  out.w5_images = { images: W5_N, sha256: all.digest("hex"), image0_sha256: image0 };
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cmd = process.argv[2] ?? "digest";
  if (cmd === "digest") {
    const got = digests();
    console.log(JSON.stringify(got, null, 1));
    const wrong = Object.keys(REFERENCE).filter(
      (k) => JSON.stringify(got[k]) !== JSON.stringify(REFERENCE[k]));
    if (wrong.length) {
      console.error(`gen.mjs: digests differ from WORKLOADS.md 1.6: ${wrong.join(", ")}`);
      process.exit(1);
    }
    console.error("gen.mjs: all digests match WORKLOADS.md 1.6");
  } else if (cmd === "sample") {
    const rng = new SplitMix64(SEED_W1);
    console.log("splitmix64(1001) first 3:", [0, 1, 2].map(() => `0x${rng.next().toString(16)}`));
    console.log(JSON.stringify(w1Messages().next().value[2]));
  } else {
    console.error("usage: gen.mjs [digest|sample]");
    process.exit(2);
  }
}
