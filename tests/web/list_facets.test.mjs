// The list names each session's source and project, and narrows to one of
// them: GET /v1/facets counts them (archived sessions too), the choice asks
// /v1/sessions with meta_key and meta_value, and a live session of another
// source does not enter the narrowed list.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, startServer} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const titles = (page) => page.$$eval('#session-list .item-title', (nodes) => nodes.map((n) => n.textContent).sort());

test('sessions show their source and project, and the list narrows to one', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const make = (title, metadata) => server.api('POST', '/v1/sessions', {title, metadata});
  await make('Parser fix', {source: 'claude-code', cwd: '/home/dev/parser'});
  await make('Parser tests', {source: 'claude-code', cwd: '/home/dev/parser'});
  await make('Deploy script', {source: 'codex', cwd: '/srv/deploy'});
  await make('Odd metadata', {source: 42, cwd: ['not', 'a', 'path']});
  await make('Plain chat');

  const facets = await server.api('GET', '/v1/facets');
  assert.deepEqual(facets.sources, [{key: 'source', value: 'claude-code', sessions: 2},
                                    {key: 'source', value: 'codex', sessions: 1}]);
  assert.deepEqual(facets.projects, [{key: 'project', value: '/home/dev/parser', sessions: 2},
                                     {key: 'project', value: '/srv/deploy', sessions: 1}]);
  assert.equal(facets.sessions_read, 5);
  assert.equal(facets.partial, false);

  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await page.goto(server.url);
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 5);
  const deploy = page.locator('#session-list .session-item', {hasText: 'Deploy script'});
  assert.deepEqual(await deploy.locator('.chip').allTextContents(), ['Codex', 'deploy']);
  assert.equal(await deploy.locator('.chip-project').getAttribute('title'), '/srv/deploy');
  assert.equal(await page.locator('#session-list .session-item', {hasText: 'Odd metadata'}).locator('.chip').count(), 0);

  await page.locator('#list-facet-row').waitFor();
  await page.selectOption('#list-facet', {label: 'Claude Code (2)'});
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 2);
  assert.deepEqual(await titles(page), ['Parser fix', 'Parser tests']);

  // A new Codex session does not enter the Claude Code list; a Claude Code one does.
  await make('Another deploy', {source: 'codex'});
  await make('Parser docs', {source: 'claude-code'});
  await page.locator('#session-list .item-title', {hasText: 'Parser docs'}).waitFor();
  assert.deepEqual(await titles(page), ['Parser docs', 'Parser fix', 'Parser tests']);

  await page.selectOption('#list-facet', {label: 'deploy (1)'});
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 1);
  assert.deepEqual(await titles(page), ['Deploy script']);
  await page.selectOption('#list-facet', {value: ''});
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 7);
  assert.deepEqual(problems, []);
});

test('a store with no sources or projects offers no choice', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  await server.api('POST', '/v1/sessions', {title: 'Plain chat'});
  const {page, context} = await newPage(browser);
  t.after(() => context.close());
  const facetsAnswered = page.waitForResponse((r) => r.url().endsWith('/v1/facets'));
  await page.goto(server.url);
  await page.locator('#session-list .session-item').waitFor();
  await facetsAnswered;
  assert.deepEqual(await server.api('GET', '/v1/facets'), {sources: [], projects: [], sessions_read: 1, partial: false});
  assert.equal(await page.locator('#list-facet-row').isHidden(), true);
});

test('the projects view groups the history, and a group narrows the list', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const make = (title, metadata) => server.api('POST', '/v1/sessions', {title, metadata});
  await make('Parser fix', {source: 'claude-code', cwd: '/home/dev/parser', git_branch: 'fix/lexer'});
  await make('Parser tests', {source: 'claude-code', cwd: '/home/dev/parser', git_branch: 42});
  await make('Deploy script', {source: 'codex', cwd: '/srv/deploy'});
  await make('Plain chat');

  const {page, context, problems} = await newPage(browser);
  t.after(() => context.close());
  await page.goto(`${server.url}#/projects`);
  const parser = page.locator('.facet-group[data-key="project"]', {hasText: 'parser'});
  await parser.locator('.group-sessions li').first().waitFor();
  assert.match(await page.textContent('.projects-page > p.muted'), /^2 projects and 2 sources$/);
  assert.equal(await parser.locator('summary').textContent(), 'parser 2 sessions');
  assert.equal(await parser.locator('.group-path').textContent(), '/home/dev/parser');
  // Opened at first: its sessions, newest first, with the branch a session names as a string.
  assert.deepEqual(await parser.locator('.group-sessions a').allTextContents(), ['Parser tests', 'Parser fix']);
  assert.deepEqual(await parser.locator('.chip-branch').allTextContents(), ['fix/lexer']);
  // A source's group is read only when opened.
  const codex = page.locator('.facet-group[data-key="source"]', {hasText: 'Codex'});
  assert.equal(await codex.locator('.group-sessions').count(), 0);
  await codex.locator('summary').click();
  await codex.locator('.group-sessions a', {hasText: 'Deploy script'}).waitFor();

  // The list shows the branch too, and "Show in the list" narrows it to the group.
  const fix = page.locator('#session-list .session-item', {hasText: 'Parser fix'});
  assert.deepEqual(await fix.locator('.chip').allTextContents(), ['Claude Code', 'parser', 'fix/lexer']);
  await parser.locator('.show-in-list').click();
  await page.waitForFunction(() => document.querySelectorAll('#session-list .session-item').length === 2);
  assert.deepEqual(await titles(page), ['Parser fix', 'Parser tests']);
  assert.equal(await page.inputValue('#list-facet'), 'project\u0000/home/dev/parser');
  assert.deepEqual(problems, []);
});
