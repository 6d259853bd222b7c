// The session list follows the store without a reload (GET /v1/events):
// sessions created, grown by a message (moved to the top, preview and count
// updated), renamed, archived and deleted through the API by someone else
// appear as they happen. Previews show the text a message's Markdown stands
// for, and search snippets mark a match once, never beside its own asterisks.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, openPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const text = (t) => ({type: 'text', text: t});
const itemTitles = (page) => page.$$eval('#session-list .item-title', (nodes) => nodes.map((n) => n.textContent));
const item = (page, id) => page.locator(`#session-list li[data-id="${id}"]`);

async function freshServerAndPage(t) {
  const server = await startServer();
  t.after(() => server.stop());
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  return {server, page, problems};
}

test('new sessions, messages, renames, archiving and deletions show up live', async (t) => {
  const {server, page, problems} = await freshServerAndPage(t);
  const older = await server.api('POST', '/v1/sessions', {title: 'Older chat'});
  const newer = await server.api('POST', '/v1/sessions', {title: 'Newer chat'});
  await openPage(page, server);
  assert.deepEqual(await itemTitles(page), ['Newer chat', 'Older chat']);
  await page.evaluate(() => { window.__notReloaded = true; });

  const created = await server.api('POST', '/v1/sessions', {title: 'Brand new'});
  await page.waitForFunction(() => document.querySelector('#session-list .item-title')?.textContent === 'Brand new');

  // A message moves its session to the top, with its preview and count.
  await server.api('POST', `/v1/sessions/${older.id}/messages`, {role: 'user', parts: [text(
      '## Plan\n**Bold** start, `code()` and [a link](https://x.example/a) ~~gone~~')]});
  await page.waitForFunction((id) => document.querySelector('#session-list li')?.dataset.id === id, older.id);
  await item(page, older.id).locator('.count', {hasText: '1 message'}).waitFor();
  assert.equal(await item(page, older.id).locator('.item-preview').textContent(),
               'Plan Bold start, code() and a link gone');
  assert.deepEqual(await itemTitles(page), ['Older chat', 'Brand new', 'Newer chat']);

  await server.api('PATCH', `/v1/sessions/${newer.id}`, {title: 'Renamed elsewhere'});
  await item(page, newer.id).locator('.item-title', {hasText: 'Renamed elsewhere'}).waitFor();

  await server.api('PATCH', `/v1/sessions/${older.id}`, {archived: true});
  await item(page, older.id).waitFor({state: 'detached'});

  await server.api('DELETE', `/v1/sessions/${created.id}`);
  await item(page, created.id).waitFor({state: 'detached'});
  assert.deepEqual(await itemTitles(page), ['Renamed elsewhere']);
  assert.equal(await page.evaluate(() => window.__notReloaded), true);
  assert.deepEqual(problems, []);
});

test('previews never show Markdown markers, even cut in half', async (t) => {
  const {server, page, problems} = await freshServerAndPage(t);
  const cut = await server.api('POST', '/v1/sessions', {});
  // Longer than a preview (100 characters): the bold is cut in half. (A
  // preview is one line: the store collapses its whitespace.)
  await server.api('POST', `/v1/sessions/${cut.id}/messages`, {role: 'user', parts: [text(
      `${'word '.repeat(19)}**a bold phrase that the preview cuts somewhere inside it**`)]});
  const plain = await server.api('POST', '/v1/sessions', {title: 'Kept as typed: **stars**'});
  await server.api('POST', `/v1/sessions/${plain.id}/messages`, {role: 'user', parts: [text('> quoted\n- *one*\n- _two_ and snake_case_name')]});
  await openPage(page, server);
  const stored = await server.api('GET', `/v1/sessions/${cut.id}`);
  assert.match(stored.preview, /\*\*/, 'the stored preview holds the marker');
  const preview = await item(page, cut.id).locator('.item-preview').textContent();
  assert.doesNotMatch(preview, /\*/);
  assert.match(preview, /word a b…$/);
  assert.equal(await item(page, plain.id).locator('.item-preview').textContent(), 'quoted - one - two and snake_case_name');
  // A title is what its owner typed, and stays so.
  assert.equal(await item(page, plain.id).locator('.item-title').textContent(), 'Kept as typed: **stars**');
  assert.deepEqual(problems, []);
});

test('a search match inside bold is highlighted once, without asterisks', async (t) => {
  const {server, page, problems} = await freshServerAndPage(t);
  const s = await server.api('POST', '/v1/sessions', {title: 'Emphasis'});
  await server.api('POST', `/v1/sessions/${s.id}/messages`, {role: 'user', parts: [text(
      'Why is the **zeugma** parser slow? *zeugma* again, and `zeugma()` in code.')]});
  await openPage(page, server);
  await page.fill('#search-input', 'zeugma');
  await page.press('#search-input', 'Enter');
  const snippet = page.locator('.hit .snippet').first();
  await snippet.locator('mark').first().waitFor();
  assert.equal(await snippet.textContent(), 'Why is the zeugma parser slow? zeugma again, and zeugma() in code.');
  const marks = await snippet.locator('mark').allTextContents();
  assert.ok(marks.length >= 2, JSON.stringify(marks));
  for (const mark of marks) assert.equal(mark, 'zeugma');
  assert.deepEqual(problems, []);
});
