// The Trash view (#/trash): the sessions in the trash with Restore and
// "Erase forever", the retention policy (shown and edited), and the ledger
// of forgetting, newest first. Through the API of docs/http-api.md:
// /v1/trash, /v1/retention, /v1/ledger. docs/web.md says what it does.
//
// Like the rest of the page, what the server sends (titles, scopes, actors)
// reaches the page only as text nodes.

import {api, enc} from './api.js';
import {plainText} from './plain_text.js';
import {$, ask, attempt, el, formatBytes, plural, showNotice, timeElement} from './ui.js';

const kPageSize = 50;
const kLedgerPage = 50;

// The kinds of a receipt's and a ledger entry's counts, in their order, in words.
const kCountWords = [
  ['sessions', 'session', 'sessions'],
  ['events', 'event', 'events'],
  ['messages', 'message', 'messages'],
  ['blobs', 'attachment file', 'attachment files'],
  ['drafts', 'draft', 'drafts'],
  ['usage_rows', 'usage record', 'usage records'],
  ['code_writes', 'code write', 'code writes'],
  ['search_documents', 'search entry', 'search entries'],
  ['embeddings', 'embedding', 'embeddings'],
];

// The numbers of a retention rule, each with the words its input is labelled with.
const kRuleFields = [
  ['trash_after_idle_days', 'Trash when idle (days)'],
  ['keep_newest', 'Keep newest'],
  ['archive_after_idle_days', 'Archive when idle (days)'],
  ['erase_archived_after_idle_days', 'Erase archived when idle (days)'],
];

const titleOf = (s) => s.title || plainText(s.preview || '') || 'Untitled session';

// "6 messages": a count of `kind` in words.
function countWords(kind, n) {
  const entry = kCountWords.find(([k]) => k === kind);
  if (!entry) return `${n} ${kind.replace(/_/g, ' ')}`;
  return `${n} ${n === 1 ? entry[1] : entry[2]}`;
}

// What a receipt's list calls a kind: "messages", "attachment files".
function kindName(kind) {
  if (kind === 'blob_bytes') return 'attachment bytes';
  const entry = kCountWords.find(([k]) => k === kind);
  return entry ? entry[2] : kind.replace(/_/g, ' ');
}

// "1 session · 6 messages · 2 attachment files (1.2 KiB)": the counts that
// are not 0, or "nothing".
export function countsText(counts) {
  const parts = [];
  for (const [kind, n] of Object.entries(counts || {})) {
    if (!n || kind === 'blob_bytes') continue;
    let words = countWords(kind, n);
    if (kind === 'blobs' && counts.blob_bytes) words += ` (${formatBytes(counts.blob_bytes)})`;
    parts.push(words);
  }
  return parts.length ? parts.join(' · ') : 'nothing';
}

// ---- The view ------------------------------------------------------------------

