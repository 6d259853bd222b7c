// The page's line diff (src/server/web/line_diff.js), run in Node: no
// browser, no server. The module is pure and imports nothing, so it is loaded
// from its source as it is served.
import assert from 'node:assert/strict';
import {readFileSync} from 'node:fs';
import {test} from 'node:test';

const source = readFileSync(new URL('../../src/server/web/line_diff.js', import.meta.url), 'utf8');
const {diffCounts, lineDiff, splitLines} =
    await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);

const text = (lines) => lines.map((l) => l.op + l.text).join('\n');

test('a changed line is removed and added, the lines around it kept', () => {
  const diff = lineDiff('a = 1\nb = 2\n', 'a = 1\nb = 3\nc = 4\n');
  assert.equal(text(diff), ' a = 1\n-b = 2\n+b = 3\n+c = 4');
  assert.deepEqual(diffCounts(diff), {added: 2, removed: 1});
});

test('the longest common subsequence is kept in the middle', () => {
  assert.equal(text(lineDiff('h\n1\n2\n3\nt', 'h\n2\nx\n3\nt')), ' h\n-1\n 2\n+x\n 3\n t');
});

test('empty texts and final newlines', () => {
  assert.deepEqual(splitLines(''), []);
  assert.deepEqual(splitLines('x\n'), ['x']);
  assert.deepEqual(splitLines('x\n\n'), ['x', '']);
  assert.equal(text(lineDiff('', 'x\ny\n')), '+x\n+y');
  assert.equal(text(lineDiff('x\ny', '')), '-x\n-y');
  assert.deepEqual(lineDiff('same\n', 'same\n'), [{op: ' ', text: 'same'}]);
  assert.deepEqual(lineDiff(undefined, null), []);
});

test('past the cell cap the answer is null, but a common head and tail cost nothing', () => {
  const many = (prefix) => Array.from({length: 3000}, (_, i) => `${prefix} ${i}`).join('\n');
  assert.equal(lineDiff(many('old'), many('new')), null);
  assert.equal(lineDiff('a\nb\nc', 'x\ny\nz', 8), null);
  assert.notEqual(lineDiff('a\nb\nc', 'x\ny\nz', 9), null);
  const changed = many('old').replace('old 1500', 'NEW 1500');
  const diff = lineDiff(many('old'), changed);
  assert.equal(diff.length, 3001);
  assert.deepEqual(diffCounts(diff), {added: 1, removed: 1});
});
