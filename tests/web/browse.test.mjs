// The history browser shows what the store holds: the session list with its
// filter and fork origins, search with highlighted snippets, and a session's
// log (Markdown, images, folded tool calls, compaction markers), with hostile
// message text shown as text.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {forkOriginText, kPngHeight, kPngWidth, kRareWord, kXssText, launchBrowser, newPage,
        openPage, seededServerAndPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const setUp = (t) => seededServerAndPage(browser, t);

const itemTitles = (page) => page.$$eval('#session-list .item-title', (nodes) => nodes.map((n) => n.textContent));

test('the list shows titles, counts, the archived filter and fork origins', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server);

  assert.deepEqual((await itemTitles(page)).sort(), ['Fixing the parser', 'Fixing the parser (another way)']);
  const main = page.locator(`#session-list li[data-id="${ids.main}"]`);
  const expected = await server.api('GET', `/v1/sessions/${ids.main}`);
  assert.equal(await main.locator('.count').textContent(), `${expected.message_count} messages`);

  // The fork says where it came from, and links there.
  const fork = page.locator(`#session-list li[data-id="${ids.fork}"] .item-fork`);
  await fork.locator('a', {hasText: 'Fixing the parser'}).waitFor();
  assert.equal(await fork.textContent(), `forked from Fixing the parser at #${ids.at.toolCall}`);
  assert.equal(await fork.locator('a').getAttribute('href'), `#/s/${ids.main}/${ids.at.toolCall}`);

  await page.check('input[name="archived"][value="archived"]');
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 1);
  assert.deepEqual(await itemTitles(page), ['Old experiment: tabs or spaces']);
  assert.equal(await page.locator('#session-list .badge', {hasText: 'archived'}).count(), 1);

  await page.check('input[name="archived"][value="all"]');
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 3);
  assert.equal((await itemTitles(page)).length, 3);
  assert.deepEqual(problems, []);
});

test('"Load more" pages through the list with next_cursor', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  for (let i = 1; i <= 53; i++) await server.api('POST', '/v1/sessions', {title: `Chat ${i}`});
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openPage(page, server);
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 50);
  assert.equal(await page.locator('#load-more').isVisible(), true);
  await page.click('#load-more');
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 53);
  assert.equal(await page.locator('#load-more').isVisible(), false);
  assert.equal(new Set(await itemTitles(page)).size, 53);
  assert.deepEqual(problems, []);
});

test('search marks the matched word in the snippet and a hit opens the session at it', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server);
  await page.fill('#search-input', kRareWord);
  await page.press('#search-input', 'Enter');
  await page.waitForSelector('.hits mark');

  // The snippet has multi-byte characters before the word: the byte ranges
  // must still land exactly on it.
  const marks = await page.$$eval('.hits mark', (nodes) => nodes.map((n) => n.textContent));
  assert.ok(marks.length >= 1);
  for (const m of marks) assert.equal(m.toLowerCase(), kRareWord);
  const snippet = await page.locator('.hits .snippet').first().textContent();
  assert.match(snippet, /Bär/);

  await page.click(`.hits a[href="#/s/${ids.main}/${ids.at.question}"]`);
  await page.waitForSelector(`#seq-${ids.at.question}.focused`);
  assert.equal(await page.locator('#session-title').textContent(), 'Fixing the parser');
  assert.deepEqual(problems, []);
});

