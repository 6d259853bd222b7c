// What the history cost, in the page: the list shows each session's model
// and cost, a session its own turns' cost with a bar per turn, and the usage
// view the totals by model and project with a chart. Prices come from a
// price file the server is given (serve --prices), so every figure is
// known: 1 USD per million input tokens, 2 per million output.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const text = (t) => ({type: 'text', text: t});

async function usageServer(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sessiondb-prices-'));
  t.after(() => fs.rmSync(dir, {recursive: true, force: true}));
  const prices = path.join(dir, 'prices.json');
  fs.writeFileSync(prices, JSON.stringify({prices: [
    {provider: 'test', model: 'test-model', from: '2020-01-01', input: 1, output: 2, cached_read: 0.5, cache_write: 1.5}]}));
  const server = await startServer({extra: ['--prices', prices]});
  t.after(() => server.stop());
  const {api} = server;
  const turn = (sid, model, usage) => api('POST', `/v1/sessions/${sid}/messages`,
    {role: 'assistant', provider: 'test', model, usage, parts: [text('done')]});
  const shop = await api('POST', '/v1/sessions', {title: 'Shop checkout',
    metadata: {source: 'claude-code', cwd: '/home/dev/shop'}});
  await api('POST', `/v1/sessions/${shop.id}/messages`, {role: 'user', parts: [text('Fix the checkout')]});
  await turn(shop.id, 'test-model', {input_tokens: 1_000_000, output_tokens: 500_000});  // $2
  const forkAt = (await turn(shop.id, 'test-model', {input_tokens: 1_000_000, output_tokens: 500_000})).seq;
  const fork = await api('POST', `/v1/sessions/${shop.id}/fork`, {at_seq: forkAt, title: 'Shop checkout, again'});
  await turn(fork.id, 'test-model', {input_tokens: 1_000_000, output_tokens: 0});  // $1: its own turn only
  const odd = await api('POST', '/v1/sessions', {title: 'Odd model'});
  await turn(odd.id, 'mystery-model', {input_tokens: 1000, output_tokens: 10});  // no price
  return {server, ids: {shop: shop.id, fork: fork.id, odd: odd.id}};
}

const item = (page, title) => page.locator('#session-list .session-item', {has: page.locator('.item-title', {hasText: new RegExp(`^${title}$`)})});

test('the list and a session show what their own turns cost', async (t) => {
  const {server, ids} = await usageServer(t);
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await page.goto(server.url);
  await item(page, 'Shop checkout').locator('.item-cost').waitFor();
  assert.equal(await item(page, 'Shop checkout').locator('.item-usage').textContent(), 'test-model$4.00');
  // A fork counts its own turn, not the two it inherited.
  await item(page, 'Shop checkout, again').locator('.item-cost').waitFor();
  assert.equal(await item(page, 'Shop checkout, again').locator('.item-cost').textContent(), '$1.00');
  // A model no price covers shows no cost rather than $0.
  await item(page, 'Odd model').locator('.item-model').waitFor();
  assert.equal(await item(page, 'Odd model').locator('.item-cost').count(), 0);

  await page.goto(`${server.url}#/s/${ids.shop}`);
  await page.locator('.session-usage .usage-cost').waitFor();
  assert.equal(await page.textContent('.session-usage .usage-cost'), '$4.00');
  assert.equal(await page.textContent('.session-usage .usage-tokens'), '2.0M tokens in, 1.0M out');
  assert.equal(await page.textContent('.session-usage .usage-models'), 'test-model');
  assert.equal(await page.locator('.session-usage-chart rect.bar').count(), 2, 'a bar per turn');

  // New turns reach the list's cost once the session pauses.
  await server.api('POST', `/v1/sessions/${ids.odd}/messages`, {role: 'assistant', provider: 'test', model: 'test-model',
    usage: {input_tokens: 3_000_000, output_tokens: 0}, parts: [text('priced now')]});
  await item(page, 'Odd model').locator('.item-cost', {hasText: '$3.00'}).waitFor();
  assert.deepEqual(problems, []);
});

test('the usage view adds up by model and by project, and says what has no price', async (t) => {
  const {server} = await usageServer(t);
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await page.goto(`${server.url}#/usage`);
  await page.locator('.usage-headline').waitFor();
  assert.equal(await page.textContent('.usage-total-cost'), '$5.00');
  assert.match(await page.textContent('.usage-headline'), /1 turn with no known price/);
  // The chart's last bar is today's, and the legend names the priced model.
  assert.ok(await page.locator('.chart rect.bar').count() >= 1);
  assert.deepEqual(await page.locator('.chart-legend li').allTextContents(), ['test-model']);
  const rows = () => page.$$eval('.usage-table tr', (trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(await rows(), [['test-model', '3', '3.0M', '1.0M', '$5.00'],
                                  ['mystery-model', '1', '1.0k', '10', '$0']]);
  // The sessions that cost most, by title.
  await page.locator('.usage-sessions a', {hasText: 'Shop checkout'}).first().waitFor();
  assert.equal(await page.locator('.usage-sessions li').count(), 3);

  await page.selectOption('.usage-controls select[aria-label="Split by"]', 'project');
  await page.waitForFunction(() => document.querySelector('.usage-body h2')?.textContent.includes('project'));
  const byProject = await rows();
  // The fork is of the same project: its own turn joins the two of its parent, once each.
  assert.deepEqual(byProject.find((r) => r[0] === 'shop'), ['shop', '3', '3.0M', '1.0M', '$5.00']);
  await page.selectOption('.usage-controls select[aria-label="Measure"]', 'tokens');
  await page.waitForFunction(() => document.querySelector('.usage-body h2')?.textContent.startsWith('Tokens'));
  assert.ok((await page.locator('.chart-legend li').allTextContents()).includes('shop'));
  assert.deepEqual(problems, []);
});
