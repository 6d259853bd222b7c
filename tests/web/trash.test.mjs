// Forgetting from the page, checked through the API afterwards: Delete moves
// a session to the trash (with an Undo), the Trash view restores it or
// erases it forever (after a confirmation, showing the receipt's counts),
// the retention policy is shown and saved, and the ledger lists what was
// done, newest first.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, openPage, seededServerAndPage} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const setUp = (t) => seededServerAndPage(browser, t);
const trashedIds = async (server) => (await server.api('GET', '/v1/trash')).sessions.map((s) => s.id);

test('Delete moves the session to the trash at once, and Undo brings it back', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await openPage(page, server, `#/s/${ids.fork}`);
  await page.waitForSelector('.log .event');

  await page.click('.delete-button');
  await page.waitForFunction(() => location.hash === '#/');
  await page.locator(`#session-list li[data-id="${ids.fork}"]`).waitFor({state: 'detached'});
  await server.api('GET', `/v1/sessions/${ids.fork}`, undefined, {expect: 404});
  const trash = (await server.api('GET', '/v1/trash')).sessions;
  assert.deepEqual(trash.map((s) => s.id), [ids.fork]);
  assert.ok(trash[0].trashed_ms > 0);
  // No confirmation was asked: the trash is the undo.
  assert.equal(await page.locator('dialog[open]').count(), 0);
  assert.equal(await page.locator('#notice-text').textContent(),
               '"Fixing the parser (another way)" was moved to the trash.');
  // The parent is untouched, and no error was shown.
  assert.equal((await server.api('GET', `/v1/sessions/${ids.main}`)).id, ids.main);
  assert.equal(await page.locator('#banner').isHidden(), true);

  await page.click('#notice-action');
  await page.waitForFunction((id) => location.hash === `#/s/${id}`, ids.fork);
  await page.locator('#session-title', {hasText: 'Fixing the parser (another way)'}).waitFor();
  await page.locator(`#session-list li[data-id="${ids.fork}"]`).waitFor();
  assert.equal((await server.api('GET', `/v1/sessions/${ids.fork}`)).title, 'Fixing the parser (another way)');
  assert.deepEqual(await trashedIds(server), []);
  assert.deepEqual(problems, []);
});

test('the Trash view, reached from the list, restores a session by keyboard', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await server.api('DELETE', `/v1/sessions/${ids.main}`);
  await openPage(page, server);
  assert.equal(await page.locator(`#session-list li[data-id="${ids.main}"]`).count(), 0);

  await page.click('#trash-link');
  await page.waitForFunction(() => location.hash === '#/trash');
  const item = page.locator(`#trash-list li[data-id="${ids.main}"]`);
  await item.waitFor();
  assert.equal(await item.locator('.item-title').textContent(), 'Fixing the parser');
  assert.equal(await page.locator('#trash-list li').count(), 1);
  assert.equal(await page.locator('#trash-link').getAttribute('aria-current'), 'page');

  await item.locator('.restore-button').focus();
  await page.keyboard.press('Enter');
  await item.waitFor({state: 'detached'});
  await page.waitForSelector('#trash-empty:not([hidden])');
  await page.locator(`#session-list li[data-id="${ids.main}"]`).waitFor();
  assert.equal((await server.api('GET', `/v1/sessions/${ids.main}`)).message_count, 6);
  assert.deepEqual(await trashedIds(server), []);

  // The ledger shows the restore above the trashing, newest first.
  await page.waitForSelector('#ledger-rows tr[data-action="restore"]');
  const actions = await page.$$eval('#ledger-rows tr', (rows) => rows.map((r) => r.dataset.action));
  assert.deepEqual(actions.slice(0, 2), ['restore', 'trash']);
  const scope = await page.locator('#ledger-rows tr[data-action="trash"] .scope').textContent();
  assert.match(scope, new RegExp(ids.main));
  assert.notEqual(await page.locator('#ledger-rows tr[data-action="trash"] .actor').textContent(), '');
  assert.deepEqual(problems, []);
});