test('a session shows its image, Markdown, folded tools and reasoning, compaction and a resource view', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.main}`);
  await page.waitForSelector(`#seq-${ids.viewSeq}`);

  // The thumbnail has loaded from /v1/blobs/<sha256>, small.
  const thumb = page.locator(`#seq-${ids.at.image} .thumb img`);
  await thumb.scrollIntoViewIfNeeded();
  await page.waitForFunction((sel) => {
    const img = document.querySelector(sel);
    return img && img.complete && img.naturalWidth > 0;
  }, `#seq-${ids.at.image} .thumb img`);
  assert.match(await thumb.getAttribute('src'), /^\/v1\/blobs\/[0-9a-f]{64}$/);
  const shown = await thumb.boundingBox();
  assert.ok(shown.width <= 240 && shown.height <= 180, `thumbnail is ${shown.width}x${shown.height}`);

  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({path: '/tmp/sessiondb-web-session.png', fullPage: true});

  // Clicking opens it full size.
  await thumb.click();
  await page.waitForFunction(() => {
    const img = document.getElementById('lightbox-image');
    return !document.getElementById('lightbox').hidden && img.complete && img.naturalWidth > 0;
  });
  assert.deepEqual(await page.$eval('#lightbox-image', (img) => [img.naturalWidth, img.naturalHeight]),
                   [kPngWidth, kPngHeight]);
  await page.screenshot({path: '/tmp/sessiondb-web-lightbox.png'});
  await page.keyboard.press('Escape');
  await page.waitForSelector('#lightbox', {state: 'hidden'});

  // Markdown: a heading, a fenced block with its language, a list, a safe link.
  const answer = page.locator(`#seq-${ids.at.answer} .md`);
  assert.equal(await answer.locator('h2').textContent(), 'The cause');
  assert.equal(await answer.locator('pre > code.language-cpp').textContent(), 'int main() { return 0; }');
  assert.equal(await answer.locator('strong').textContent(), 'lexer');
  assert.equal(await answer.locator('ul > li').count(), 2);
  assert.equal(await answer.locator('a').getAttribute('href'), 'https://example.com/docs');

  // The tool call is folded and named, its result shown with it (the
  // result's own message points back to the call); reasoning is folded too.
  const call = page.locator(`#seq-${ids.at.toolCall} details.tool-call`);
  assert.equal(await call.evaluate((d) => d.open), false);
  assert.match(await call.locator('summary').textContent(), /read_file/);
  assert.equal(await call.locator('pre').first().isVisible(), false);
  await call.locator('summary').click();
  assert.match(await call.locator('pre code.language-json').textContent(), /src\/lexer\.cc/);
  assert.equal(await call.locator('.tool-result-slot pre.tool-output').textContent(), 'int Lex() { /* ... */ }');
  const pointer = page.locator(`#seq-${ids.at.toolResult} .tool-result-marker`);
  assert.match(await pointer.textContent(), new RegExp(`read_file shown with its call at #${ids.at.toolCall}`));
  assert.equal(await page.locator(`#seq-${ids.at.toolResult} details.tool-result`).count(), 0);
  const reasoning = page.locator(`#seq-${ids.at.toolCall} details.reasoning`);
  assert.equal(await reasoning.evaluate((d) => d.open), false);

  // The compaction marker: its range and summary.
  const marker = page.locator(`#seq-${ids.compactionSeq}.compaction`);
  assert.match(await marker.textContent(), new RegExp(`#${ids.at.question}–#${ids.at.answer}`));
  assert.match(await marker.textContent(), /the lexer skips nested comments/);

  // The resource view: which attachment was shown again, and why.
  const view = page.locator(`#seq-${ids.viewSeq}.resource-view`);
  assert.match(await view.textContent(), /failure\.png/);
  assert.match(await view.textContent(), /the user asked to look again/);
  assert.equal(await view.locator(`a[href="#/s/${ids.main}/${ids.at.image}"]`).count(), 1);
  assert.equal(await view.locator('.thumb img').count(), 1);
  assert.deepEqual(problems, []);
});

test('hostile message text is shown as text: no script, no element, no javascript: link', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.main}`);
  const hostile = page.locator(`#seq-${ids.at.hostile} .md`);
  await hostile.waitFor();
  assert.equal(await hostile.textContent(), kXssText.replace('[a link](javascript:window.__xss=3)', 'a link'));
  assert.equal(await hostile.locator('script, img, a').count(), 0);
  assert.equal(await page.locator('.log script, .log img[src="x"], a[href^="javascript"]').count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.deepEqual(problems, []);
});

test('a fork shows its origin and its parent\'s history up to the fork', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.fork}`);
  await page.waitForSelector('.fork-divider');
  assert.equal(await forkOriginText(page, 'Fixing the parser'),
               `forked from Fixing the parser at #${ids.at.toolCall}`);
  assert.match(await page.locator('.log').textContent(), /Another way: rewrite the lexer/);
  assert.deepEqual(problems, []);
});
