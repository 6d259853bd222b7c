// Blame by conversation (issue 39): each line of a file as it is now, with
// the turn whose tool call last wrote it, a link to that seq of its session,
// or "not an agent" for a line written outside every recorded call
// (GET /v1/files/blame). As git blame does, a run of lines from the same
// write names it once. Line text reaches the page as text only.
//
// Example (file_history_view.js):
//   showBlame(container, '/home/dev/app/src/app.py', () => container.isConnected);

import {api, ApiError} from './api.js';
import {turnHref} from './file_links.js';
import {el, showError} from './ui.js';

// Who wrote a line, as one key: lines of one run share it.
const writer = (l) => (l.agent ? `v${l.version_id}` : 'none');

function whoCell(line) {
  const td = el('td', 'blame-who');
  if (!line.agent) {
    td.append(el('span', 'muted', 'not an agent'));
    return td;
  }
  const label = `${line.tool || '?'} #${line.seq ?? '?'}`;
  if (line.session_id) {
    const a = el('a', 'blame-turn', label);
    a.href = turnHref(line.session_id, line.seq);
    a.title = `Session ${line.session_id}, the turn at #${line.seq}`;
    td.append(a);
  } else {
    td.append(el('span', 'blame-turn', `${line.tool || '?'}`));
    td.title = `Agent session ${line.agent_session || '?'} (not in this store)`;
  }
  return td;
}

// The blame table of `path` into `container` (replacing what it held).
export async function showBlame(container, path, isShown) {
  container.replaceChildren(el('p', 'muted', 'Reading the file…'));
  let answer;
  try {
    answer = await api('GET', `/v1/files/blame?${new URLSearchParams({path})}`);
  } catch (e) {
    if (!isShown()) return;
    if (e instanceof ApiError && e.status === 404) {
      // No file there now, or no version recorded: the server says which.
      container.replaceChildren(el('p', 'muted blame-missing', e.message));
      return;
    }
    container.replaceChildren();
    showError(e);
    return;
  }
  if (!isShown()) return;
  const lines = (answer && Array.isArray(answer.lines)) ? answer.lines : [];
  if (!lines.length) {
    container.replaceChildren(el('p', 'muted', 'The file is empty.'));
    return;
  }
  const table = el('table', 'blame');
  const body = el('tbody');
  let previous = null;
  for (const line of lines) {
    const tr = el('tr', line.agent ? 'by-agent' : 'by-other');
    const key = writer(line);
    if (key === previous) {
      tr.classList.add('same-writer');
      tr.append(el('td', 'blame-who'));
    } else {
      tr.append(whoCell(line));
    }
    previous = key;
    tr.append(el('td', 'blame-number', line.line), el('td', 'blame-text', line.text));
    body.append(tr);
  }
  table.append(body);
  const agents = lines.filter((l) => l.agent).length;
  container.replaceChildren(
      el('p', 'muted', `${agents} of ${lines.length} lines were last written by an agent.`), table);
}
