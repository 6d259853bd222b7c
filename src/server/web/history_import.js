// The import the page offers: when the store holds no history of the user's
// own (nothing, or only the demo sessions), each agent history folder the
// server found (GET /v1/import/sources: ~/.claude/projects, ~/.codex/sessions)
// is offered with an Import button, which starts the import on the server
// (POST /v1/import/sources/ID) and shows its progress until it is done.
// docs/web.md says what it does.

import {api} from './api.js';
import {$, el, formatBytes, plural, showError} from './ui.js';

const kPollMs = 400;

// Whether the list's first page holds only demo sessions (or none).
const onlyDemo = (sessions) => sessions.every((s) => s.metadata && s.metadata.demo === true);

// What a finished import added, in words.
function reportText(report) {
  const added = report.sessions_added + report.sessions_extended;
  let text = `Imported ${plural(added, 'session')}, ${plural(report.messages_added, 'message')}`;
  if (report.records_skipped) text += ` (${plural(report.records_skipped, 'record')} skipped)`;
  return text;
}

function progressText(source) {
  if (!source.total_bytes) return 'Importing…';
  const percent = Math.floor((100 * source.done_bytes) / source.total_bytes);
  return `Importing… ${percent}% of ${formatBytes(source.total_bytes)}`;
}

function renderSource(source, onStart) {
  const row = el('div', 'import-source');
  row.dataset.id = String(source.id);
  const label = el('p', 'import-label');
  label.append(el('strong', '', `${source.agent} history`), ' in ', el('code', '', source.folder));
  row.append(label);
  const status = el('p', 'import-status muted');
  status.setAttribute('role', 'status');
  if (source.state === 'running') {
    const bar = el('progress', 'import-progress');
    bar.max = source.total_bytes || 1;
    bar.value = source.done_bytes;
    row.append(bar);
    status.textContent = progressText(source);
  } else if (source.state === 'done') {
    status.textContent = reportText(source.report);
  } else if (source.state === 'failed') {
    status.textContent = `The import failed: ${source.error}`;
    status.classList.add('error-text');
  }
  row.append(status);
  if (source.state !== 'running' && source.state !== 'done') {
    const button = el('button', 'import-button', `Import ${source.agent} history`);
    button.type = 'button';
    button.addEventListener('click', () => onStart(source.id, button));
    row.append(button);
  }
  return row;
}

// Shows the offer in #import-offer when `sessions` (the list's first page)
// holds no history of the user's own and the server found some to import;
// calls `onImported` once an import finishes, so the list is read again.
export async function offerImports(sessions, onImported) {
  const box = $('import-offer');
  if (!onlyDemo(sessions) && box.hidden) return;
  let sources;
  try {
    sources = (await api('GET', '/v1/import/sources')).sources || [];
  } catch (e) {
    return showError(e);
  }
  if (sources.length === 0) {
    box.hidden = true;
    return;
  }
  let polling = false;
  const render = (list) => {
    $('import-sources').replaceChildren(...list.map((s) => renderSource(s, start)));
    box.hidden = false;
  };
  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      for (;;) {
        const now = (await api('GET', '/v1/import/sources')).sources || [];
        render(now);
        if (!now.some((s) => s.state === 'running')) break;
        await new Promise((resolve) => setTimeout(resolve, kPollMs));
      }
      onImported();
    } catch (e) {
      showError(e);
    } finally {
      polling = false;
    }
  };
  const start = async (id, button) => {
    button.disabled = true;
    try {
      render((await api('POST', `/v1/import/sources/${id}`)).sources || []);
      await poll();
    } catch (e) {
      button.disabled = false;
      showError(e);
    }
  };
  render(sources);
  if (sources.some((s) => s.state === 'running')) poll();
}
