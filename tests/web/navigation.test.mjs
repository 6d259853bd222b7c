// Getting around: j/k move through the list, Enter opens a session, / goes
// to search, Esc leaves it; on a phone (390 px) the list is a drawer that
// opens from its button and closes when a session opens, and no page is
// wider than the screen, even with a long unbroken line of code or a URL.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, openPage, seededServerAndPage} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const focusedSession = (page) => page.evaluate(() => document.activeElement.closest('li')?.dataset.id ?? null);
const listOrder = (page) => page.$$eval('#session-list .session-item', (nodes) => nodes.map((n) => n.dataset.id));

test('j and k move through the list, Enter opens, / searches, Esc leaves the box', async (t) => {
  const {server, page, problems} = await seededServerAndPage(browser, t);
  await openPage(page, server);
  const order = await listOrder(page);
  assert.equal(order.length, 2);
  await page.keyboard.press('j');
  assert.equal(await focusedSession(page), order[0]);
  await page.keyboard.press('j');
  assert.equal(await focusedSession(page), order[1]);
  await page.keyboard.press('j');  // stays on the last
  assert.equal(await focusedSession(page), order[1]);
  await page.keyboard.press('k');
  assert.equal(await focusedSession(page), order[0]);
  await page.keyboard.press('Enter');
  await page.waitForFunction((id) => location.hash === `#/s/${encodeURIComponent(id)}`, order[0]);
  await page.locator('.session-head').waitFor();

  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'search-input');
  await page.keyboard.type('jk');  // typed into the box, not taken as moves
  assert.equal(await page.inputValue('#search-input'), 'jk');
  await page.keyboard.press('Escape');
  assert.notEqual(await page.evaluate(() => document.activeElement.id), 'search-input');
  assert.deepEqual(problems, []);
});

test('on a phone the list is a drawer, and nothing is wider than the screen', async (t) => {
  const {server, ids, page, problems} = await seededServerAndPage(browser, t);
  const longLine = 'x'.repeat(600);
  await server.api('POST', `/v1/sessions/${ids.main}/messages`, {role: 'assistant', parts: [{type: 'text', text:
      `\`\`\`js\nconst s = "${longLine}";\n\`\`\`\n\nhttps://example.com/${longLine}\n\n${longLine}`}]});
  await page.setViewportSize({width: 390, height: 844});
  await page.goto(server.url);
  const sidebar = page.locator('#sidebar');
  const onScreen = async () => {
    const box = await sidebar.boundingBox();
    return box !== null && box.x >= 0 && box.x + box.width <= 390 && await sidebar.isVisible();
  };
  const widest = () => page.evaluate(() => document.documentElement.scrollWidth);

  assert.equal(await onScreen(), false, 'the list starts closed');
  assert.ok(await widest() <= 390, `the list page is ${await widest()} px wide`);
  await page.click('#drawer-toggle');
  await page.waitForFunction(() => document.body.classList.contains('drawer-open'));
  await page.waitForTimeout(300);  // the slide
  assert.equal(await onScreen(), true, 'the button opens the list');
  assert.equal(await page.getAttribute('#drawer-toggle', 'aria-expanded'), 'true');

  await page.locator(`#session-list li[data-id="${ids.main}"] .session-link`).click();
  await page.locator('.session-head').waitFor();
  await page.waitForFunction(() => !document.body.classList.contains('drawer-open'));
  await page.waitForTimeout(300);
  assert.equal(await onScreen(), false, 'opening a session closes the list');
  await page.locator('article.msg', {hasText: 'https://example.com/'}).first().waitFor();
  assert.ok(await widest() <= 390, `the session page is ${await widest()} px wide`);

  // Esc closes an open drawer too.
  await page.click('#drawer-toggle');
  await page.waitForFunction(() => document.body.classList.contains('drawer-open'));
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.body.classList.contains('drawer-open'));
  assert.deepEqual(problems, []);
});
