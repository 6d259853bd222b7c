// The import the page offers: `serve --demo` on an empty store whose user has
// Claude Code history seeds no demo sessions; the page offers that history,
// imports it with its progress when asked, and lists what came in. On a
// store holding only the demo, the demo sessions are badged and the offer is
// there too. A request names a source by number only: any other is refused.
import assert from 'node:assert/strict';
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const kSession = '7d3c1c52-93f1-4d8e-b0a4-5f0a8e9b2c11';

// A home with a Claude Code project holding one transcript, written the way
// Claude Code writes it (a user turn, an assistant turn, a summary line).
function homeWithClaudeHistory(t) {
  const home = mkdtempSync(join(tmpdir(), 'sessiondb-web-home-'));
  t.after(() => rmSync(home, {recursive: true, force: true}));
  const project = join(home, '.claude', 'projects', '-home-dev-parser');
  mkdirSync(project, {recursive: true});
  const record = (type, uuid, parent, message) => JSON.stringify({
    parentUuid: parent, isSidechain: false, userType: 'external', cwd: '/home/dev/parser',
    sessionId: kSession, version: '1.0.80', gitBranch: 'main', type, message, uuid,
    timestamp: `2026-11-30T10:0${uuid.at(-1)}:00.000Z`});
  const lines = [
    JSON.stringify({type: 'summary', summary: 'Parser fix', leafUuid: 'u-000000000002'}),
    record('user', 'u-000000000001', null, {role: 'user', content: 'why does the tokenizer drop the last line'}),
    record('assistant', 'u-000000000002', 'u-000000000001', {
      id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-20250514',
      content: [{type: 'text', text: 'It stops at the final newline; read to EOF instead.'}],
      stop_reason: 'end_turn', usage: {input_tokens: 12, output_tokens: 20}}),
  ];
  writeFileSync(join(project, `${kSession}.jsonl`), lines.join('\n') + '\n');
  return home;
}

test('an empty store with Claude Code history: no demo, the page imports it with progress', async (t) => {
  const home = homeWithClaudeHistory(t);
  const server = await startServer({extra: ['--demo'], env: {HOME: home}});
  t.after(() => server.stop());
  assert.match(server.stderr(), /no demo history/);
  assert.deepEqual((await server.api('GET', '/v1/sessions')).sessions, [], 'no demo seeded');

  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await page.goto(server.url);
  const offer = page.locator('#import-offer');
  await offer.waitFor({state: 'visible'});
  assert.match(await offer.locator('.import-label').textContent(),
               new RegExp(`Claude Code history in ${join(home, '.claude', 'projects')}`));
  await offer.locator('button', {hasText: 'Import Claude Code history'}).click();
  await offer.locator('.import-status', {hasText: 'Imported 1 session, 2 messages'}).waitFor();
  await page.locator('#session-list .session-item').first().waitFor();
  assert.equal(await page.locator('#session-list .session-item').count(), 1);
  assert.equal(await page.locator('#session-list .badge.demo').count(), 0);

  const sources = (await server.api('GET', '/v1/import/sources')).sources;
  assert.equal(sources.length, 1);
  assert.equal(sources[0].state, 'done');
  assert.equal(sources[0].done_bytes, sources[0].total_bytes, 'progress reached the whole');
  assert.ok(sources[0].total_bytes > 0);
  const [session] = (await server.api('GET', '/v1/sessions')).sessions;
  const messages = await server.api('GET', `/v1/sessions/${session.id}/messages`);
  assert.deepEqual(messages.messages.map((m) => m.role), ['user', 'assistant']);

  // A second import adds nothing: the store already holds it all.
  await server.api('POST', '/v1/import/sources/0', {}, {expect: 202});
  for (let i = 0; i < 100 && (await server.api('GET', '/v1/import/sources')).sources[0].state === 'running'; ++i) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const again = (await server.api('GET', '/v1/import/sources')).sources[0];
  assert.equal(again.report.sessions_added, 0);
  assert.equal(again.report.sessions_unchanged, 1);
  assert.equal((await server.api('GET', '/v1/sessions')).sessions.length, 1);
  assert.deepEqual(problems, []);
});

test('a source is named by its number only; others are refused and nothing changes', async (t) => {
  const home = homeWithClaudeHistory(t);
  const server = await startServer({env: {HOME: home}});
  t.after(() => server.stop());
  await server.api('POST', '/v1/import/sources/1', {}, {expect: 404});
  await server.api('POST', '/v1/import/sources/99999999999', {}, {expect: 404});
  await server.api('POST', '/v1/import/sources/..%2F..%2Fetc', {}, {expect: 404});
  assert.equal((await server.api('GET', '/v1/import/sources')).sources[0].state, 'idle');
  assert.deepEqual((await server.api('GET', '/v1/sessions')).sessions, []);
});

test('a store holding only the demo: its sessions are badged; with no agent history nothing is offered', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'sessiondb-web-home-'));
  t.after(() => rmSync(home, {recursive: true, force: true}));
  const server = await startServer({extra: ['--demo'], env: {HOME: home}});
  t.after(() => server.stop());
  const demo = (await server.api('GET', '/v1/sessions')).sessions;
  assert.ok(demo.length >= 3, 'the demo was seeded: no agent history in this home');
  const {page, context} = await newPage(browser);
  t.after(() => context.close());
  await page.goto(server.url);
  await page.locator('#session-list .session-item').first().waitFor();
  const items = await page.locator('#session-list .session-item').count();
  assert.equal(await page.locator('#session-list .badge.demo').count(), items, 'every demo session is badged');
  assert.equal(await page.locator('#import-offer').isHidden(), true, 'nothing to offer in this home');
  assert.deepEqual((await server.api('GET', '/v1/import/sources')).sources, []);
});
