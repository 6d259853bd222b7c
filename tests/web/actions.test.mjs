// What the page's buttons do, checked through the API afterwards: rename,
// archive, fork at a message (with a title asked for), export; a session
// opened from its address; and an API error reaching the banner. Delete (to
// the trash) is in trash.test.mjs.
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import {after, before, test} from 'node:test';

import {forkOriginText, launchBrowser, openPage, seededServerAndPage} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const setUp = (t) => seededServerAndPage(browser, t);

test('rename and archive through the page change what the API reports', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.main}`);
  await page.waitForSelector('.log .event');

  await page.click('.rename-button');
  await page.fill('.rename-form input', 'Parser: nested comments');
  await page.click('.rename-form button[type="submit"]');
  await page.waitForFunction(() => document.getElementById('session-title').textContent === 'Parser: nested comments');
  assert.equal((await server.api('GET', `/v1/sessions/${ids.main}`)).title, 'Parser: nested comments');
  await page.locator(`#session-list li[data-id="${ids.main}"] .item-title`, {hasText: 'Parser: nested comments'}).waitFor();

  await page.click('.archive-button');
  await page.locator('.archive-button', {hasText: 'Unarchive'}).waitFor();
  assert.equal((await server.api('GET', `/v1/sessions/${ids.main}`)).archived, true);
  // It left the list of active sessions.
  await page.waitForFunction((id) => !document.querySelector(`#session-list li[data-id="${id}"]`), ids.main);

  await page.click('.archive-button');
  // A regular expression: the text "Archive" is also inside "Unarchive".
  await page.locator('.archive-button', {hasText: /^\s*Archive\s*$/}).waitFor();
  assert.equal((await server.api('GET', `/v1/sessions/${ids.main}`)).archived, false);
  assert.deepEqual(problems, []);
});

test('"Fork here" asks for a title, prefilled with the fork point, then opens the fork', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.main}`);
  await page.click(`#seq-${ids.at.answer} .fork-button`);
  await page.waitForSelector('#fork-dialog[open]');
  assert.equal(await page.inputValue('#fork-title'), `Fixing the parser (fork at ${ids.at.answer})`);
  await page.fill('#fork-title', 'The nested-comment idea');
  await page.click('#fork-dialog button[value="ok"]');
  await page.waitForFunction((id) => /^#\/s\/[^/]+$/.test(location.hash) && !location.hash.includes(id), ids.main);
  const forkId = decodeURIComponent(page.url().split('#/s/')[1]);

  const fork = await server.api('GET', `/v1/sessions/${forkId}`);
  assert.equal(fork.parent_id, ids.main);
  assert.equal(fork.fork_seq, ids.at.answer);
  assert.equal(fork.title, 'The nested-comment idea');
  await page.locator('#session-title', {hasText: 'The nested-comment idea'}).waitFor();
  assert.equal(await forkOriginText(page, 'Fixing the parser'),
               `forked from Fixing the parser at #${ids.at.answer}`);
  // The new session shows the parent's history up to the fork.
  await page.waitForSelector(`#seq-${ids.at.answer}`);
  assert.equal(await page.locator(`#seq-${ids.at.toolCall}`).count(), 0);
  assert.deepEqual(problems, []);
});

test('a fork prompt cancelled, or left with the title as offered, forks accordingly', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.main}`);
  const count = async () => (await server.api('GET', '/v1/sessions?archived=all')).sessions.length;
  const before = await count();

  await page.click(`#seq-${ids.at.question} .fork-button`);
  await page.waitForSelector('#fork-dialog[open]');
  await page.click('#fork-dialog button[value="cancel"]');
  await page.waitForSelector('#fork-dialog:not([open])', {state: 'attached'});
  await page.keyboard.press('Escape');  // nothing open: nothing happens
  assert.equal(await count(), before);
  assert.match(page.url(), new RegExp(`#/s/${ids.main}$`));

  // Enter keeps the title offered.
  await page.click(`#seq-${ids.at.question} .fork-button`);
  await page.waitForSelector('#fork-dialog[open]');
  await page.press('#fork-title', 'Enter');
  await page.waitForFunction((id) => !location.hash.includes(id), ids.main);
  const forkId = decodeURIComponent(page.url().split('#/s/')[1]);
  assert.equal((await server.api('GET', `/v1/sessions/${forkId}`)).title,
               `Fixing the parser (fork at ${ids.at.question})`);
  assert.equal(await count(), before + 1);
  assert.deepEqual(problems, []);
});