// Shows the Trash view in `main`. hooks.restored(session) is called after a
// session came back (the list shows it again).
export function showTrash(main, hooks) {
  const section = el('section', 'trash-view');
  const intro = el('p', 'muted trash-intro',
                   'Deleted sessions wait here, hidden from the list, search and every reader, ' +
                   'until they are restored or erased for good.');
  const head = el('div', 'title-row');
  const h1 = el('h1', '', 'Trash');
  h1.id = 'trash-title';
  const empty = el('button', 'empty-trash-button danger', 'Empty trash');
  empty.type = 'button';
  head.append(h1, empty);
  const ul = el('ul', 'trash-list');
  ul.id = 'trash-list';
  ul.setAttribute('aria-labelledby', 'trash-title');
  const none = el('p', 'muted', 'The trash is empty.');
  none.id = 'trash-empty';
  none.hidden = true;
  const more = el('button', 'load-more', 'Load more');
  more.type = 'button';
  more.hidden = true;
  const receipt = el('section', 'receipt');
  receipt.id = 'receipt';
  receipt.hidden = true;
  receipt.setAttribute('aria-live', 'polite');
  section.append(head, intro, receipt, ul, none, more, retentionSection(intro), ledgerSection());
  main.replaceChildren(section);

  const trash = {cursor: '', generation: 0};
  async function load(reset) {
    const generation = reset ? ++trash.generation : trash.generation;
    const params = new URLSearchParams({limit: String(kPageSize)});
    if (!reset && trash.cursor) params.set('cursor', trash.cursor);
    more.disabled = true;
    const page = await attempt(() => api('GET', `/v1/trash?${params}`));
    more.disabled = false;
    if (!page || generation !== trash.generation || !section.isConnected) return;
    if (reset) ul.replaceChildren();
    for (const s of page.sessions || []) ul.append(trashItem(s));
    trash.cursor = page.next_cursor || '';
    more.hidden = !trash.cursor;
    none.hidden = ul.childElementCount > 0;
    empty.disabled = ul.childElementCount === 0;
  }

  function removeItem(id) {
    ul.querySelector(`li[data-id="${CSS.escape(id)}"]`)?.remove();
    none.hidden = ul.childElementCount > 0;
    empty.disabled = ul.childElementCount === 0;
  }

  function trashItem(s) {
    const title = titleOf(s);
    const li = el('li', 'trash-item');
    li.dataset.id = s.id;
    const top = el('div', 'item-top');
    top.append(el('span', 'item-title', title));
    if (s.archived) top.append(el('span', 'badge', 'archived'));
    const meta = el('p', 'item-meta');
    meta.append('trashed ', timeElement(s.trashed_ms), el('span', 'count', plural(s.message_count, 'message')),
                el('code', 'session-id', s.id));
    const actions = el('div', 'item-actions');
    const restore = el('button', 'restore-button', 'Restore');
    restore.type = 'button';
    restore.setAttribute('aria-label', `Restore "${title}"`);
    restore.addEventListener('click', async () => {
      restore.disabled = true;
      const back = await attempt(() => api('POST', `/v1/trash/${enc(s.id)}/restore`));
      restore.disabled = false;
      if (!back) return;
      removeItem(s.id);
      hooks.restored(back);
      showNotice(`"${titleOf(back)}" was restored.`);
      reloadLedger();
    });
    const erase = el('button', 'erase-button danger', 'Erase forever');
    erase.type = 'button';
    erase.setAttribute('aria-label', `Erase "${title}" forever`);
    erase.addEventListener('click', async () => {
      const ok = await confirmErase('Erase this session forever?',
          `"${title}" and its ${plural(s.message_count, 'message')} will be erased, with every ` +
          'attachment, search entry and draft only it holds.');
      if (!ok) return;
      erase.disabled = true;
      const answer = await attempt(() => api('DELETE', `/v1/trash/${enc(s.id)}`));
      erase.disabled = false;
      if (!answer) return;
      removeItem(s.id);
      showReceipt(receipt, answer, `"${title}" was erased.`);
      reloadLedger();
    });
    actions.append(restore, erase);
    li.append(top, meta, actions);
    return li;
  }

  empty.addEventListener('click', async () => {
    const ok = await confirmErase('Empty the trash?',
        'Every session in the trash will be erased, with every attachment, search entry and ' +
        'draft only they hold.');
    if (!ok) return;
    const answer = await attempt(() => api('POST', '/v1/trash/empty', {older_than_days: 0}));
    if (!answer) return;
    showReceipt(receipt, answer, 'The trash was emptied.');
    load(true);
    reloadLedger();
  });
  more.addEventListener('click', () => load(false));

  const reloadLedger = () => section.querySelector('.ledger')?.dispatchEvent(new Event('reload'));
  load(true);
}

// Asks before an erasure, saying it cannot be undone; resolves to the answer.
function confirmErase(title, text) {
  $('erase-dialog-title').textContent = title;
  $('erase-dialog-text').textContent = text;
  return ask('erase-dialog');
}

