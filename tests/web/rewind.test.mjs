// A rewind in an open session: the marker appears live, and the messages it
// took out of the session's view stay in the log, dimmed; later messages are not.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, openPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

test('a rewind shows as a marker and dims what it took out of the view', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const session = await server.api('POST', '/v1/sessions', {title: 'Rewound'});
  for (const text of ['one', 'two', 'three']) {
    await server.api('POST', `/v1/sessions/${session.id}/messages`, {role: 'user', parts: [{type: 'text', text}]});
  }
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openPage(page, server, `#/s/${session.id}`);
  await page.waitForSelector('#seq-3');
  await page.waitForFunction(() => document.body.classList.contains('live'));

  await server.api('POST', `/v1/sessions/${session.id}/rewind`, {to_seq: 1});
  await page.waitForSelector('#seq-4.rewind');
  assert.match(await page.locator('#seq-4').textContent(), /Rewound to #1/);
  await server.api('POST', `/v1/sessions/${session.id}/messages`, {role: 'user', parts: [{type: 'text', text: 'again'}]});
  await page.waitForSelector('#seq-5');

  const dimmed = () => page.locator('.log .event.rewound').evaluateAll((nodes) => nodes.map((n) => n.id));
  assert.deepEqual(await dimmed(), ['seq-2', 'seq-3']);

  // The same from the first read of the log.
  await page.reload();
  await page.waitForSelector('#seq-5');
  assert.deepEqual(await dimmed(), ['seq-2', 'seq-3']);
  assert.deepEqual(problems, []);
});