test('"Erase forever" asks first, then erases for good and shows the receipt\'s counts', async (t) => {
  const {server, ids, page, problems} = await setUp(t);
  await server.api('DELETE', `/v1/sessions/${ids.archived}`);
  await openPage(page, server, '#/trash');
  const item = page.locator(`#trash-list li[data-id="${ids.archived}"]`);
  await item.waitFor();

  await item.locator('.erase-button').click();
  await page.waitForSelector('#erase-dialog[open]');
  assert.match(await page.locator('#erase-dialog').textContent(), /cannot be undone/);
  assert.match(await page.locator('#erase-dialog-text').textContent(), /Old experiment: tabs or spaces/);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#erase-dialog:not([open])', {state: 'attached'});
  assert.deepEqual(await trashedIds(server), [ids.archived]);

  await item.locator('.erase-button').click();
  await page.waitForSelector('#erase-dialog[open]');
  await page.click('#erase-dialog button[value="ok"]');
  await item.waitFor({state: 'detached'});
  await page.waitForSelector('#receipt:not([hidden])');
  assert.equal(await page.locator('#receipt dd[data-kind="sessions"]').textContent(), '1');
  assert.equal(await page.locator('#receipt dd[data-kind="messages"]').textContent(), '1');
  assert.deepEqual(await trashedIds(server), []);
  await server.api('GET', `/v1/sessions/${ids.archived}`, undefined, {expect: 404});
  await server.api('POST', `/v1/trash/${ids.archived}/restore`, undefined, {expect: 404});

  // The ledger's newest entry is this erasure, with the receipt the page showed.
  const [entry] = (await server.api('GET', '/v1/ledger?limit=1')).entries;
  assert.equal(await page.locator('#receipt .receipt-id').textContent(), entry.receipt_id);
  await page.waitForSelector(`#ledger-rows tr[data-id="${entry.id}"]`);
  assert.equal(await page.locator('#ledger-rows tr').first().getAttribute('data-id'), String(entry.id));
  assert.match(await page.locator(`#ledger-rows tr[data-id="${entry.id}"] .counts`).textContent(),
               /^1 session · .*1 message\b/);
  assert.deepEqual(problems, []);
});

test('the retention policy is shown, edited and saved from the page', async (t) => {
  const {server, page, problems} = await setUp(t);
  await openPage(page, server, '#/trash');
  await page.waitForFunction(() => document.getElementById('retention-grace').value === '30');
  assert.equal(await page.locator('.rules tbody tr').count(), 0);

  await page.fill('#retention-grace', '7');
  await page.click('.add-rule');
  const row = page.locator('.rules tbody tr').first();
  await row.locator('input[name="project"]').fill('/src/app');
  await row.locator('input[name="keep_newest"]').fill('3');
  await page.click('.save-retention');
  await page.locator('.retention-status', {hasText: 'Saved.'}).waitFor();
  assert.deepEqual(await server.api('GET', '/v1/retention'), {trash_grace_days: 7, rules: [
    {project: '/src/app', trash_after_idle_days: 0, keep_newest: 3, archive_after_idle_days: 0,
     erase_archived_after_idle_days: 0}]});
  assert.match(await page.locator('.trash-intro').textContent(), /7 days after they were trashed/);

  // A fresh load shows what was saved; a dry run changes nothing.
  await page.reload();
  await page.waitForFunction(() => document.getElementById('retention-grace').value === '7');
  assert.equal(await page.locator('.rules tbody tr input[name="project"]').inputValue(), '/src/app');
  const listed = (await server.api('GET', '/v1/sessions?archived=all')).sessions.length;
  await page.click('.preview-retention');
  await page.locator('.retention-status', {hasText: 'Nothing was changed.'}).waitFor();
  assert.equal((await server.api('GET', '/v1/sessions?archived=all')).sessions.length, listed);

  // A refused policy reaches the banner and is not saved.
  await page.fill('#retention-grace', '7');
  await page.click('.add-rule');
  await page.locator('.rules tbody tr').nth(1).locator('input[name="project"]').fill('/src/app');
  await page.click('.save-retention');
  await page.waitForSelector('#banner:not([hidden])');
  assert.match(await page.locator('#banner-text').textContent(), /invalid_argument/);
  assert.equal((await server.api('GET', '/v1/retention')).rules.length, 1);
  assert.deepEqual(problems, []);
});
