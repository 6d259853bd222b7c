// The web history browser in a real browser: Debian's Chromium, headless,
// driven by playwright-core, against the real `sessiondb serve` on a loopback
// port with a fresh store per test. The store is seeded and checked through
// the HTTP API, so every assertion about the page is also checked against
// what the server holds.
import {after, before, test} from 'node:test';
import assert from 'node:assert/strict';
import {spawn} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {chromium} from 'playwright-core';

const CLI = process.env.SESSIONDB_CLI;
assert.ok(CLI, 'set SESSIONDB_CLI to the sessiondb binary (ctest does)');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// A 6x4 PNG (RGB, one color), as any image a chat app receives.
const PNG_BASE64 =
    'iVBORw0KGgoAAAANSUhEUgAAAAYAAAAECAIAAAAiZtkUAAAAEUlEQVR42mP40KOBhhjIFQIA65cnYb7ab3AAAAAASUVORK5CYII=';

let browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
after(async () => { await browser?.close(); });

// Starts `sessiondb serve --port 0` on a fresh store; resolves once it listens.
async function startServer(t, args = [], env = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sessiondb-web-'));
  const child = spawn(CLI, ['--store', join(dir, 'store'), 'serve', '--port', '0', ...args],
                      {env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'pipe']});
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) resolve(m[0]);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  t.after(() => {
    child.kill('SIGTERM');
    rmSync(dir, {recursive: true, force: true});
  });
  const call = async (method, path, body, token) => {
    const headers = {'Content-Type': 'application/json'};
    if (token) headers.Authorization = 'Bearer ' + token;
    const res = await fetch(url + path.slice(1), {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
    const text = await res.text();
    return {status: res.status, body: text ? JSON.parse(text) : null};
  };
  return {url, call};
}

const text = (t, role = 'user') => ({role, parts: [{type: 'text', text: t}]});

// The seeded history every test starts from.
async function seed(call) {
  const chat = (await call('POST', '/v1/sessions', {title: 'Build failure'})).body;
  await call('POST', `/v1/sessions/${chat.id}/messages`, text('Why does the zanzibar build fail?'));
  await call('POST', `/v1/sessions/${chat.id}/messages`, {
    role: 'assistant',
    parts: [
      {type: 'text', text: 'Let me check.'},
      {type: 'tool_call', tool_call_id: 'c1', tool_name: 'read_file', arguments: {path: 'CMakeLists.txt'}},
    ],
  });
  await call('POST', `/v1/sessions/${chat.id}/messages`, {
    role: 'tool', parts: [{type: 'tool_result', tool_call_id: 'c1', text: 'add_executable(app main.cc)'}],
  });
  await call('POST', `/v1/sessions/${chat.id}/messages`, text(
      '## The fix\n\nAdd **config.cc**:\n\n```cmake\nadd_executable(app main.cc config.cc)\n```\n\n- rebuild\n- test',
      'assistant'));
  await call('POST', `/v1/sessions/${chat.id}/messages`,
             text('<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> [x](javascript:alert(1))'));

  const picture = (await call('POST', '/v1/sessions', {title: 'Picture'})).body;
  const appended = await call('POST', `/v1/sessions/${picture.id}/messages`, {
    role: 'user',
    parts: [{type: 'text', text: 'What is this?'}, {type: 'image', data_uri: 'data:image/png;base64,' + PNG_BASE64}],
  });
  assert.equal(appended.status, 201);

  const fork = (await call('POST', `/v1/sessions/${chat.id}/fork`, {at_seq: 2, title: 'Alternative'})).body;
  const old = (await call('POST', '/v1/sessions', {title: 'Old archived talk'})).body;
  await call('POST', `/v1/sessions/${old.id}/messages`, text('long ago'));
  await call('PATCH', `/v1/sessions/${old.id}`, {archived: true});

  const planned = (await call('POST', '/v1/sessions', {title: 'Compacted plan'})).body;
  for (const t of ['one', 'two', 'three']) await call('POST', `/v1/sessions/${planned.id}/messages`, text(t));
  const compaction = await call('POST', `/v1/sessions/${planned.id}/compactions`,
                                {from_seq: 1, to_seq: 2, summary: 'Steps one and two are done.'});
  assert.equal(compaction.status, 201);
  return {chat, picture, fork, old, planned};
}

async function openPage(url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('.session-item');
  return {page, errors};
}

const sessionItem = (page, title) => page.locator('.session-item', {has: page.locator('.title', {hasText: title})});

test('the list shows titles, counts, fork origins and the archived filter', async (t) => {
  const {url, call} = await startServer(t);
  const s = await seed(call);
  const {page, errors} = await openPage(url);
  const titles = await page.locator('.session-item .title').allTextContents();
  assert.deepEqual(titles.sort(), ['Alternative', 'Build failure', 'Compacted plan', 'Picture']);
  assert.match(await sessionItem(page, 'Build failure').locator('.meta').textContent(), /5 messages/);
  const origin = sessionItem(page, 'Alternative').locator('.fork-origin');
  await origin.locator('a', {hasText: 'Build failure'}).waitFor();
  assert.match(await origin.textContent(), /forked from Build failure at #2/);
  assert.equal(await origin.locator('a').getAttribute('href'), '#/s/' + s.chat.id);

  await page.selectOption('#archived-filter', 'archived');
  await page.waitForFunction(() => document.querySelectorAll('.session-item').length === 1);
  assert.equal(await page.locator('.session-item .title').first().textContent(), 'Old archived talkarchived');
  await page.selectOption('#archived-filter', 'all');
  await page.waitForFunction(() => document.querySelectorAll('.session-item').length === 5);
  assert.deepEqual(errors, []);
});

test('search shows highlighted snippets and opens the hit in its session', async (t) => {
  const {url, call} = await startServer(t);
  const s = await seed(call);
  const {page, errors} = await openPage(url);
  await page.fill('#search-input', 'zanzibar');
  await page.press('#search-input', 'Enter');
  await page.waitForSelector('.hit');
  assert.equal(await page.locator('.hit mark').first().textContent(), 'zanzibar');
  assert.match(await page.locator('.hit .where').first().textContent(), /Build failure · #1/);
  await page.locator('.hit').first().click();
  await page.waitForSelector('#seq-1.highlighted');
  assert.equal(await page.locator('#session-title').textContent(), 'Build failure');
  assert.equal(new URL(page.url()).hash, `#/s/${s.chat.id}/1`);
  assert.deepEqual(errors, []);
});

test('a session renders Markdown, folds tool calls, keeps hostile text as text, and marks compactions', async (t) => {
  const {url, call} = await startServer(t);
  const s = await seed(call);
  const {page, errors} = await openPage(url);
  await page.goto(`${url}#/s/${s.chat.id}`);
  await page.waitForSelector('#seq-5');
  assert.equal(await page.locator('#seq-4 pre code.language-cmake').textContent(), 'add_executable(app main.cc config.cc)');
  assert.equal(await page.locator('#seq-4 .markdown h4').textContent(), 'The fix');
  assert.equal(await page.locator('#seq-4 strong').textContent(), 'config.cc');
  assert.equal(await page.locator('#seq-4 li').count(), 2);

  const toolCall = page.locator('#seq-2 details.tool-call');
  assert.equal(await toolCall.getAttribute('open'), null);  // folded
  assert.equal(await toolCall.locator('summary').textContent(), 'Tool call: read_file');
  assert.equal(await toolCall.locator('pre').isVisible(), false);
  await toolCall.locator('summary').click();
  assert.match(await toolCall.locator('pre').textContent(), /CMakeLists.txt/);
  assert.match(await page.locator('#seq-3 details.tool-result summary').textContent(), /Tool result for c1/);

  const hostile = page.locator('#seq-5');
  assert.match(await hostile.textContent(), /<script>window.pwned = 1<\/script><img src=x onerror=/);
  assert.equal(await hostile.locator('script, img').count(), 0);
  assert.equal(await hostile.locator('a').count(), 0);  // javascript: links are not links
  assert.equal(await page.evaluate(() => window.pwned), undefined);

  await page.goto(`${url}#/s/${s.planned.id}`);
  await page.waitForSelector('.compaction');
  assert.match(await page.locator('.compaction').textContent(), /Summary of #1–#2.*Steps one and two are done\./s);
  assert.deepEqual(errors, []);
});

test('an image shows as a loaded thumbnail that opens full size', async (t) => {
  const {url, call} = await startServer(t);
  const s = await seed(call);
  const {page, errors} = await openPage(url);
  await sessionItem(page, 'Picture').click();
  const thumb = page.locator('img.thumb');
  await thumb.waitFor();
  await page.waitForFunction(() => {
    const img = document.querySelector('img.thumb');
    return img.complete && img.naturalWidth === 6 && img.naturalHeight === 4;
  });
  const read = await call('GET', `/v1/sessions/${s.picture.id}/messages`);
  assert.equal(await thumb.getAttribute('data-sha256'), read.body.messages[0].parts[1].resource.content_sha256);
  await thumb.click();
  await page.waitForSelector('#lightbox:not([hidden])');
  const full = await page.evaluate(() => {
    const img = document.getElementById('lightbox-image');
    return {w: img.naturalWidth, shown: img.getBoundingClientRect().width};
  });
  assert.equal(full.w, 6);
  assert.ok(full.shown >= 300, `the full-size view is ${full.shown}px wide`);
  await page.click('#lightbox');
  await page.waitForSelector('#lightbox', {state: 'hidden'});
  assert.deepEqual(errors, []);
});

test('rename, archive, fork at a message and export change what the server holds', async (t) => {
  const {url, call} = await startServer(t);
  const s = await seed(call);
  const {page, errors} = await openPage(url);
  await page.goto(`${url}#/s/${s.chat.id}`);
  await page.waitForSelector('#seq-5');

  await page.click('#rename-button');
  await page.fill('#rename-input', 'Linker error, solved');
  await page.click('#rename-form button[type=submit]');
  await page.waitForFunction(() => document.getElementById('session-title').textContent === 'Linker error, solved');
  assert.equal((await call('GET', `/v1/sessions/${s.chat.id}`)).body.title, 'Linker error, solved');

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
  assert.equal(download.suggestedFilename(), `${s.chat.id}.json`);

  await page.locator('#seq-3 .fork-button').click();
  await page.waitForFunction((id) => location.hash.startsWith('#/s/') && !location.hash.includes(id), s.chat.id);
  const forkId = decodeURIComponent(new URL(page.url()).hash.slice('#/s/'.length));
  const fork = (await call('GET', `/v1/sessions/${forkId}`)).body;
  assert.equal(fork.parent_id, s.chat.id);
  assert.equal(fork.fork_seq, 3);
  await page.waitForSelector('#seq-3');
  assert.equal(await page.locator('#events .event').count(), 3);

  await page.goto(`${url}#/s/${s.picture.id}`);
  await page.waitForFunction(() => document.getElementById('session-title').textContent === 'Picture');
  await page.click('#archive-button');
  await page.waitForFunction(() => document.getElementById('archive-button').textContent === 'Unarchive');
  assert.equal((await call('GET', `/v1/sessions/${s.picture.id}`)).body.archived, true);
  assert.deepEqual(errors, []);
});

test('an open session follows live appends and streamed drafts', async (t) => {
  const {url, call} = await startServer(t);
  const s = await seed(call);
  const {page, errors} = await openPage(url);
  await page.goto(`${url}#/s/${s.picture.id}`);
  await page.waitForSelector('#seq-1');
  await call('POST', `/v1/sessions/${s.picture.id}/messages`, text('A tiny orange rectangle.', 'assistant'));
  await page.waitForSelector('#seq-2');
  assert.match(await page.locator('#seq-2').textContent(), /A tiny orange rectangle\./);

  const draft = (await call('POST', `/v1/sessions/${s.picture.id}/drafts`, {model: 'm'})).body;
  await call('POST', `/v1/drafts/${draft.id}/delta`, {text: 'Thinking about '});
  await call('POST', `/v1/drafts/${draft.id}/delta`, {text: 'colours'});
  await page.waitForFunction(() => /Thinking about colours/.test(document.getElementById('drafts').textContent));
  await call('POST', `/v1/drafts/${draft.id}/finish`, {});
  await page.waitForSelector('#seq-3');
  assert.match(await page.locator('#seq-3').textContent(), /Thinking about colours/);
  await page.waitForFunction(() => document.querySelectorAll('#drafts .draft').length === 0);
  assert.equal(await page.locator('#events .event').count(), 3);
  assert.deepEqual(errors, []);
});

test('with a token the page asks for it once and then works', async (t) => {
  const {url, call} = await startServer(t, ['--token', 'hunter2-but-longer']);
  const made = await call('POST', '/v1/sessions', {title: 'Guarded'}, 'hunter2-but-longer');
  assert.equal(made.status, 201);
  assert.equal((await call('GET', '/v1/sessions')).status, 401);
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForSelector('#token-dialog[open]');
  await page.fill('#token-input', 'hunter2-but-longer');
  await page.click('#token-form button');
  await page.waitForSelector('.session-item');
  assert.equal(await page.locator('.session-item .title').textContent(), 'Guarded');
  // Live events carry the token too.
  await page.locator('.session-item').click();
  await page.waitForFunction(() => document.getElementById('session-title').textContent === 'Guarded');
  await call('POST', `/v1/sessions/${made.body.id}/messages`, text('seen live'), 'hunter2-but-longer');
  await page.waitForSelector('#seq-1');
});

test('an API error is shown in the banner', async (t) => {
  const {url, call} = await startServer(t);
  await seed(call);
  const {page} = await openPage(url);
  assert.equal(await page.locator('#banner').isVisible(), false);
  await page.goto(`${url}#/s/no-such-session`);
  await page.waitForSelector('#banner:not([hidden])');
  assert.match(await page.locator('#banner-text').textContent(), /session 'no-such-session' does not exist \(not_found\)/);
  await page.click('#banner-close');
  assert.equal(await page.locator('#banner').isVisible(), false);
});