// What an erasure did: its counts, kind by kind, and its receipt to keep.
function showReceipt(node, receipt, what) {
  const h2 = el('h2', '', what);
  const dl = el('dl', 'receipt-counts');
  for (const [kind, n] of Object.entries(receipt.counts || {})) {
    const dt = el('dt', '', kindName(kind));
    const dd = el('dd', '', kind === 'blob_bytes' && n ? `${n} (${formatBytes(n)})` : n);
    dd.dataset.kind = kind;
    dl.append(dt, dd);
  }
  const id = el('p', 'muted');
  id.append('Receipt ', el('code', 'receipt-id', receipt.id || ''), ' ');
  // The receipt is what `sessiondb verify --erased` and POST /v1/erase/verify check.
  const save = el('a', 'download', 'Download the receipt');
  // Compact, keys in the order the server wrote them: the receipt's canonical form.
  save.href = URL.createObjectURL(new Blob([JSON.stringify(receipt)], {type: 'application/json'}));
  save.download = `erasure-${receipt.id || 'receipt'}.json`;
  id.append(save);
  node.replaceChildren(h2, dl, id);
  node.hidden = false;
}

// ---- Retention --------------------------------------------------------------------

function numberInput(value, label) {
  const input = el('input');
  input.type = 'number';
  input.min = '0';
  input.step = '1';
  input.required = true;
  input.value = String(value ?? 0);
  input.setAttribute('aria-label', label);
  return input;
}

function retentionSection(intro) {
  const section = el('section', 'retention');
  const h2 = el('h2', '', 'Retention');
  h2.id = 'retention-title';
  const text = el('p', 'muted',
                  'What sessiondb forgets by itself. Rules apply to a project (a folder and the ones ' +
                  'below it), or to every other session when the project is empty; 0 turns a number off. ' +
                  'Sessions pinned in their metadata are never touched.');
  const form = el('form', 'retention-form');
  form.setAttribute('aria-labelledby', 'retention-title');
  const graceLabel = el('label', 'grace', 'Days a session stays in the trash before it is erased ');
  const grace = numberInput(30, 'Days a session stays in the trash before it is erased');
  grace.id = 'retention-grace';
  graceLabel.append(grace);
  const table = el('table', 'rules');
  const caption = el('caption', '', 'Rules');
  const thead = el('thead');
  const headRow = el('tr');
  for (const words of ['Project', ...kRuleFields.map(([, w]) => w), '']) headRow.append(el('th', '', words));
  thead.append(headRow);
  const tbody = el('tbody');
  table.append(caption, thead, tbody);
  const addRule = el('button', 'add-rule', 'Add a rule');
  addRule.type = 'button';
  const save = el('button', 'primary save-retention', 'Save');
  save.type = 'submit';
  const preview = el('button', 'preview-retention', 'Preview a run');
  preview.type = 'button';
  const status = el('p', 'muted retention-status');
  status.setAttribute('role', 'status');
  const buttons = el('div', 'toolbar');
  buttons.append(addRule, save, preview);
  form.append(graceLabel, table, buttons, status);
  section.append(h2, text, form);

  function ruleRow(rule) {
    const tr = el('tr', 'rule');
    const project = el('input');
    project.type = 'text';
    project.name = 'project';
    project.placeholder = 'every other session';
    project.value = rule.project || '';
    project.setAttribute('aria-label', 'Project');
    const td = el('td');
    td.append(project);
    tr.append(td);
    for (const [key, words] of kRuleFields) {
      const cell = el('td');
      const input = numberInput(rule[key], words);
      input.name = key;
      cell.append(input);
      tr.append(cell);
    }
    const remove = el('button', 'remove-rule', 'Remove');
    remove.type = 'button';
    remove.setAttribute('aria-label', `Remove the rule of ${rule.project || 'every other session'}`);
    remove.addEventListener('click', () => tr.remove());
    const last = el('td');
    last.append(remove);
    tr.append(last);
    return tr;
  }

  function show(policy) {
    grace.value = String(policy.trash_grace_days ?? 30);
    tbody.replaceChildren(...(policy.rules || []).map(ruleRow));
    intro.textContent = 'Deleted sessions wait here, hidden from the list, search and every reader, ' +
        `until they are restored, or erased for good ${plural(policy.trash_grace_days ?? 30, 'day')} ` +
        'after they were trashed.';
  }

  function policyOfForm() {
    const rules = [...tbody.querySelectorAll('tr.rule')].map((tr) => {
      const rule = {project: tr.querySelector('input[name="project"]').value.trim()};
      for (const [key] of kRuleFields) rule[key] = Number(tr.querySelector(`input[name="${key}"]`).value);
      return rule;
    });
    return {trash_grace_days: Number(grace.value), rules};
  }

  addRule.addEventListener('click', () => {
    const row = ruleRow({});
    tbody.append(row);
    row.querySelector('input').focus();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.textContent = 'Saving…';
    const policy = policyOfForm();
    const saved = await attempt(async () => (await api('PUT', '/v1/retention', policy)) || policy);
    if (!saved) {
      status.textContent = 'Not saved.';
      return;
    }
    show(saved.trash_grace_days === undefined ? policy : saved);
    status.textContent = 'Saved.';
  });
  preview.addEventListener('click', async () => {
    status.textContent = 'Working out what a run would do…';
    const run = await attempt(() => api('POST', '/v1/retention/run', {dry_run: true}));
    if (!run) {
      status.textContent = '';
      return;
    }
    const n = (list) => (list || []).length;
    status.textContent = `A run now would archive ${plural(n(run.archived), 'session')}, trash ` +
        `${plural(n(run.trashed), 'session')} and erase ${plural(n(run.erased), 'session')}` +
        (n(run.kept_for_forks) ? ` (keeping ${n(run.kept_for_forks)} hidden for their forks)` : '') +
        '. Nothing was changed.';
  });

  attempt(() => api('GET', '/v1/retention')).then((policy) => {
    if (policy) show(policy);
  });
  return section;
}

