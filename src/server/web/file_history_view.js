// The history of one file (#/file?path=ABS, issue 39): every version an
// agent wrote, across sessions, newest first, each with the turn that wrote
// it (a link to that seq of its session), its time, tool, the prompt that
// led to it and its diff from the version before (GET /v1/files/history);
// "Blame" shows who wrote each line of the file now (blame_view.js), and
// "Restore this version" writes one back after showing what changes
// (file_changes_dialog.js, POST /v1/files/restore). Without a path it asks
// for one.
//
// Example (app.js):
//   showFileHistory($('main'), '/home/dev/app/src/app.py', () => generation === view.generation);

import {api} from './api.js';
import {showBlame} from './blame_view.js';
import {confirmFileChanges, filesOf} from './file_changes_dialog.js';
import {fileHistoryHref, turnHref} from './file_links.js';
import {unifiedDiffBlock} from './unified_diff_view.js';
import {el, formatBytes, plural, showError, showNotice, timeElement} from './ui.js';

// A form asking for a path, for #/file with none.
function pathForm(path) {
  const form = el('form', 'file-path-form');
  const input = el('input');
  input.type = 'text';
  input.name = 'path';
  input.value = path;
  input.placeholder = '/home/you/project/src/app.py';
  input.setAttribute('aria-label', 'The file\'s absolute path');
  const go = el('button', '', 'Show');
  go.type = 'submit';
  form.append(input, go);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const typed = input.value.trim();
    if (typed) location.hash = fileHistoryHref(typed);
  });
  return form;
}

function whereWritten(v) {
  const p = el('p', 'version-where');
  if (v.session_id) {
    const a = el('a', 'version-session', `session ${v.session_id} #${v.seq}`);
    a.href = turnHref(v.session_id, v.seq);
    p.append('Written in ', a);
  } else {
    p.append(`Written by agent session ${v.agent_session || '?'} (its conversation is not in this store)`);
  }
  return p;
}

async function restoreVersion(path, v, reload) {
  const url = '/v1/files/restore';
  const body = {path, version: v.number};
  const answer = await confirmFileChanges({
    title: `Restore version ${v.number}`,
    intro: `${path} becomes what version ${v.number} left (the other versions stay recorded):`,
    confirmLabel: 'Restore',
    dryRun: () => api('POST', url, {...body, dry_run: true}),
    apply: (force) => api('POST', url, {...body, force}),
  });
  if (!answer) return;
  const done = filesOf(answer).some((f) => f.done);
  showNotice(done ? `Restored version ${v.number} of ${path}.` : `${path} is already version ${v.number}.`);
  reload();
}

function versionItem(path, v, reload) {
  const li = el('li', 'file-version');
  li.dataset.number = String(v.number);
  const head = el('header', 'version-head');
  head.append(el('strong', 'version-number', `Version ${v.number}`), timeElement(v.time_ms),
              el('span', 'badge', v.tool || '?'));
  if (v.source && v.source !== 'hook') head.append(el('span', 'badge', v.source));
  const size = v.exists === false ? 'no file (removed)' : (formatBytes(v.size) || 'empty');
  head.append(el('span', 'muted', size));
  const restore = el('button', 'restore-button', 'Restore this version');
  restore.type = 'button';
  restore.addEventListener('click', () => restoreVersion(path, v, reload));
  head.append(restore);
  li.append(head, whereWritten(v));
  if (v.prompt) {
    const prompt = el('blockquote', 'version-prompt');
    prompt.append(el('span', 'muted', 'Prompt: '), String(v.prompt));
    li.append(prompt);
  }
  const diff = unifiedDiffBlock(v.diff);
  li.append(diff || el('p', 'muted', '(the same content as the version before)'));
  return li;
}

// Shows the history of `path` in `main` while `isShown()`.
export async function showFileHistory(main, path, isShown) {
  const section = el('section', 'file-history');
  section.append(el('h1', '', 'File history'), pathForm(path));
  main.replaceChildren(section);
  if (!path) {
    section.append(el('p', 'muted', 'Give the absolute path of a file an agent wrote.'));
    return;
  }
  const toolbar = el('div', 'toolbar');
  const blameButton = el('button', 'blame-button', 'Blame');
  blameButton.type = 'button';
  blameButton.setAttribute('aria-pressed', 'false');
  blameButton.title = 'Who wrote each line of the file as it is now';
  toolbar.append(blameButton);
  const blame = el('div', 'blame-box');
  blame.hidden = true;
  const status = el('p', 'muted', 'Reading the versions…');
  const list = el('ol', 'file-versions');
  section.append(toolbar, blame, status, list);
  const shown = () => isShown() && section.isConnected;
  blameButton.addEventListener('click', () => {
    const open = blame.hidden;
    blame.hidden = !open;
    blameButton.setAttribute('aria-pressed', String(open));
    if (open) showBlame(blame, path, shown);
  });

  const load = async () => {
    let answer;
    try {
      answer = await api('GET', `/v1/files/history?${new URLSearchParams({path, diffs: '1'})}`);
    } catch (e) {
      if (shown()) status.textContent = 'The history could not be read.';
      showError(e);
      return;
    }
    if (!shown()) return;
    const versions = (answer && Array.isArray(answer.versions)) ? [...answer.versions] : [];
    versions.sort((a, b) => (b.number || 0) - (a.number || 0));  // newest first
    status.textContent = versions.length ? plural(versions.length, 'version')
                                         : 'No agent wrote this file (no recorded versions).';
    const reload = () => {
      if (!shown()) return;
      load();
      if (!blame.hidden) showBlame(blame, path, shown);
    };
    list.replaceChildren(...versions.map((v) => versionItem(path, v, reload)));
  };
  await load();
}
