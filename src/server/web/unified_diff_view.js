// A unified diff the server wrote (`diff -u`'s form: src/core/unified_diff.h,
// as the rewind and restore dry runs and a file's history give it) shown as
// the page shows an Edit's diff (tool_calls.js): one span per line, of class
// diff-file, diff-hunk, diff-add, diff-del or diff-same, as text nodes only.
//
// Example:
//   node.append(unifiedDiffBlock('--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-b\n+c\n'));

import {el} from './ui.js';

// The class of one line: the two labels first, then hunks, changes and
// context; anything else ("\ only the final newline differs", "... 12 more
// lines") is a note, shown as a hunk line is.
function lineClass(text, index) {
  if (index < 2 && (text.startsWith('--- ') || text.startsWith('+++ '))) return 'diff-file';
  if (text.startsWith('@@')) return 'diff-hunk';
  if (text.startsWith('+')) return 'diff-add';
  if (text.startsWith('-')) return 'diff-del';
  if (text.startsWith(' ') || text === '') return 'diff-same';
  return 'diff-hunk';
}

// `text` as <pre class="diff">; null when it is empty (nothing changes).
export function unifiedDiffBlock(text) {
  const whole = String(text ?? '');
  if (!whole) return null;
  const lines = whole.split('\n');
  if (whole.endsWith('\n')) lines.pop();
  const code = el('code', 'language-diff');
  lines.forEach((line, index) => {
    if (index) code.append('\n');
    code.append(el('span', `diff-line ${lineClass(line, index)}`, line));
  });
  const pre = el('pre', 'diff');
  pre.append(code);
  return pre;
}