test('a session\'s address opens it directly, scrolled to the event it names', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  // A fresh page loaded at the address, as from a bookmark: an archived
  // session, not in the list shown, and an event in it.
  const archived = await server.api('GET', `/v1/sessions/${ids.archived}`);
  await page.goto(`${server.url}#/s/${ids.archived}/1`);
  await page.locator('#session-title', {hasText: archived.title}).waitFor();
  await page.waitForSelector('#seq-1.focused');
  await page.waitForFunction(() => document.body.classList.contains('live'));

  // The address in the page's own links is the same one.
  await page.goto(`${server.url}#/s/${ids.main}/${ids.at.answer}`);
  await page.locator('#session-title', {hasText: 'Fixing the parser'}).waitFor();
  await page.waitForSelector(`#seq-${ids.at.answer}.focused`);
  assert.equal(await page.locator(`#seq-${ids.at.answer} a.seq`).getAttribute('href'),
               `#/s/${ids.main}/${ids.at.answer}`);
  await page.waitForSelector(`#session-list li.current[data-id="${ids.main}"]`);
  assert.deepEqual(problems, []);
});

test('export links download the snapshot, Markdown and JSONL (and link ac-dc, Agents.KT)', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.main}`);
  await page.waitForSelector('.exports a');
  const hrefs = await page.$$eval('.exports a', (links) => links.map((a) => a.getAttribute('href')));
  assert.deepEqual(hrefs, ['snapshot', 'markdown', 'jsonl', 'ac-dc', 'agents-kt'].map(
      (f) => `/v1/sessions/${ids.main}/export?format=${f}`));

  const [snapshot] = await Promise.all([page.waitForEvent('download'), page.click('.exports a >> text=snapshot')]);
  assert.equal(snapshot.suggestedFilename(), `${ids.main}.json`);
  const doc = JSON.parse(readFileSync(await snapshot.path(), 'utf8'));
  assert.match(JSON.stringify(doc), /Fixing the parser/);

  const [markdown] = await Promise.all([page.waitForEvent('download'), page.click('.exports a >> text=Markdown')]);
  assert.match(markdown.suggestedFilename(), /\.zip$/);
  assert.equal(readFileSync(await markdown.path()).subarray(0, 2).toString(), 'PK');

  const [jsonl] = await Promise.all([page.waitForEvent('download'), page.click('.exports a >> text=JSONL')]);
  assert.equal(jsonl.suggestedFilename(), `${ids.main}.jsonl`);
  const lines = readFileSync(await jsonl.path(), 'utf8').trim().split('\n');
  assert.ok(lines.length > 1 && lines.every((line) => JSON.parse(line)));
  assert.deepEqual(problems, []);
});

test('an API error is shown in the banner', async (t) => {
  const {server, page, problems} = await setUp(t);
  await openPage(page, server, '#/s/no-such-session');
  await page.waitForSelector('#banner:not([hidden])');
  const text = await page.locator('#banner-text').textContent();
  assert.match(text, /no-such-session/);
  assert.match(text, /not_found/);
  await page.click('#banner-close');
  await page.waitForSelector('#banner', {state: 'hidden'});

  // The server's refusal of an action is shown too: an empty title.
  const session = await server.api('POST', '/v1/sessions', {title: 'Keep me'});
  await page.goto(`${server.url}#/s/${session.id}`);
  await page.click('.rename-button');
  await page.fill('.rename-form input', '   ');
  await page.click('.rename-form button[type="submit"]');
  await page.waitForSelector('#banner:not([hidden])');
  assert.equal(await page.locator('#banner-text').textContent(),
               'a session title cannot be empty (invalid_argument, HTTP 400)');
  assert.equal((await server.api('GET', `/v1/sessions/${session.id}`)).title, 'Keep me');

  // And an action on a session another client deleted meanwhile.
  await server.api('DELETE', `/v1/sessions/${session.id}`);
  await page.click('#banner-close');
  await page.click('.archive-button');
  await page.waitForSelector('#banner:not([hidden])');
  assert.match(await page.locator('#banner-text').textContent(), /not_found/);
  assert.deepEqual(problems, []);
});
