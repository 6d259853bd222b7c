// A session's timeline above its log: one mark per event, of the kind the
// event is (turns, answers, tool calls and results, compactions, rewinds,
// resources shown again), the counts beside, the point a fork left its
// parent; a mark leads to its event, and a rewind dims, live, the marks it
// took out of the view.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, seededServerAndPage} from './support.mjs';

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const marks = (page) => page.$$eval('.timeline .tl-mark', (nodes) =>
  nodes.map((n) => ({seq: Number(n.dataset.seq), kind: [...n.classList].find((c) => c.startsWith('tl-') && c !== 'tl-mark' && c !== 'tl-rewound'),
                     rewound: n.classList.contains('tl-rewound')})));

test('the timeline has a mark of its kind for each event, and counts them', async (t) => {
  const {server, ids, page, problems} = await seededServerAndPage(browser, t);
  await page.goto(`${server.url}#/s/${ids.main}`);
  await page.locator('.session-head .timeline .tl-mark').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.timeline .tl-mark').length ===
                                   document.querySelectorAll('#log .event[data-seq]').length);
  const {at, compactionSeq, viewSeq} = ids;
  const bySeq = Object.fromEntries((await marks(page)).map((m) => [m.seq, m.kind]));
  assert.deepEqual(bySeq, {
    [at.question]: 'tl-user', [at.answer]: 'tl-assistant', [at.toolCall]: 'tl-tool',
    [at.toolResult]: 'tl-result', [at.image]: 'tl-user', [at.hostile]: 'tl-user',
    [compactionSeq]: 'tl-compaction', [viewSeq]: 'tl-view',
  });
  assert.equal(await page.textContent('.timeline-counts'),
               '3 turns · 1 answer · 1 tool call · 1 compaction · 1 resource view');
  assert.equal(await page.locator('.timeline .tl-fork').count(), 0, 'not a fork');

  // A mark leads to its event.
  await page.click(`.timeline .tl-mark[data-seq="${compactionSeq}"]`);
  await page.waitForFunction((seq) => location.hash.endsWith(`/${seq}`), compactionSeq);
  await page.waitForSelector(`#seq-${compactionSeq}.focused`);
  assert.deepEqual(problems, []);
});

test('a fork shows where it left its parent; a rewind dims its marks live', async (t) => {
  const {server, ids, page, problems} = await seededServerAndPage(browser, t);
  await page.goto(`${server.url}#/s/${ids.fork}`);
  await page.locator('.timeline .tl-fork').waitFor();
  // The fork point sits right after the mark of the event it was forked at.
  const before = await page.$eval('.timeline .tl-fork', (n) => Number(n.previousElementSibling.dataset.seq));
  assert.equal(before, ids.at.toolCall);
  await page.waitForFunction(() => /forked at #\d+/.test(document.querySelector('.timeline-counts').textContent));
  assert.match(await page.textContent('.timeline-counts'), new RegExp(`forked at #${ids.at.toolCall}$`));

  await page.goto(`${server.url}#/s/${ids.main}`);
  await page.locator(`.timeline .tl-mark[data-seq="${ids.viewSeq}"]`).waitFor();
  await server.api('POST', `/v1/sessions/${ids.main}/rewind`, {to_seq: ids.at.toolResult});
  await page.locator('.timeline .tl-rewind').waitFor();
  const after = await marks(page);
  for (const m of after) {
    const out = m.seq > ids.at.toolResult && m.kind !== 'tl-rewind';
    assert.equal(m.rewound, out, `#${m.seq} ${m.kind}`);
  }
  assert.match(await page.textContent('.timeline-counts'), /1 rewind/);
  assert.deepEqual(problems, []);
});
