// A line diff of two texts, for an Edit shown as a unified diff
// (tool_calls.js). Pure: no DOM, no imports, so Node tests it directly
// (tests/web/line_diff.test.mjs). The same rules as the C++ DiffLines
// (src/core/tool_call_text.h): the common head and tail are taken first, the
// lines between are compared by a longest common subsequence, and past
// kMaxDiffCells (old lines × new lines between) the answer is null: the
// caller shows the old and the new text whole.
//
// Example:
//   lineDiff('a\nb\n', 'a\nc\n')
//   // [{op: ' ', text: 'a'}, {op: '-', text: 'b'}, {op: '+', text: 'c'}]

export const kMaxDiffCells = 4_000_000;

// The lines of `text`; a final newline ends the last line and makes none.
export function splitLines(text) {
  const s = String(text ?? '');
  if (!s) return [];
  const lines = s.split('\n');
  if (s.endsWith('\n')) lines.pop();
  return lines;
}

// The lines of `oldText` turned into those of `newText`: {op, text} with op
// ' ' (kept), '-' (removed) or '+' (added), in order; null past `maxCells`.
export function lineDiff(oldText, newText, maxCells = kMaxDiffCells) {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head &&
         a[a.length - 1 - tail] === b[b.length - 1 - tail]) {
    tail++;
  }
  const n = a.length - head - tail;
  const m = b.length - head - tail;
  if (n > 0 && m > 0 && n * m > maxCells) return null;
  // lcs[i * (m + 1) + j]: the longest common subsequence of a[head+i..] and b[head+j..].
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] = a[head + i] === b[head + j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  const out = [];
  for (let k = 0; k < head; k++) out.push({op: ' ', text: a[k]});
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[head + i] === b[head + j]) {
      out.push({op: ' ', text: a[head + i]});
      i++;
      j++;
    } else if (i < n && (j === m || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])) {
      out.push({op: '-', text: a[head + i]});
      i++;
    } else {
      out.push({op: '+', text: b[head + j]});
      j++;
    }
  }
  for (let k = a.length - tail; k < a.length; k++) out.push({op: ' ', text: a[k]});
  return out;
}

// How many lines a diff adds and removes.
export function diffCounts(lines) {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.op === '+') added++;
    else if (line.op === '-') removed++;
  }
  return {added, removed};
}
