// Code checkpoints in an open session (issue 39): under each message whose
// tool calls wrote files, the paths they wrote, each a link to the file's
// history; and on each message a "Rewind here" that rewinds the code and
// the conversation together to it, after showing what each file would
// become (file_changes_dialog.js). The rewind marker and the dimming come
// by the live stream, as for any rewind (app.js).
//
// Where a version sits comes from GET /v1/sessions/{id}/file-versions (its
// seq in this session); the list is read again a little after new messages
// arrive, since the hook records versions as the agent writes.
//
// Example (app.js):
//   view.checkpoints = trackWrittenFiles(session.id, () => view.session === session);
//   head.append(rewindButton(session.id, event.seq));
//   ...after the log is read, and on each new message: view.checkpoints.refresh();

import {api, enc} from './api.js';
import {confirmFileChanges, filesOf} from './file_changes_dialog.js';
import {fileHistoryHref} from './file_links.js';
import {$, el, plural, showError, showNotice} from './ui.js';

const kRefreshDelayMs = 1500;

// The paths each seq's versions wrote, in the order first written:
// Map seq -> Map path -> {removed} (removed: its last "after" version is "no file").
export function writtenBySeq(versions) {
  const bySeq = new Map();
  for (const v of versions || []) {
    if (!v || v.phase !== 'after' || typeof v.path !== 'string' || !Number.isInteger(v.seq)) continue;
    if (!bySeq.has(v.seq)) bySeq.set(v.seq, new Map());
    bySeq.get(v.seq).set(v.path, {removed: v.exists === false});
  }
  return bySeq;
}

function writtenLine(paths) {
  const p = el('p', 'written-files');
  p.append(el('span', 'muted', 'Wrote '));
  let first = true;
  for (const [path, {removed}] of paths) {
    if (!first) p.append(', ');
    first = false;
    const a = el('a', 'written-file', path);
    a.href = fileHistoryHref(path);
    a.title = 'Every version of this file, and who wrote each line';
    p.append(a);
    if (removed) p.append(el('span', 'muted', ' (removed)'));
  }
  return p;
}

// Puts the written paths under each shown message of the log.
function showWritten(bySeq) {
  const log = $('log');
  if (!log) return;
  for (const old of log.querySelectorAll('.written-files')) old.remove();
  for (const [seq, paths] of bySeq) {
    const node = document.getElementById(`seq-${seq}`);
    if (node) node.append(writtenLine(paths));
  }
}

// Follows the file versions of `sessionId` while `isShown()`: refresh()
// reads them again soon (once for a burst of calls).
export function trackWrittenFiles(sessionId, isShown) {
  let timer = 0;
  let generation = 0;
  const read = async () => {
    const mine = ++generation;
    try {
      const answer = await api('GET', `/v1/sessions/${enc(sessionId)}/file-versions`);
      if (mine === generation && isShown()) showWritten(writtenBySeq(answer && answer.versions));
    } catch (e) {
      if (isShown()) showError(e);
    }
  };
  return {
    now: read,
    refresh() {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (isShown()) read();
      }, kRefreshDelayMs);
    },
  };
}

// What a real rewind did, in words.
function rewoundWords(seq, answer) {
  const files = filesOf(answer);
  const restored = files.filter((f) => f.done && f.action === 'restore').length;
  const removed = files.filter((f) => f.done && f.action === 'remove').length;
  const parts = [];
  if (restored) parts.push(`${plural(restored, 'file')} restored`);
  if (removed) parts.push(`${plural(removed, 'file')} removed`);
  return `Rewound to #${seq}` + (parts.length ? `: ${parts.join(', ')}.` : '; no file changed.');
}

// "Rewind here": the dry run first, then on confirmation the rewind of the
// code and the conversation (code "both").
async function rewindHere(sessionId, seq) {
  const url = `/v1/sessions/${enc(sessionId)}/rewind`;
  const body = {to_seq: seq, code: 'both'};
  const answer = await confirmFileChanges({
    title: `Rewind to #${seq}`,
    intro: `The conversation's view will end at #${seq} (the log keeps what comes after, dimmed), ` +
           `and each file the agent wrote after #${seq} goes back to what it was then:`,
    confirmLabel: 'Rewind',
    dryRun: () => api('POST', url, {...body, dry_run: true}),
    apply: (force) => api('POST', url, {...body, force}),
  });
  if (answer) showNotice(rewoundWords(seq, answer));
}

export function rewindButton(sessionId, seq) {
  const button = el('button', 'rewind-button', 'Rewind here');
  button.type = 'button';
  button.dataset.seq = String(seq);
  button.title = `Undo what came after #${seq}: the agent's file changes and the conversation`;
  button.addEventListener('click', () => rewindHere(sessionId, seq));
  return button;
}
