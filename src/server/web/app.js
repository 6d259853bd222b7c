// The history browser: session list, search, a session's log followed live,
// and the actions (rename, archive, fork, export). Talks only to /v1.
import {api, ApiError, blobUrl, eventsUrl, onTokenNeeded} from './api.js';
import {renderHighlighted, renderMarkdown} from './markdown.js';

const $ = (id) => document.getElementById(id);
const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};
const formatTime = (ms) => new Date(ms).toLocaleString();
const enc = encodeURIComponent;

const state = {
  cursor: '',
  titles: new Map(),   // session id -> title, for fork origins
  session: null,       // the open session
  lastSeq: 0,          // the newest seq shown
  stream: null,        // its EventSource
};

// ---- Errors and the token ---------------------------------------------------

function showError(error) {
  const message = error instanceof ApiError ? `${error.message} (${error.code})` : String(error.message || error);
  $('banner-text').textContent = message;
  $('banner').hidden = false;
}
$('banner-close').onclick = () => { $('banner').hidden = true; };

onTokenNeeded(() => new Promise((resolve) => {
  const dialog = $('token-dialog');
  $('token-form').onsubmit = () => resolve($('token-input').value);
  dialog.showModal();
}));

// Runs an action, showing what went wrong instead of failing silently.
async function guarded(fn) {
  try {
    return await fn();
  } catch (e) {
    showError(e);
  }
}

// ---- The session list ---------------------------------------------------------

async function titleOf(id) {
  if (!state.titles.has(id)) {
    try {
      state.titles.set(id, (await api.get('/v1/sessions/' + enc(id))).title);
    } catch (_) {
      state.titles.set(id, id);  // deleted since: the fork still reads its history
    }
  }
  return state.titles.get(id);
}

function forkOrigin(session) {
  const origin = el('div', 'fork-origin');
  origin.textContent = `forked from … at #${session.fork_seq}`;
  titleOf(session.parent_id).then((title) => {
    origin.textContent = '';
    origin.append('forked from ');
    const link = el('a', 'parent-link', title);
    link.href = '#/s/' + enc(session.parent_id);
    origin.append(link, ` at #${session.fork_seq}`);
  });
  return origin;
}

function sessionItem(s) {
  const li = el('li', 'session-item');
  li.dataset.id = s.id;
  const title = el('div', 'title', s.title);
  if (s.archived) title.append(el('span', 'badge', 'archived'));
  li.append(title, el('div', 'preview', s.preview || ''),
            el('div', 'meta', `${formatTime(s.updated_ms)} · ${s.message_count} message${s.message_count === 1 ? '' : 's'}`));
  if (s.parent_id) li.append(forkOrigin(s));
  li.onclick = () => { location.hash = '#/s/' + enc(s.id); };
  if (state.session && state.session.id === s.id) li.classList.add('selected');
  return li;
}

async function loadSessions(reset) {
  if (reset) {
    state.cursor = '';
    $('session-list').replaceChildren();
  }
  let url = `/v1/sessions?limit=50&archived=${$('archived-filter').value}`;
  if (state.cursor) url += '&cursor=' + enc(state.cursor);
  const page = await api.get(url);
  for (const s of page.sessions) {
    state.titles.set(s.id, s.title);
    $('session-list').append(sessionItem(s));
  }
  state.cursor = page.next_cursor || '';
  $('load-more').hidden = !state.cursor;
}
$('archived-filter').onchange = () => guarded(() => loadSessions(true));
$('load-more').onclick = () => guarded(() => loadSessions(false));

// ---- One session ----------------------------------------------------------------

async function thumbnail(resource) {
  const img = el('img', 'thumb');
  img.alt = resource.name || 'image';
  img.title = `${resource.name || 'image'} · ${resource.width}×${resource.height} · ${resource.size} bytes`;
  img.dataset.sha256 = resource.content_sha256;
  img.src = await blobUrl(resource.content_sha256);
  img.onclick = () => {
    $('lightbox-image').src = img.src;
    $('lightbox').hidden = false;
  };
  return img;
}
$('lightbox').onclick = () => { $('lightbox').hidden = true; };

function folded(summaryText, body, className) {
  const details = el('details', className);
  details.append(el('summary', '', summaryText));
  const pre = el('pre', '', body);
  details.append(pre);
  return details;
}

