// Code checkpoints on the page (issue 39): the files a message's tool calls
// wrote, "Rewind here" (a dry run shown first, nothing changed until it is
// confirmed, conflicts only with force), a file's history with its diffs,
// blame linking lines to their turns, and "Restore this version".
//
// The versions are recorded as in real use: the real hook binary
// (`sessiondb hook claude-code`) runs before and after each Write the test
// makes on disk, and the session holding the tool calls is appended through
// the API with the hook's session id.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {randomUUID} from 'node:crypto';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, openPage, startServer} from './support.mjs';

const kFirst = 'def greet():\n    return "hello"\n';
const kSecond = 'def greet():\n    return "hello, world"\n\n\ndef part():\n    return "bye"\n';
// The second prompt is hostile: it must show as text.
const kSecondPrompt = 'Greet the world <img src=x onerror="window.__xss = 1">';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

// One hook event through the real binary, against the server's store.
function runHook(server, event) {
  const run = spawnSync(process.env.SESSIONDB_CLI, ['hook', 'claude-code', '--store', server.store], {
    input: JSON.stringify(event), encoding: 'utf8', env: {...process.env, SESSIONDB_HOOK_QUIET: '1'},
  });
  assert.equal(run.status, 0, `the hook failed: ${run.stderr}`);
}

// A session whose agent wrote `path` twice: #1 asks, #2 writes kFirst
// (toolu_1), #3 asks again, #4 writes kSecond (toolu_2). Each write goes
// to disk between the hook's PreToolUse and PostToolUse.
async function agentWroteTwice(server, t) {
  const folder = mkdtempSync(join(tmpdir(), 'sessiondb-web-code-'));
  t.after(() => rmSync(folder, {recursive: true, force: true}));
  const path = join(folder, 'app.py');
  const id = randomUUID();
  await server.api('POST', '/v1/sessions', {id, title: 'Writing app.py'});
  const say = (role, parts) => server.api('POST', `/v1/sessions/${id}/messages`, {role, parts});
  const write = async (toolUseId, content, prompt) => {
    await say('user', [{type: 'text', text: prompt}]);
    const event = {session_id: id, tool_use_id: toolUseId, cwd: folder, tool_name: 'Write',
                   tool_input: {file_path: path, content}};
    runHook(server, {...event, hook_event_name: 'PreToolUse'});
    writeFileSync(path, content);
    runHook(server, {...event, hook_event_name: 'PostToolUse', tool_response: {filePath: path}});
    await say('assistant', [{type: 'tool_call', tool_call_id: toolUseId, tool_name: 'Write',
                             arguments: {file_path: path, content}}]);
  };
  await write('toolu_1', kFirst, 'Write a greeting');
  await write('toolu_2', kSecond, kSecondPrompt);
  return {id, path};
}

async function openSession(page, server, id) {
  await openPage(page, server, `#/s/${id}`);
  await page.waitForSelector('#seq-4');
  await page.waitForFunction(() => document.body.classList.contains('live'));
}

const dialogText = (page) => page.locator('#changes-dialog').textContent();

