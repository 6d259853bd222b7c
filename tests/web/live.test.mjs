// An open session follows the log live: messages appended through the API
// appear without a reload, and a draft shows as a growing message that the
// final one replaces.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, openPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

// A server with a session of one user message, open in a fresh page that
// follows it live.
async function openLiveSession(t, title, firstText) {
  const server = await startServer();
  t.after(() => server.stop());
  const session = await server.api('POST', '/v1/sessions', {title});
  await server.api('POST', `/v1/sessions/${session.id}/messages`, {role: 'user', parts: [{type: 'text', text: firstText}]});
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openPage(page, server, `#/s/${session.id}`);
  await page.waitForSelector('#seq-1');
  await page.waitForFunction(() => document.body.classList.contains('live'));
  return {server, session, page, problems};
}

test('a message appended through the API appears without a reload', async (t) => {
  const {server, session, page, problems} = await openLiveSession(t, 'Live', 'first');
  await page.evaluate(() => { window.__notReloaded = true; });

  await server.api('POST', `/v1/sessions/${session.id}/messages`,
                   {role: 'assistant', parts: [{type: 'text', text: 'second, **live**'}]});
  await page.waitForSelector('#seq-2 strong');
  assert.equal(await page.locator('#seq-2 .md').textContent(), 'second, live');
  assert.equal(await page.locator('.session-head .count').textContent(), '2 messages');
  assert.equal(await page.evaluate(() => window.__notReloaded), true);
  assert.equal(await page.locator('.log .event').count(), 2);
  assert.deepEqual(problems, []);
});

test('a draft grows as a typing message and the final message replaces it', async (t) => {
  const {server, session, page, problems} = await openLiveSession(t, 'Streaming', 'tell me');

  const draft = await server.api('POST', `/v1/sessions/${session.id}/drafts`, {model: 'demo-model'});
  const draftId = draft.id || draft.draft_id;
  await server.api('POST', `/v1/drafts/${draftId}/delta`, {text: 'Once upon'});
  await page.waitForFunction(() => document.querySelector('.draft .md')?.textContent === 'Once upon');
  await server.api('POST', `/v1/drafts/${draftId}/delta`, {text: ' a time'});
  await page.waitForFunction(() => document.querySelector('.draft .md')?.textContent === 'Once upon a time');
  assert.match(await page.locator('.draft .typing').textContent(), /typing/);

  await server.api('POST', `/v1/drafts/${draftId}/finish`, {});
  await page.waitForSelector('#seq-2');
  await page.waitForSelector('.draft', {state: 'detached'});
  assert.equal(await page.locator('#seq-2 .md').textContent(), 'Once upon a time');
  assert.deepEqual(problems, []);
});