function renderPart(part, into) {
  switch (part.type) {
    case 'text':
      into.append(renderMarkdown(part.text));
      break;
    case 'reasoning':
      into.append(folded('Reasoning', part.text, 'reasoning'));
      break;
    case 'tool_call':
      into.append(folded(`Tool call: ${part.tool_name}`, JSON.stringify(part.arguments, null, 2), 'tool-call'));
      break;
    case 'tool_result':
      into.append(folded(`Tool result${part.is_error ? ' (error)' : ''} for ${part.tool_call_id}`, part.text, 'tool-result'));
      break;
    case 'image': {
      const r = part.resource;
      if (!r || r.missing) {
        into.append(el('div', 'missing', `image ${r ? r.name || r.resource_id : ''} is missing from the store`));
        break;
      }
      const holder = el('span', 'image');
      into.append(holder);
      thumbnail(r).then((img) => holder.append(img), showError);
      break;
    }
    case 'file': {
      const r = part.resource;
      const link = el('a', 'file', `📎 ${r.name || 'file'} (${r.mime}, ${r.size} bytes)`);
      link.href = '#';
      link.onclick = (e) => {
        e.preventDefault();
        guarded(async () => download(await blobUrl(r.content_sha256), r.name || 'file'));
      };
      into.append(el('div', '', ''), link);
      break;
    }
    case 'resource_link': {
      const r = part.resource;
      if (r && /^https?:/i.test(r.uri)) {
        const a = el('a', 'link', r.name || r.uri);
        a.href = r.uri;
        a.rel = 'noopener noreferrer';
        a.target = '_blank';
        into.append(el('div', '', ''), a);
      } else if (r) {
        into.append(el('div', '', r.uri));
      }
      break;
    }
  }
}

function eventHead(e, label) {
  const head = el('div', 'event-head');
  head.append(el('span', 'role', label), el('span', 'seq', '#' + e.seq), el('span', 'time', formatTime(e.ts_ms)));
  return head;
}

function renderEvent(e) {
  const box = el('article', 'event');
  box.id = 'seq-' + e.seq;
  box.dataset.seq = e.seq;
  if (e.type === 'compaction') {
    const c = e.compaction;
    box.classList.add('compaction');
    box.append(eventHead(e, 'compaction'), el('div', 'compaction-range', `Summary of #${c.from_seq}–#${c.to_seq}`));
    box.append(renderMarkdown(c.summary));
    return box;
  }
  if (e.type === 'resource_view') {
    const v = e.resource_view;
    box.classList.add('resource-view');
    box.append(eventHead(e, 'view'), el('div', '', `Viewed ${v.resource.name || v.resource_id} from #${v.message_seq}${v.reason ? ': ' + v.reason : ''}`));
    return box;
  }
  const m = e.message;
  box.classList.add('message', 'role-' + m.role);
  const head = eventHead(e, m.role);
  if (m.model) head.append(el('span', 'model', m.model));
  head.append(el('span', 'spacer'));
  const fork = el('button', 'fork-button', 'Fork here');
  fork.type = 'button';
  fork.title = `A new session with this history up to #${e.seq}`;
  fork.onclick = () => guarded(() => forkAt(e.seq));
  head.append(fork);
  box.append(head);
  if (m.pruned) box.append(el('div', 'missing', 'pruned by a compaction'));
  for (const part of m.parts) renderPart(part, box);
  return box;
}

function showEvent(e) {
  if (e.seq <= state.lastSeq) return;  // already shown
  $('events').append(renderEvent(e));
  state.lastSeq = e.seq;
}

function showDraft(d) {
  const id = 'draft-' + d.draft_id;
  let box = document.getElementById(id);
  if (d.done) {
    if (box) box.remove();
    return;
  }
  if (!box) {
    box = el('article', 'event draft role-' + d.role);
    box.id = id;
    $('drafts').append(box);
  }
  const head = el('div', 'event-head');
  head.append(el('span', 'role', d.role), el('span', 'seq', 'writing…'));
  box.replaceChildren(head, renderMarkdown(d.text));
}

function follow(sessionId) {
  if (state.stream) state.stream.close();
  const stream = new EventSource(eventsUrl(sessionId, state.lastSeq));
  const onEvent = (msg) => {
    if (!state.session || state.session.id !== sessionId) return;
    showEvent(JSON.parse(msg.data));
  };
  for (const type of ['message', 'compaction', 'resource_view']) stream.addEventListener(type, onEvent);
  stream.addEventListener('draft', (msg) => showDraft(JSON.parse(msg.data)));
  stream.addEventListener('error', (msg) => {
    if (msg.data) showError(new Error(JSON.parse(msg.data).message));
  });
  state.stream = stream;
}