test('messages link the files they wrote; "Rewind here" shows the diff first, then restores the bytes',
     async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const {id, path} = await agentWroteTwice(server, t);

  // The route the page reads: each version the hook kept, placed at the seq
  // of the message holding its tool call (the second call's "before" is the
  // first call's "after", not kept again); 404 for a missing session.
  const {versions} = await server.api('GET', `/v1/sessions/${id}/file-versions`);
  assert.deepEqual(versions.map((v) => [v.phase, v.seq, v.tool_use_id, v.exists, v.path, v.tool]), [
    ['before', 2, 'toolu_1', false, path, 'Write'], ['after', 2, 'toolu_1', true, path, 'Write'],
    ['after', 4, 'toolu_2', true, path, 'Write']]);
  assert.equal(versions[2].size, Buffer.byteLength(kSecond));
  await server.api('GET', '/v1/sessions/no-such-session/file-versions', undefined, {expect: 404});

  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openSession(page, server, id);

  // The written paths, under the messages whose calls wrote them.
  const written = page.locator('#seq-2 .written-files a.written-file');
  await written.waitFor();
  assert.equal(await written.textContent(), path);
  assert.equal(await written.getAttribute('href'), `#/file?${new URLSearchParams({path})}`);
  assert.equal(await page.locator('#seq-4 .written-files a.written-file').textContent(), path);
  assert.equal(await page.locator('#seq-1 .written-files').count(), 0);

  // The dry run: the dialog shows the file and its diff; nothing changes.
  await page.click('#seq-2 .rewind-button');
  const dialog = page.locator('#changes-dialog');
  await dialog.locator('.change-file').waitFor();
  assert.match(await dialogText(page), /Rewind to #2/);
  assert.equal(await dialog.locator('.change-file .change-path').textContent(), path);
  assert.match(await dialog.locator('.change-action').textContent(), /^restore/);
  const added = await dialog.locator('.diff-add').allTextContents();
  const removed = await dialog.locator('.diff-del').allTextContents();
  assert.ok(added.includes('+    return "hello"'), added.join('|'));
  assert.ok(removed.includes('-    return "hello, world"'), removed.join('|'));
  assert.equal(await page.locator('#changes-dialog-force-row').isHidden(), true);
  assert.equal(readFileSync(path, 'utf8'), kSecond, 'the dry run changed the file');

  // Cancelled: still nothing changed, no rewind in the log.
  await dialog.locator('button[value="cancel"]').click();
  await dialog.waitFor({state: 'hidden'});
  assert.equal(readFileSync(path, 'utf8'), kSecond);
  assert.equal((await server.api('GET', `/v1/sessions/${id}`)).last_seq, 4);

  // Confirmed: the bytes of #2 are back, and the conversation is rewound.
  await page.click('#seq-2 .rewind-button');
  await dialog.locator('.change-file').waitFor();
  await page.click('#changes-dialog-ok');
  await page.waitForSelector('#seq-5.rewind');
  assert.equal(readFileSync(path, 'utf8'), kFirst);
  assert.deepEqual(await page.locator('.log .event.rewound').evaluateAll((n) => n.map((e) => e.id)),
                   ['seq-3', 'seq-4']);
  // The notice follows the POST's answer, which may arrive after the live
  // stream has drawn #5: wait for it rather than read it once.
  await page.locator('#notice-text', {hasText: /Rewound to #2: 1 file restored/}).waitFor();
  assert.deepEqual(problems, []);
});

test('a file changed since the agent wrote it is a conflict: shown in red, written only with force',
     async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const {id, path} = await agentWroteTwice(server, t);
  const byHand = kSecond + '# mine\n';
  writeFileSync(path, byHand);
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openSession(page, server, id);

  await page.click('#seq-2 .rewind-button');
  const dialog = page.locator('#changes-dialog');
  await dialog.locator('.change-file').waitFor();
  assert.equal(await dialog.locator('.change-file.is-conflict').count(), 1);
  assert.match(await dialog.locator('.change-problem').textContent(), /^Conflict .*changed since/);
  const red = await dialog.locator('.change-problem').evaluate((n) => getComputedStyle(n).color);
  assert.equal(red, 'rgb(224, 49, 49)');
  // The diff is from what is on disk now (the hand-made line goes too).
  assert.ok((await dialog.locator('.diff-del').allTextContents()).includes('-# mine'));
  const ok = page.locator('#changes-dialog-ok');
  assert.equal(await ok.isDisabled(), true, 'confirmable without force');
  await page.check('#changes-dialog-force');
  assert.equal(await ok.isDisabled(), false);
  assert.equal(readFileSync(path, 'utf8'), byHand, 'the dry run changed the file');
  await ok.click();
  await page.waitForSelector('#seq-5.rewind');
  assert.equal(readFileSync(path, 'utf8'), kFirst);
  assert.deepEqual(problems, []);
});

test('a file\'s history lists its versions with diffs, blame links lines to turns, a version is restored',
     async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const {id, path} = await agentWroteTwice(server, t);
  writeFileSync(path, kSecond + '# by hand\n');  // a line no agent wrote
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openSession(page, server, id);

  // From the session, the file's link opens its history.
  await page.click('#seq-4 .written-files a.written-file');
  await page.waitForSelector('.file-version');
  const versions = page.locator('.file-versions > .file-version');
  assert.deepEqual(await versions.evaluateAll((n) => n.map((e) => e.dataset.number)), ['2', '1']);
  const newest = versions.nth(0);
  assert.equal(await newest.locator('a.version-session').getAttribute('href'), `#/s/${id}/4`);
  assert.equal(await newest.locator('.version-prompt').textContent(), `Prompt: ${kSecondPrompt}`);
  assert.equal(await newest.locator('.version-prompt img').count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.ok((await newest.locator('.diff-add').allTextContents()).includes('+    return "hello, world"'));
  assert.ok((await newest.locator('.diff-del').allTextContents()).includes('-    return "hello"'));
  const oldest = versions.nth(1);
  assert.equal(await oldest.locator('a.version-session').getAttribute('href'), `#/s/${id}/2`);
  assert.ok((await oldest.locator('.diff-add').allTextContents()).includes('+def greet():'));

  // Blame: each line linked to the turn that wrote it, or "not an agent".
  await page.click('.blame-button');
  await page.waitForSelector('table.blame');
  const rows = await page.locator('table.blame tr').evaluateAll((trs) => trs.map((tr) => ({
    text: tr.querySelector('.blame-text').textContent,
    href: tr.querySelector('.blame-who a')?.getAttribute('href') ?? null,
    who: tr.querySelector('.blame-who').textContent,
  })));
  assert.equal(rows.length, 7);
  assert.equal(rows[0].text, 'def greet():');
  assert.equal(rows[0].href, `#/s/${id}/2`);
  assert.equal(rows[1].text, '    return "hello, world"');
  assert.equal(rows[1].href, `#/s/${id}/4`);
  assert.equal(rows[6].text, '# by hand');
  assert.equal(rows[6].who, 'not an agent');

  // Restore version 1: the dialog first, then the bytes of version 1.
  await oldest.locator('.restore-button').click();
  const dialog = page.locator('#changes-dialog');
  await dialog.locator('.change-file').waitFor();
  assert.match(await dialogText(page), /Restore version 1/);
  assert.equal(readFileSync(path, 'utf8'), kSecond + '# by hand\n', 'the dry run changed the file');
  await page.check('#changes-dialog-force');  // the hand-made line is a conflict
  await page.click('#changes-dialog-ok');
  await page.locator('#notice-text', {hasText: 'Restored version 1'}).waitFor();
  assert.equal(readFileSync(path, 'utf8'), kFirst);
  assert.deepEqual(problems, []);
});

test('the file view and the dialog fit a 390 px screen', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const {path} = await agentWroteTwice(server, t);
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await page.setViewportSize({width: 390, height: 844});
  // The list is a closed drawer there: wait for the view itself.
  await page.goto(`${server.url}#/file?${new URLSearchParams({path})}`);
  await page.waitForSelector('.file-version');
  await page.click('.blame-button');
  await page.waitForSelector('table.blame');
  const width = () => page.evaluate(() => document.scrollingElement.scrollWidth);
  assert.ok(await width() <= 390, `the page is ${await width()} px wide`);
  await page.locator('.file-version .restore-button').first().click();
  const dialog = page.locator('#changes-dialog');
  await dialog.locator('.change-file').waitFor();
  const box = await dialog.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, `the dialog spans ${box.x}..${box.x + box.width}`);
  assert.ok(await page.locator('#changes-dialog-ok').isVisible());
  assert.deepEqual(problems, []);
});