// ---- The ledger ---------------------------------------------------------------------

function ledgerSection() {
  const section = el('section', 'ledger');
  const h2 = el('h2', '', 'Ledger');
  h2.id = 'ledger-title';
  const text = el('p', 'muted',
                  'Every deletion, trashing, restore and erasure, newest first: when, who, what and ' +
                  'how much. Never the content.');
  const table = el('table', 'ledger-table');
  table.setAttribute('aria-labelledby', 'ledger-title');
  const thead = el('thead');
  const headRow = el('tr');
  for (const words of ['When', 'Who', 'Action', 'Scope', 'Counts']) headRow.append(el('th', '', words));
  thead.append(headRow);
  const tbody = el('tbody');
  tbody.id = 'ledger-rows';
  table.append(thead, tbody);
  const none = el('p', 'muted', 'Nothing has been forgotten yet.');
  none.hidden = true;
  const older = el('button', 'load-more', 'Older entries');
  older.type = 'button';
  older.hidden = true;
  section.append(h2, text, table, none, older);

  const ledger = {beforeId: 0, generation: 0};
  async function load(reset) {
    const generation = reset ? ++ledger.generation : ledger.generation;
    const params = new URLSearchParams({limit: String(kLedgerPage)});
    if (!reset && ledger.beforeId) params.set('before_id', String(ledger.beforeId));
    const answer = await attempt(() => api('GET', `/v1/ledger?${params}`));
    if (!answer || generation !== ledger.generation) return;
    const entries = answer.entries || [];
    if (reset) tbody.replaceChildren();
    for (const e of entries) {
      const tr = el('tr', 'ledger-row');
      tr.dataset.id = String(e.id);
      tr.dataset.action = e.action;
      const when = el('td');
      when.append(timeElement(e.ts_ms));
      tr.append(when, el('td', 'actor', e.actor), el('td', 'action', e.action),
                el('td', 'scope', e.scope), el('td', 'counts', countsText(e.counts)));
      tbody.append(tr);
    }
    if (entries.length) ledger.beforeId = entries[entries.length - 1].id;
    older.hidden = entries.length < kLedgerPage;
    none.hidden = tbody.childElementCount > 0;
    table.hidden = tbody.childElementCount === 0;
  }
  older.addEventListener('click', () => load(false));
  section.addEventListener('reload', () => load(true));
  load(true);
  return section;
}
