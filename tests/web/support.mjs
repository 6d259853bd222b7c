// What the browser tests share: the real `sessiondb serve` on a fresh store,
// Debian's Chromium driven by playwright-core, a small history seeded through
// the HTTP API, and a real PNG.
//
// $SESSIONDB_CLI names the sessiondb binary (CTest sets it); $SESSIONDB_CHROMIUM
// may name another Chromium than /usr/bin/chromium.
import {spawn} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {deflateSync} from 'node:zlib';

import {chromium} from 'playwright-core';

export const kChromium = process.env.SESSIONDB_CHROMIUM || '/usr/bin/chromium';

// ---- The server ----------------------------------------------------------------

// Starts `sessiondb serve --store <fresh temp dir> --port 0 [extra...]` and
// resolves once it prints the address it listens on.
// `env` adds to the server's environment (a HOME of the test's own, say).
export async function startServer({token = '', extra = [], env: added = {}} = {}) {
  const cli = process.env.SESSIONDB_CLI;
  if (!cli) throw new Error('set SESSIONDB_CLI to the sessiondb binary (CTest does)');
  const store = mkdtempSync(join(tmpdir(), 'sessiondb-web-'));
  const args = ['serve', '--store', store, '--port', '0', ...extra];
  // The token goes in the environment: serve refuses it on the command line.
  const env = {...process.env, ...added};
  delete env.SESSIONDB_TOKEN;
  if (token) env.SESSIONDB_TOKEN = token;
  const child = spawn(cli, args, {stdio: ['ignore', 'pipe', 'pipe'], env});
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`serve printed no address in 20 s:\n${stdout}\n${stderr}`)), 20_000);
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening:\n${stderr}`));
    });
  });
  const base = url.replace(/\/$/, '');

  // A JSON request to the API; throws with the answer on an unexpected status.
  async function api(method, path, body, {expect} = {}) {
    const headers = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
    const text = await res.text();
    const ok = expect ? res.status === expect : res.ok;
    if (!ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return text ? JSON.parse(text) : null;
  }

  async function stop() {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(store, {recursive: true, force: true});
  }

  return {url, base, api, stop, store, stderr: () => stderr};
}

// ---- The browser -----------------------------------------------------------------

export function launchBrowser() {
  return chromium.launch({
    executablePath: kChromium,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// A new page (in its own context: fresh local storage) that records uncaught
// errors and Content-Security-Policy violations in `problems`.
export async function newPage(browser) {
  const context = await browser.newContext({viewport: {width: 1280, height: 900}, acceptDownloads: true});
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);  // CI runs other suites beside this one
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) {
      problems.push(`console: ${m.text()}`);
    }
  });
  return {page, context, problems};
}

// ---- A real PNG -------------------------------------------------------------------

const crcTable = Array.from({length: 256}, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

// A width x height RGB PNG: a blue-to-green gradient with an orange square.
export function makePng(width, height) {
  const rows = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);  // filter byte 0, then RGB
    for (let x = 0; x < width; x++) {
      const inSquare = x > width / 3 && x < (2 * width) / 3 && y > height / 3 && y < (2 * height) / 3;
      const rgb = inSquare ? [240, 140, 20] : [40, Math.round((200 * y) / height), Math.round(255 - (200 * x) / width)];
      row.set(rgb, 1 + x * 3);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);  // 8 bits, RGB, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---- A small history ----------------------------------------------------------------

export const kRareWord = 'quetzalcoatl';
export const kPngWidth = 320;
export const kPngHeight = 200;
export const kXssText = '<script>window.__xss = 1</script> and <img src=x onerror="window.__xss = 2"> ' +
                        'and [a link](javascript:window.__xss=3) stay text';

const text = (t) => ({type: 'text', text: t});

// Seeds, through the API: a session with Markdown, a tool call and its result,
// reasoning, a PNG, a hostile message, a compaction of #1-#2 and a view of the
// PNG; a fork of it at #3; an archived session. Returns their ids and seqs.
export async function seedHistory(server) {
  const {api} = server;
  const main = await api('POST', '/v1/sessions', {title: 'Fixing the parser'});
  const at = {};
  const resources = {};
  const add = async (name, message) => {
    const result = await api('POST', `/v1/sessions/${main.id}/messages`, message);
    at[name] = result.seq;
    resources[name] = result.resources;
  };
  await add('question', {role: 'user', parts: [text(
      `Der Bär sagt: „${kRareWord}“ 🦎 crashes the parser. Why does ${kRareWord} fail?`)]});
  await add('answer', {role: 'assistant', model: 'demo-model', parts: [text(
      '## The cause\n\nThe **lexer** skips *comments* but not `/* nested */` ones.\n\n' +
      '```cpp\nint main() { return 0; }\n```\n\n- rebuild\n- run the tests\n\n' +
      'See [the docs](https://example.com/docs).')]});
  await add('toolCall', {role: 'assistant', parts: [
    {type: 'reasoning', text: 'I should read the lexer first.'},
    {type: 'tool_call', tool_call_id: 'call_1', tool_name: 'read_file', arguments: {path: 'src/lexer.cc'}}]});
  await add('toolResult', {role: 'tool', parts: [
    {type: 'tool_result', tool_call_id: 'call_1', text: 'int Lex() { /* ... */ }', is_error: false}]});
  await add('image', {role: 'user', parts: [
    text('Here is a screenshot of the failure.'),
    {type: 'image', data_uri: `data:image/png;base64,${makePng(kPngWidth, kPngHeight).toString('base64')}`,
     name: 'failure.png'}]});
  await add('hostile', {role: 'user', parts: [text(kXssText)]});
  const compaction = await api('POST', `/v1/sessions/${main.id}/compactions`, {
    from_seq: at.question, to_seq: at.answer, summary: 'The user asked why the parser fails; the lexer skips nested comments.'});
  const view = await api('POST', `/v1/sessions/${main.id}/views`, {
    resource_id: resources.image[0].resource_id, reason: 'the user asked to look again'});
  const fork = await api('POST', `/v1/sessions/${main.id}/fork`, {at_seq: at.toolCall, title: 'Fixing the parser (another way)'});
  await api('POST', `/v1/sessions/${fork.id}/messages`, {role: 'assistant', parts: [text('Another way: rewrite the lexer.')]});
  const archived = await api('POST', '/v1/sessions', {title: 'Old experiment: tabs or spaces'});
  await api('POST', `/v1/sessions/${archived.id}/messages`, {role: 'user', parts: [text('Tabs or spaces?')]});
  await api('PATCH', `/v1/sessions/${archived.id}`, {archived: true});
  return {main: main.id, fork: fork.id, archived: archived.id, at, compactionSeq: compaction.seq,
          viewSeq: view.seq};
}

// For a test `t`: a real server holding the seeded history and a fresh page,
// both closed when the test ends.
export async function seededServerAndPage(browser, t) {
  const server = await startServer();
  t.after(() => server.stop());
  const ids = await seedHistory(server);
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  return {server, ids, page, problems};
}

// The text of the open session's fork origin, once the parent's title has
// replaced its id (the title comes from a request of its own).
export async function forkOriginText(page, parentTitle) {
  const origin = page.locator('.session-head .fork-origin');
  await origin.locator('a.parent-link', {hasText: parentTitle}).waitFor();
  return origin.textContent();
}

// Opens the page at `hash` and waits for the session list.
export async function openPage(page, server, hash = '#/') {
  await page.goto(server.url + hash);
  await page.waitForSelector('#session-list .session-item');
}
