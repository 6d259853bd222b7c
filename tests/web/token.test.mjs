// A server started with a token ($SESSIONDB_TOKEN): the page asks for it once, keeps it, and
// then everything works with it: the list, images (fetched with the token),
// and the live stream (?token=).
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, seedHistory, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const kToken = 's3cret-token';

test('the page asks for the token, keeps it, and then works', async (t) => {
  const server = await startServer({token: kToken});
  t.after(() => server.stop());
  const ids = await seedHistory(server);
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());

  await page.goto(`${server.url}#/s/${ids.main}`);
  await page.waitForSelector('#token-dialog[open]');
  assert.equal(await page.locator('#session-list .session-item').count(), 0);

  // A wrong token is refused and asked for again.
  await page.fill('#token-input', 'wrong');
  await page.press('#token-input', 'Enter');
  await page.waitForFunction(() => /refused/.test(document.getElementById('token-hint').textContent) &&
                                   document.getElementById('token-dialog').open);
  await page.fill('#token-input', kToken);
  await page.press('#token-input', 'Enter');
  await page.waitForSelector('#token-dialog', {state: 'hidden'});

  await page.waitForSelector(`#session-list li[data-id="${ids.main}"]`);
  assert.equal(await page.evaluate(() => localStorage.getItem('sessiondb.token')), kToken);
  await page.waitForSelector(`#seq-${ids.at.hostile}`);

  // <img> cannot send the header: the page fetched the bytes with it.
  const thumb = `#seq-${ids.at.image} .thumb img`;
  await page.locator(thumb).scrollIntoViewIfNeeded();
  await page.waitForFunction((sel) => {
    const img = document.querySelector(sel);
    return img && img.complete && img.naturalWidth > 0;
  }, thumb);
  assert.match(await page.locator(thumb).getAttribute('src'), /^blob:/);

  // The event stream takes the token as ?token=.
  await page.waitForFunction(() => document.body.classList.contains('live'));
  const added = await server.api('POST', `/v1/sessions/${ids.main}/messages`,
                                 {role: 'assistant', parts: [{type: 'text', text: 'arrived with the token'}]});
  await page.waitForSelector(`#seq-${added.seq}`);

  // A reload does not ask again.
  await page.reload();
  await page.waitForSelector(`#session-list li[data-id="${ids.main}"]`);
  assert.equal(await page.locator('#token-dialog[open]').count(), 0);
  assert.deepEqual(problems, []);
});
