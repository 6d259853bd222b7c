// A coding agent's tool calls as the page shows them (tool_calls.js): each
// folded to a line that says what happened, opened as a diff, a highlighted
// file, `$ command` and its output, the file and its lines, an MCP server and
// tool; each result shown beside its call though it came in a later message;
// a long output folded with its size; hostile arguments shown as text.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, openPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const kHostile = '<img src=x onerror="window.__xss = 1">';
const kLongOutput = Array.from({length: 312}, (_, i) => `test ${i} passed`).join('\n') + '\n';
const call = (id, name, args) => ({type: 'tool_call', tool_call_id: id, tool_name: name, arguments: args});
const result = (id, text, isError = false) => ({type: 'tool_result', tool_call_id: id, text, is_error: isError});

// The page's own way of writing a size (ui.js formatBytes).
function kib(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

async function seed(server) {
  const {api} = server;
  const s = await api('POST', '/v1/sessions', {title: 'An agent at work'});
  const add = (message) => api('POST', `/v1/sessions/${s.id}/messages`, message);
  await add({role: 'user', parts: [{type: 'text', text: 'Fix the app.'}]});
  const calls = await add({role: 'assistant', parts: [
    call('t_edit', 'Edit', {file_path: 'src/app.py', old_string: `a = 1\nb = 2  # ${kHostile}\n`,
                            new_string: 'a = 1\nb = 3\nc = 4\n'}),
    call('t_write', 'Write', {file_path: 'src/util.py', content: 'def twice(x):\n    return 2 * x  # doubled\n'}),
    call('t_bash', 'Bash', {command: 'make test', description: 'Run the tests'}),
    call('t_long', 'Bash', {command: 'make check'}),
    call('t_read', 'Read', {file_path: 'src/app.py', offset: 10, limit: 20}),
    call('t_mcp', 'mcp__github__create_issue', {title: 'Flaky test'}),
    call('t_bad', 'Edit', {file_path: 42, old_string: ['not', 'a', 'string']}),
  ]});
  const results = await add({role: 'tool', parts: [
    result('t_edit', 'The file src/app.py has been updated.'),
    result('t_write', 'File created successfully at: src/util.py'),
    result('t_bash', 'ok\n2 passed\n'),
    result('t_long', kLongOutput),
    result('t_read', '    10\tdef main():'),
    result('t_mcp', 'Created issue #7', true),
    result('t_bad', 'String to replace not found', true),
  ]});
  return {id: s.id, callSeq: calls.seq, resultSeq: results.seq};
}

test('tool calls read as what they did, each with its result', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const ids = await seed(server);
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openPage(page, server, `#/s/${ids.id}`);
  await page.waitForSelector(`#seq-${ids.resultSeq}`);

  const calls = page.locator(`#seq-${ids.callSeq} details.tool-call`);
  assert.equal(await calls.count(), 7);
  // Folded, each saying what happened.
  assert.deepEqual(await calls.evaluateAll((nodes) => nodes.map((d) => d.open)), Array(7).fill(false));
  assert.deepEqual(await calls.locator('summary .tool-summary').allTextContents(), [
    'Edited src/app.py: +2 −1',
    'Wrote src/util.py (2 lines)',
    '$ make test',
    '$ make check',
    'Read src/app.py (lines 10–29)',
    'github › create_issue',
  ]);

  // The Edit: a unified diff under its path, lines marked added and removed.
  const edit = page.locator(`#seq-${ids.callSeq} details.tool-edit`);
  await edit.locator('summary').click();
  assert.equal(await edit.locator('.tool-path').textContent(), 'src/app.py');
  assert.deepEqual(await edit.locator('pre.diff .diff-line').allTextContents(), [
    '--- src/app.py', '+++ src/app.py', ' a = 1', `-b = 2  # ${kHostile}`, '+b = 3', '+c = 4']);
  assert.deepEqual(await edit.locator('.diff-del').allTextContents(), [`-b = 2  # ${kHostile}`]);
  assert.deepEqual(await edit.locator('.diff-add').allTextContents(), ['+b = 3', '+c = 4']);
  assert.equal(await edit.locator('.diff-same').count(), 1);
  // Its result beside it.
  assert.equal(await edit.locator('.tool-result-slot pre.tool-output').textContent(),
               'The file src/app.py has been updated.');

  // The hostile old_string is text: no element was made of it, nothing ran.
  assert.equal(await page.locator('#log img').count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);

  // The Write: the file highlighted under its path.
  const write = page.locator(`#seq-${ids.callSeq} details.tool-write`);
  await write.locator('summary').click();
  assert.equal(await write.locator('.tool-path').textContent(), 'src/util.py');
  const code = write.locator('pre.code code.language-python');
  assert.equal(await code.textContent(), 'def twice(x):\n    return 2 * x  # doubled\n');
  assert.deepEqual(await code.locator('.tok-kw').allTextContents(), ['def', 'return']);
  assert.deepEqual(await code.locator('.tok-com').allTextContents(), ['# doubled']);

  // The Bash call: `$ command` and its output in one console block.
  const bash = calls.nth(2);
  await bash.locator(":scope > summary").click();
  assert.equal(await bash.locator('pre.console .console-command').textContent(), '$ make test');
  assert.equal(await bash.locator('pre.console .console-output').textContent(), 'ok\n2 passed');
  assert.equal(await bash.locator('pre.console').textContent(), '$ make test\nok\n2 passed');

  // A long output is folded again, with its size.
  const long = calls.nth(3);
  await long.locator(":scope > summary").click();
  const fold = long.locator('details.tool-output-fold');
  const trimmed = kLongOutput.replace(/\n+$/, '');
  assert.equal(await fold.locator('summary').textContent(),
               `Output, 312 lines, ${kib(Buffer.byteLength(kLongOutput))}`);
  assert.equal(await fold.evaluate((d) => d.open), false);
  assert.equal(await fold.locator('pre.tool-output').textContent(), trimmed);
  assert.equal(await long.locator('.console-output').count(), 0);

  // The MCP call: its error is marked on the folded line.
  const mcp = page.locator(`#seq-${ids.callSeq} details.tool-mcp`);
  assert.equal(await mcp.locator('summary .badge.error').textContent(), 'error');
  assert.match(await mcp.getAttribute('class'), /is-error/);

  // Arguments no rule can read: today's raw JSON, named by the tool.
  const bad = calls.nth(6);
  assert.equal(await bad.locator('summary .tool-summary').count(), 0);
  assert.match(await bad.locator('summary').textContent(), /^Tool call Edit/);
  assert.deepEqual(JSON.parse(await bad.locator('code.language-json').textContent()),
                   {file_path: 42, old_string: ['not', 'a', 'string']});

  // The results' own message repeats no output: it points back to the calls.
  const resultMessage = page.locator(`#seq-${ids.resultSeq}`);
  assert.equal(await resultMessage.locator('pre').count(), 0);
  assert.equal(await resultMessage.locator('.tool-result-marker').count(), 7);
  assert.equal(await resultMessage.locator('.tool-result-marker').first().textContent(),
               `Result of Edit shown with its call at #${ids.callSeq}`);
  assert.equal(await resultMessage.locator('.tool-result-marker a').first().getAttribute('href'),
               `#/s/${ids.id}/${ids.callSeq}`);

  await page.screenshot({path: '/tmp/sessiondb-web-tool-calls.png', fullPage: true});
  assert.deepEqual(problems, []);
});

test('a result that comes live joins its call', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const s = await server.api('POST', '/v1/sessions', {title: 'Live'});
  const first = await server.api('POST', `/v1/sessions/${s.id}/messages`, {role: 'assistant', parts: [
    call('live_1', 'Bash', {command: ['bash', '-lc', 'echo hi']})]});
  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await openPage(page, server, `#/s/${s.id}`);
  await page.waitForSelector(`#seq-${first.seq} details.tool-call`);
  await page.waitForFunction(() => document.body.classList.contains('live'));
  const second = await server.api('POST', `/v1/sessions/${s.id}/messages`, {role: 'tool', parts: [
    result('live_1', 'hi\n')]});
  await page.waitForSelector(`#seq-${second.seq} .tool-result-marker`);
  const bash = page.locator(`#seq-${first.seq} details.tool-call`);
  assert.equal(await bash.locator('.tool-summary').textContent(), '$ echo hi');
  assert.equal(await bash.locator('pre.console').textContent(), '$ echo hi\nhi');
  assert.deepEqual(problems, []);
});