function showSessionHeader(s) {
  $('session-title').textContent = s.title;
  $('session-meta').textContent = `${s.message_count} messages · created ${formatTime(s.created_ms)} · updated ${formatTime(s.updated_ms)}${s.archived ? ' · archived' : ''}`;
  if (s.parent_id) $('session-meta').append(' · ', forkOrigin(s));
  $('archive-button').textContent = s.archived ? 'Unarchive' : 'Archive';
  for (const li of document.querySelectorAll('.session-item')) li.classList.toggle('selected', li.dataset.id === s.id);
}

function showView(name) {
  for (const v of ['welcome', 'search-view', 'session-view']) $(v).hidden = v !== name;
}

async function openSession(id, focusSeq) {
  const s = await api.get('/v1/sessions/' + enc(id));
  state.session = s;
  state.lastSeq = 0;
  showView('session-view');
  showSessionHeader(s);
  $('events').replaceChildren();
  $('drafts').replaceChildren();
  const {events} = await api.get(`/v1/sessions/${enc(id)}/events?since=0`);
  events.forEach(showEvent);
  follow(id);
  if (focusSeq) {
    const target = document.getElementById('seq-' + focusSeq);
    if (target) {
      target.classList.add('highlighted');
      target.scrollIntoView({block: 'center'});
    }
  }
}

// ---- Actions ----------------------------------------------------------------------

function download(url, name) {
  const a = el('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
}

async function forkAt(seq) {
  const child = await api.post(`/v1/sessions/${enc(state.session.id)}/fork`, {at_seq: seq});
  await loadSessions(true);
  location.hash = '#/s/' + enc(child.id);
}

$('rename-button').onclick = () => {
  $('rename-input').value = state.session.title;
  $('rename-form').hidden = false;
  $('rename-input').focus();
};
$('rename-cancel').onclick = () => { $('rename-form').hidden = true; };
$('rename-form').onsubmit = (e) => {
  e.preventDefault();
  guarded(async () => {
    state.session = await api.patch('/v1/sessions/' + enc(state.session.id), {title: $('rename-input').value});
    $('rename-form').hidden = true;
    showSessionHeader(state.session);
    await loadSessions(true);
  });
};
$('archive-button').onclick = () => guarded(async () => {
  state.session = await api.patch('/v1/sessions/' + enc(state.session.id), {archived: !state.session.archived});
  showSessionHeader(state.session);
  await loadSessions(true);
});
$('export-button').onclick = () => guarded(async () => {
  const format = $('export-format').value;
  const res = await api.raw(`/v1/sessions/${enc(state.session.id)}/export?format=${format}`);
  const name = (res.headers.get('Content-Disposition') || '').match(/filename="([^"]+)"/);
  download(URL.createObjectURL(await res.blob()), name ? name[1] : 'export');
});

// ---- Search -------------------------------------------------------------------------

async function search(query) {
  showView('search-view');
  $('search-input').value = query;
  $('search-title').textContent = `Search: ${query}`;
  $('search-hits').replaceChildren();
  const r = await api.get('/v1/search?limit=50&q=' + enc(query));
  $('search-summary').textContent = r.note || `${r.hits.length} hit${r.hits.length === 1 ? '' : 's'}`;
  for (const hit of r.hits) {
    const li = el('li');
    const box = el('div', 'hit');
    const where = hit.kind === 'code_write'
        ? `code · ${hit.file_path}`
        : `${hit.session_title} · #${hit.seq}${hit.role ? ' · ' + hit.role : ''} · ${formatTime(hit.time_ms)}`;
    box.append(el('div', 'where', where));
    const snippet = el('div', 'snippet');
    renderHighlighted(hit.snippet, hit.highlights, snippet);
    box.append(snippet);
    if (hit.session_id) box.onclick = () => { location.hash = `#/s/${enc(hit.session_id)}/${hit.seq}`; };
    li.append(box);
    $('search-hits').append(li);
  }
}
$('search-form').onsubmit = (e) => {
  e.preventDefault();
  const q = $('search-input').value.trim();
  if (q) location.hash = '#/search/' + enc(q);
};

// ---- Routing: #/s/ID[/SEQ], #/search/QUERY ----------------------------------------

async function route() {
  const hash = location.hash;
  let m;
  if ((m = hash.match(/^#\/s\/([^/]+)(?:\/(\d+))?$/))) {
    await openSession(decodeURIComponent(m[1]), m[2] ? Number(m[2]) : 0);
  } else if ((m = hash.match(/^#\/search\/(.+)$/))) {
    if (state.stream) state.stream.close();
    await search(decodeURIComponent(m[1]));
  } else {
    showView('welcome');
  }
}
window.addEventListener('hashchange', () => guarded(route));

guarded(async () => {
  await loadSessions(true);
  await route();
});
