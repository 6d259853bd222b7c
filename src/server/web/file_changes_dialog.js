// "Show me first": a rewind of code (checkpoints.js) or a restore of one
// file version (file_history_view.js) asks the server for a dry run, shows
// in the <dialog id="changes-dialog"> what each file would become (its
// action and diff), and changes nothing until the user confirms; only then
// is the real request sent. A file someone changed since the agent's last
// write is a conflict: shown in red, written only when "force" is ticked.
// A refused file (a symbolic link on its path...) blocks the whole change.
//
// The dry run and the real answer list files as the server plans them:
// {path, action: "restore"|"remove"|"unchanged"|"unknown", version_id,
// conflict, refused, diff} (docs/http-api.md, "Code checkpoints").
//
// Example:
//   const done = await confirmFileChanges({
//     title: 'Rewind to #12', intro: '...', confirmLabel: 'Rewind',
//     dryRun: () => api('POST', url, {...body, dry_run: true}),
//     apply: (force) => api('POST', url, {...body, force})});
//   if (done) showNotice(...);

import {fileHistoryHref} from './file_links.js';
import {unifiedDiffBlock} from './unified_diff_view.js';
import {$, ask, el, showError} from './ui.js';

const kActionWords = {
  restore: 'restore',
  remove: 'remove (the agent created it)',
  unchanged: 'unchanged',
  unknown: 'unknown: no recorded version says what it was; left as it is',
};

const writes = (f) => f.action === 'restore' || f.action === 'remove';

// The files of an answer: a rewind's "files", or a restore's one "file".
export function filesOf(answer) {
  if (!answer || typeof answer !== 'object') return [];
  if (Array.isArray(answer.files)) return answer.files;
  return answer.file && typeof answer.file === 'object' ? [answer.file] : [];
}

function fileItem(file) {
  const li = el('li', `change-file action-${String(file.action || 'unknown')}`);
  const head = el('div', 'change-head');
  const link = el('a', 'change-path', file.path || '?');
  link.href = fileHistoryHref(file.path || '');
  head.append(el('span', 'change-action', kActionWords[file.action] || String(file.action || '?')),
              ' ', link);
  li.append(head);
  if (file.refused) {
    li.classList.add('is-refused');
    li.append(el('p', 'change-problem', `Refused: ${file.refused}`));
  }
  if (file.conflict) {
    li.classList.add('is-conflict');
    li.append(el('p', 'change-problem', `Conflict (someone else changed it): ${file.conflict}`));
  }
  const diff = unifiedDiffBlock(file.diff);
  if (diff) li.append(diff);
  else if (writes(file)) li.append(el('p', 'muted', '(no diff)'));
  return li;
}

// Fills the dialog from a dry run's files; returns whether it can be
// confirmed at all (no refused file would be written).
function fill({title, intro, confirmLabel}, files) {
  $('changes-dialog-title').textContent = title;
  $('changes-dialog-text').textContent = intro;
  const list = $('changes-dialog-files');
  list.replaceChildren(...files.map(fileItem));
  $('changes-dialog-none').hidden = files.length > 0;
  const conflicts = files.filter((f) => writes(f) && f.conflict);
  const refused = files.filter((f) => writes(f) && f.refused);
  const force = $('changes-dialog-force');
  force.checked = false;
  $('changes-dialog-force-row').hidden = conflicts.length === 0;
  const ok = $('changes-dialog-ok');
  ok.textContent = confirmLabel;
  const update = () => { ok.disabled = refused.length > 0 || (conflicts.length > 0 && !force.checked); };
  force.onchange = update;
  update();
  $('changes-dialog-blocked').hidden = refused.length === 0;
  return refused.length === 0;
}

// Runs the dry run, shows it, and on confirmation runs `apply(force)`.
// Resolves to apply's answer, or null when cancelled or failed (the error
// is in the banner).
export async function confirmFileChanges({title, intro, confirmLabel = 'Confirm', dryRun, apply}) {
  let planned;
  try {
    planned = await dryRun();
  } catch (e) {
    showError(e);
    return null;
  }
  fill({title, intro, confirmLabel}, filesOf(planned));
  if (!await ask('changes-dialog')) return null;
  try {
    return await apply($('changes-dialog-force').checked);
  } catch (e) {
    showError(e);
    return null;
  }
}
