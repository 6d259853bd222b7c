// The history browser: the session list (followed live), search, one
// session's log followed live, and the actions (rename, archive, fork,
// delete to the trash with an undo, export). It talks only to the server's /v1 API (docs/http-api.md);
// docs/web.md says what it does.
//
// Message text is untrusted: it reaches the page only as text nodes (through
// markdown.js and highlight.js, or textContent). Nothing here assigns HTML.
//
// Addresses (the part after #): "/" the list, "/s/ID" a session, "/s/ID/SEQ"
// a session scrolled to an event, "/search?q=WORDS" search results, "/trash"
// the trash, the retention policy and the ledger (trash.js), "/usage" what
// the history cost (usage_view.js), "/projects" the history by project and
// source (projects_view.js), "/file?path=ABS" the versions agents wrote of a
// file and its blame (file_history_view.js). Each can be opened directly (a
// bookmark, a link from elsewhere).

import {api, ApiError, blobPath, download, enc, eventsUrl, listEventsUrl, mediaUrl,
        needsFetchedDownloads, onTokenNeeded} from './api.js';
import {rewindButton, trackWrittenFiles} from './checkpoints.js';
import {showFileHistory} from './file_history_view.js';
import {renderHighlighted} from './highlight.js';
import {offerImports} from './history_import.js';
import {renderMarkdown, safeHref} from './markdown.js';
import {setUpNavigation} from './navigation.js';
import {plainText} from './plain_text.js';
import {chooseFacet, sessionFacetBadges, setUpFacets} from './list_facets.js';
import {learnUsage, usageBadge} from './list_usage.js';
import {showProjects} from './projects_view.js';
import {createTimeline} from './session_timeline.js';
import {showSessionUsage} from './session_usage.js';
import {renderToolCall, renderToolResult} from './tool_calls.js';
import {showTrash} from './trash.js';
import {showUsage} from './usage_view.js';
import {$, ask, attempt, el, formatBytes, hideBanner, hideNotice, plural, showError, showNotice,
        timeElement} from './ui.js';

const kPageSize = 50;
const kThumbWidth = 240;
const kThumbHeight = 180;

const sessionTitle = (s) => s.title || plainText(s.preview) || 'Untitled session';
const sessionHref = (id, seq) => `#/s/${enc(id)}` + (seq ? `/${seq}` : '');

// ---- The token --------------------------------------------------------------

function askForToken(refused) {
  const dialog = $('token-dialog');
  const input = $('token-input');
  $('token-hint').textContent = refused
      ? 'The server refused that token. Enter the one it was started with ' +
        '($SESSIONDB_TOKEN or --token-file).'
      : 'This server needs the token it was started with ($SESSIONDB_TOKEN or --token-file). ' +
        'It is kept in this browser\'s local storage.';
  input.value = '';
  return new Promise((resolve) => {
    const form = $('token-form');
    const submit = (event) => {
      event.preventDefault();
      const value = input.value.trim();
      if (!value) return;
      form.removeEventListener('submit', submit);
      dialog.close();
      resolve(value);
    };
    form.addEventListener('submit', submit);
    // Escape would leave the page without a token and every view empty.
    dialog.addEventListener('cancel', (event) => event.preventDefault(), {once: true});
    dialog.showModal();
    input.focus();
  });
}

// ---- Images -----------------------------------------------------------------

function openLightbox(sha256, caption) {
  const image = $('lightbox-image');
  image.removeAttribute('src');
  image.alt = caption;
  $('lightbox-caption').textContent = caption;
  $('lightbox').hidden = false;
  mediaUrl(sha256).then((url) => { image.src = url; }, showError);
}

function closeLightbox() {
  $('lightbox').hidden = true;
  $('lightbox-image').removeAttribute('src');
}

// A thumbnail of an image resource that opens full size when clicked.
function thumbnail(resource) {
  const name = resource.name || 'image';
  if (resource.missing || !resource.content_sha256) {
    return el('div', 'missing', `Image missing from the store: ${name}` +
              (resource.content_sha256 ? ` (${resource.content_sha256.slice(0, 12)}…)` : ''));
  }
  const figure = el('figure', 'image');
  const button = el('button', 'thumb');
  button.type = 'button';
  button.title = 'Open full size';
  const img = el('img');
  img.alt = name;
  img.decoding = 'async';
  const w = resource.width || 0;
  const h = resource.height || 0;
  if (w > 0 && h > 0) {
    const scale = Math.min(1, kThumbWidth / w, kThumbHeight / h);
    img.width = Math.max(1, Math.round(w * scale));
    img.height = Math.max(1, Math.round(h * scale));
  }
  mediaUrl(resource.content_sha256).then((url) => { img.src = url; }, showError);
  const caption = [name, w && h ? `${w}×${h}` : '', formatBytes(resource.size)].filter(Boolean).join(' · ');
  button.append(img);
  button.addEventListener('click', () => openLightbox(resource.content_sha256, caption));
  figure.append(button, el('figcaption', '', caption));
  return figure;
}

// A link that downloads `path` as `filename`; with a token set, the bytes
// are fetched with it first (a plain link could not send it).
function downloadLink(path, filename, label) {
  const a = el('a', 'download', label);
  a.href = path;
  a.download = filename;
  a.addEventListener('click', (event) => {
    if (!needsFetchedDownloads()) return;
    event.preventDefault();
    download(path, filename).catch(showError);
  });
  return a;
}

function isImage(resource) {
  return Boolean(resource && typeof resource.mime === 'string' && resource.mime.startsWith('image/'));
}

// ---- Parts, messages and the other events -------------------------------------

function folded(className, summaryNodes, body) {
  const details = el('details', className);
  const summary = el('summary');
  summary.append(...summaryNodes);
  details.append(summary, body);
  return details;
}

function markdownBlock(text, className = 'md') {
  const div = el('div', className);
  div.append(renderMarkdown(text));
  return div;
}

// `seq` is the part's message's: a tool result links back to its call's.
function renderPart(part, context, seq) {
  const resource = part.resource;
  switch (part.type) {
    case 'text':
      return markdownBlock(part.text);
    case 'reasoning':
      return folded('reasoning', ['Reasoning'], markdownBlock(part.text));
    case 'tool_call': {
      // Shown with its result (tool_calls.js), which may come in a later message.
      const call = renderToolCall(part);
      context.calls.set(part.tool_call_id, {...call, seq, answered: false});
      return call.node;
    }
    case 'tool_result': {
      const call = context.calls.get(part.tool_call_id);
      if (call && !call.answered && part.tool_call_id) {
        call.answered = true;
        call.attach(part);
        const marker = el('div', 'tool-result-marker muted');
        const a = el('a', '', `#${call.seq}`);
        a.href = sessionHref(view.session ? view.session.id : '', call.seq);
        marker.append('Result of ', el('code', 'tool-name', call.name || '?'),
                      part.is_error ? ' (an error)' : '', ' shown with its call at ', a);
        return marker;
      }
      return renderToolResult(part, call && call.name);
    }
    case 'image':
      return resource ? thumbnail(resource) : el('div', 'missing', 'Image without a descriptor');
    case 'file': {
      if (!resource) return el('div', 'missing', 'File without a descriptor');
      const name = resource.name || `file-${(resource.content_sha256 || '').slice(0, 12)}`;
      const line = el('div', 'file');
      if (resource.missing || !resource.content_sha256) {
        line.append(el('span', 'missing', `File missing from the store: ${name}`));
      } else {
        line.append('File ', downloadLink(blobPath(resource.content_sha256), name, name));
      }
      line.append(el('span', 'muted', ` ${[resource.mime, formatBytes(resource.size)].filter(Boolean).join(', ')}`));
      return line;
    }
    case 'resource_link': {
      const line = el('div', 'file link');
      const uri = (resource && resource.uri) || part.uri || '';
      const label = (resource && resource.name) || uri;
      const href = safeHref(uri);
      line.append('Link ');
      if (href) {
        const a = el('a', '', label);
        a.href = href;
        a.target = '_blank';
        a.rel = 'noopener noreferrer nofollow';
        line.append(a);
      } else {
        line.append(el('code', '', label));
      }
      line.append(el('span', 'muted', ' (not fetched)'));
      return line;
    }
    default:
      return el('div', 'muted', `A part of type ${part.type} this page does not show`);
  }
}

function forkButton(seq) {
  const button = el('button', 'fork-button', 'Fork here');
  button.type = 'button';
  button.dataset.seq = String(seq);
  button.title = `Start a new session holding this one up to #${seq}`;
  button.addEventListener('click', () => askForkTitle(seq));
  return button;
}

function eventShell(tag, className, event, label) {
  const node = el(tag, `event ${className}`);
  node.id = `seq-${event.seq}`;
  node.dataset.seq = String(event.seq);
  const head = el('header', 'event-head');
  const seq = el('a', 'seq', `#${event.seq}`);
  // The open session's own address: a fork's inherited events name its parent.
  seq.href = sessionHref(view.session ? view.session.id : event.session_id, event.seq);
  head.append(el('span', 'role', label), seq, timeElement(event.ts_ms));
  node.append(head);
  return {node, head};
}

function renderMessage(event, context) {
  const m = event.message || {};
  const {node, head} = eventShell('article', `msg role-${m.role || 'unknown'}`, event, m.role || 'message');
  if (m.model) head.append(el('span', 'model', m.model));
  if (m.pruned) head.append(el('span', 'badge', 'pruned'));
  head.append(forkButton(event.seq),
              rewindButton(view.session ? view.session.id : event.session_id, event.seq));
  const parts = el('div', 'parts');
  for (const part of m.parts || []) parts.append(renderPart(part, context, event.seq));
  if (!(m.parts || []).length) parts.append(el('p', 'muted', '(no content)'));
  node.append(parts);
  return node;
}

function renderCompaction(event) {
  const c = event.compaction || {};
  const {node, head} = eventShell('section', 'compaction', event, 'compaction');
  const range = el('span', 'range', `#${c.from_seq}–#${c.to_seq}`);
  head.append(range);
  if (c.strategy) head.append(el('span', 'model', c.strategy));
  if (c.model) head.append(el('span', 'model', c.model));
  const body = el('div', 'parts');
  body.append(el('p', 'compaction-note',
                 `Events #${c.from_seq}–#${c.to_seq} were summarized; providers see this summary instead:`));
  body.append(markdownBlock(c.summary || ''));
  if (c.limitations) body.append(folded('limitations', ['What the summary leaves out'], markdownBlock(c.limitations)));
  for (const image of c.images || []) body.append(thumbnail(image));
  node.append(body);
  return node;
}

function renderResourceView(event) {
  const v = event.resource_view || {};
  const r = v.resource || {};
  const {node, head} = eventShell('section', 'resource-view', event, 'resource view');
  head.append(forkButton(event.seq));
  const body = el('div', 'parts');
  const line = el('p', '', `Shown to the model again: ${r.name || r.resource_id || v.resource_id || 'a resource'}`);
  if (v.message_seq) {
    const a = el('a', '', `from #${v.message_seq}`);
    a.href = sessionHref(view.session ? view.session.id : event.session_id, v.message_seq);
    line.append(' (', a, ')');
  }
  body.append(line);
  if (v.reason) body.append(el('p', 'muted', `Reason: ${v.reason}`));
  if (isImage(r)) body.append(thumbnail(r));
  node.append(body);
  return node;
}

// A rewind: the session's view ends at to_seq; the messages it took out stay
// in the log, shown dimmed (markRewound).
function renderRewind(event) {
  const to = (event.rewind || {}).to_seq ?? 0;
  const {node} = eventShell('section', 'rewind', event, 'rewind');
  node.append(el('p', 'compaction-note',
    `Rewound to #${to}: what came after #${to} left the session's view (the log keeps it).`));
  return node;
}

// Dims the shown events a rewind took out of the view: those past its
// to_seq that were not already out.
function markRewound(event) {
  const to = (event.rewind || {}).to_seq ?? 0;
  for (const node of $('log').querySelectorAll('.event[data-seq]')) {
    const seq = Number(node.dataset.seq);
    if (seq > to && seq < event.seq && !node.classList.contains('rewind')) {
      node.classList.add('rewound');
    }
  }
}

function renderEvent(event, context) {
  switch (event.type) {
    case 'rewind':
      return renderRewind(event);
    case 'message':
      return renderMessage(event, context);
    case 'compaction':
      return renderCompaction(event);
    case 'resource_view':
      return renderResourceView(event);
    default: {
      const {node} = eventShell('section', 'other', event, event.type || 'event');
      return node;
    }
  }
}

// ---- The session list ----------------------------------------------------------

const list = {
  filter: 'active',
  facet: {key: '', value: ''},  // a metadata key and value the list is narrowed to
  cursor: null,
  generation: 0,  // a newer load makes an older one's answer stale
  loading: 0,     // loads under way
  held: new Map(),  // session id -> live change that came during a load
  stream: null,
  everLoaded: false,
};

const parentTitles = new Map();  // session id -> Promise<string|null>

function parentTitle(id) {
  if (!parentTitles.has(id)) {
    parentTitles.set(id, api('GET', `/v1/sessions/${enc(id)}`).then(sessionTitle, (e) => {
      if (e instanceof ApiError && e.status === 404) return null;  // the parent was deleted
      throw e;
    }));
  }
  return parentTitles.get(id);
}

// "forked from <parent title> at #seq", the title linking to the parent there.
function forkOrigin(session, className) {
  const p = el('p', className);
  const link = el('a', 'parent-link', session.parent_id);
  link.href = sessionHref(session.parent_id, session.fork_seq);
  p.append('forked from ', link, ` at #${session.fork_seq}`);
  parentTitle(session.parent_id).then((title) => {
    if (title === null) link.replaceWith(el('span', 'muted', `${session.parent_id} (deleted)`));
    else link.textContent = title;
  }).catch(showError);
  return p;
}

function renderSessionItem(s) {
  const li = el('li', 'session-item');
  li.dataset.id = s.id;
  li.dataset.updated = String(s.updated_ms || 0);
  const a = el('a', 'session-link');
  a.href = sessionHref(s.id);
  const top = el('div', 'item-top');
  top.append(el('span', 'item-title', sessionTitle(s)));
  if (s.archived) top.append(el('span', 'badge', 'archived'));
  if (s.metadata && s.metadata.demo === true) top.append(el('span', 'badge demo', 'demo'));
  a.append(top);
  const facets = sessionFacetBadges(s);
  if (facets.length) {
    const row = el('p', 'item-facets');
    row.append(...facets);
    a.append(row);
  }
  // The start of a message as written: shown as the text it stands for.
  const preview = plainText(s.preview);
  if (preview && s.preview !== s.title) a.append(el('p', 'item-preview', preview));
  const meta = el('p', 'item-meta');
  meta.append(timeElement(s.updated_ms), el('span', 'count', plural(s.message_count, 'message')));
  const usage = usageBadge(s.id);
  if (usage) meta.append(usage);
  a.append(meta);
  li.append(a);
  // Outside the session's own link: a link may not hold another.
  if (s.parent_id) li.append(forkOrigin(s, 'item-fork'));
  if (view.session && view.session.id === s.id) li.classList.add('current');
  return li;
}

async function loadSessions(reset) {
  const generation = reset ? ++list.generation : list.generation;
  list.loading++;
  const params = new URLSearchParams({limit: String(kPageSize), archived: list.filter});
  if (list.facet.key) {
    params.set('meta_key', list.facet.key);
    params.set('meta_value', list.facet.value);
  }
  if (!reset && list.cursor) params.set('cursor', list.cursor);
  const button = $('load-more');
  button.disabled = true;
  try {
    const page = await api('GET', `/v1/sessions?${params}`);
    if (generation !== list.generation) return;
    const ul = $('session-list');
    if (reset) ul.replaceChildren();
    for (const s of page.sessions || []) ul.append(renderSessionItem(s));
    learnUsage((page.sessions || []).map((s) => s.id), showUsageInList);
    list.cursor = page.next_cursor || null;
    if (reset && list.filter === 'active' && !list.facet.key) offerImports(page.sessions || [], reloadSessions);
    list.everLoaded = true;
    button.hidden = !list.cursor;
    $('list-empty').hidden = ul.childElementCount > 0;
  } catch (e) {
    showError(e);
  } finally {
    button.disabled = false;
    list.loading--;
    // News that came while the page was read may be newer than what it says.
    if (!list.loading) {
      const held = [...list.held.values()];
      list.held.clear();
      for (const change of held) applyListChange(change);
    }
  }
}

const reloadSessions = () => loadSessions(true);

// Puts what a session cost (list_usage.js) into its item of the list.
function showUsageInList(id) {
  const item = $('session-list').querySelector(`li[data-id="${CSS.escape(id)}"] .item-meta`);
  const badge = usageBadge(id);
  if (!item || !badge) return;
  item.querySelector('.item-usage')?.remove();
  item.append(badge);
}

// A live session's cost changes with its turns: asked again once its
// changes pause for a while, not on every message.
const usageRefresh = new Map();  // session id -> timer
function refreshUsageSoon(id) {
  clearTimeout(usageRefresh.get(id));
  usageRefresh.set(id, setTimeout(() => {
    usageRefresh.delete(id);
    learnUsage([id], showUsageInList);
  }, 2000));
}

// ---- The list, live -------------------------------------------------------------

const inFacet = (s) => !list.facet.key ||
    (s.metadata && typeof s.metadata === 'object' && String(s.metadata[list.facet.key]) === list.facet.value);
const inFilter = (s) => inFacet(s) &&
    (list.filter === 'all' || (list.filter === 'archived') === Boolean(s.archived));

// A session the server says was created or changed: put where the list's
// order (newest update first) wants it, or out when the filter no longer
// takes it. One older than every shown session waits for "Load more".
function upsertSession(s) {
  const ul = $('session-list');
  ul.querySelector(`li[data-id="${CSS.escape(s.id)}"]`)?.remove();
  if (inFilter(s)) {
    const next = [...ul.children].find((li) => Number(li.dataset.updated) < (s.updated_ms || 0));
    if (next) ul.insertBefore(renderSessionItem(s), next);
    else if (!list.cursor) ul.append(renderSessionItem(s));
    refreshUsageSoon(s.id);
  }
  $('list-empty').hidden = ul.childElementCount > 0;
  parentTitles.delete(s.id);
  if (view.session && view.session.id === s.id && view.session.title !== s.title) {
    view.session.title = s.title;
    const h1 = $('session-title');
    if (h1) h1.textContent = sessionTitle(view.session);
  }
}

function applyListChange({session, deletedId}) {
  if (session) return upsertSession(session);
  $('session-list').querySelector(`li[data-id="${CSS.escape(deletedId)}"]`)?.remove();
  $('list-empty').hidden = $('session-list').childElementCount > 0;
}

function listChange(change) {
  const id = change.session ? change.session.id : change.deletedId;
  if (list.loading) list.held.set(id, change);
  else applyListChange(change);
}

// Follows GET /v1/events, which also gives the first reading of the list: on
// each (re)connection the server says "ready" once it watches, and the list
// read then holds everything before.
function followList() {
  const stream = new EventSource(listEventsUrl());
  list.stream = stream;
  const parsed = (handler) => (e) => {
    try {
      handler(JSON.parse(e.data));
    } catch (error) {
      showError(error);
    }
  };
  // Read on each (re)connection: the list shown then holds all that came before.
  stream.addEventListener('ready', () => reloadSessions());
  stream.addEventListener('session', parsed((s) => listChange({session: s})));
  stream.addEventListener('session_deleted', parsed((d) => listChange({deletedId: d.id})));
  stream.addEventListener('error', () => {
    if (!list.everLoaded) reloadSessions();  // without the stream, the list still shows
    // A refusal (too many streams, a token not yet given) closes it: try
    // again later; otherwise the browser reconnects by itself.
    if (stream.readyState === EventSource.CLOSED && list.stream === stream) {
      list.stream = null;
      setTimeout(followList, 5000);
    }
  });
}

function markCurrentInList() {
  for (const li of $('session-list').children) {
    li.classList.toggle('current', Boolean(view.session) && li.dataset.id === view.session.id);
  }
}

// ---- Search ----------------------------------------------------------------------

async function showSearch(query) {
  closeSession();
  $('search-input').value = query;
  const main = $('main');
  const section = el('section', 'search-results');
  section.append(el('h1', '', `Search: ${query}`));
  const status = el('p', 'muted', 'Searching…');
  section.append(status);
  main.replaceChildren(section);
  if (!query.trim()) {
    status.textContent = 'Type words to search for.';
    return;
  }
  const answer = await attempt(() => api('GET', `/v1/search?${new URLSearchParams({q: query, limit: '50'})}`));
  if (!answer || !section.isConnected) return;
  const hits = answer.hits || [];
  status.textContent = hits.length ? plural(hits.length, 'hit') : (answer.note || 'Nothing matched.');
  if (answer.corrected_query) {
    // Some typed word matched nothing: the server searched a near spelling.
    const note = el('p', 'corrected-query');
    note.append('Showing results for ', el('strong', '', answer.corrected_query),
                ` (nothing matched “${query}”).`);
    section.insertBefore(note, status);
  }
  const ol = el('ol', 'hits');
  for (const hit of hits) {
    const li = el('li', `hit kind-${hit.kind}`);
    const linked = hit.session_id && hit.kind !== 'code_write';
    const a = el(linked ? 'a' : 'div', 'hit-link');
    if (linked) a.href = sessionHref(hit.session_id, hit.seq);
    const head = el('div', 'hit-head');
    head.append(el('span', 'item-title', hit.session_title || hit.session_id || hit.file_path || 'code'));
    if (hit.role) head.append(el('span', 'role', hit.role));
    if (hit.kind !== 'message') head.append(el('span', 'badge', hit.kind.replace('_', ' ')));
    if (hit.seq) head.append(el('span', 'seq', `#${hit.seq}`));
    head.append(timeElement(hit.time_ms));
    const snippet = el('p', 'snippet');
    snippet.append(renderHighlighted(hit.snippet, hit.highlights));
    a.append(head);
    if (hit.file_path) a.append(el('p', 'muted', hit.file_path));
    a.append(snippet);
    li.append(a);
    ol.append(li);
  }
  section.append(ol);
}

// ---- A session -------------------------------------------------------------------

const view = {
  session: null,
  timeline: null,      // session_timeline.js: the marks above the log
  lastSeq: 0,
  stream: null,
  context: null,       // {calls}: the tool calls shown, for their results
  checkpoints: null,   // checkpoints.js: the files each message wrote
  drafts: new Map(),   // draft_id -> {node, done, timer}
  generation: 0,       // a newer session opened makes an older one's answers stale
  loading: false,      // reading the stored log, before following it live
  lastMessageAt: 0,    // performance.now() when the last message event arrived
};

function closeSession() {
  view.generation++;
  if (view.stream) view.stream.close();
  view.stream = null;
  view.session = null;
  view.timeline = null;
  view.checkpoints = null;
  view.lastSeq = 0;
  for (const d of view.drafts.values()) clearTimeout(d.timer);
  view.drafts.clear();
  document.body.classList.remove('live');
  markCurrentInList();
}

function sessionHeader(s) {
  const header = el('header', 'session-head');
  const titleRow = el('div', 'title-row');
  const h1 = el('h1', 'session-title', sessionTitle(s));
  h1.id = 'session-title';
  titleRow.append(h1);
  if (s.archived) titleRow.append(el('span', 'badge archived-badge', 'archived'));
  header.append(titleRow);

  const meta = el('p', 'meta');
  meta.append(el('span', 'count', plural(s.message_count, 'message')), ' · created ',
              timeElement(s.created_ms), ' · updated ', timeElement(s.updated_ms), ' · ',
              el('code', 'session-id', s.id));
  header.append(meta);
  if (s.parent_id) header.append(forkOrigin(s, 'fork-origin'));
  const usage = el('div', 'session-usage');
  usage.hidden = true;
  const shownId = s.id;
  showSessionUsage(usage, s.id, () => Boolean(view.session) && view.session.id === shownId);
  header.append(usage);
  if (view.timeline) header.append(view.timeline.node);

  const toolbar = el('div', 'toolbar');
  const rename = el('button', 'rename-button', 'Rename');
  rename.type = 'button';
  const archive = el('button', 'archive-button', s.archived ? 'Unarchive' : 'Archive');
  archive.type = 'button';
  archive.addEventListener('click', () => setArchived(!s.archived));
  const remove = el('button', 'delete-button danger', 'Delete');
  remove.type = 'button';
  remove.title = 'Move to the trash (restore it from the Trash, or Undo)';
  remove.addEventListener('click', () => trashSession(s));
  const exports = el('span', 'exports');
  const base = `/v1/sessions/${enc(s.id)}/export?format=`;
  // The file names the server gives (Content-Disposition); folders come zipped.
  exports.append('Export: ',
                 downloadLink(`${base}snapshot`, `${s.id}.json`, 'snapshot'), ' ',
                 downloadLink(`${base}markdown`, `${s.id}-markdown.zip`, 'Markdown'), ' ',
                 downloadLink(`${base}jsonl`, `${s.id}.jsonl`, 'JSONL'), ' ',
                 downloadLink(`${base}ac-dc`, `${s.id}-ac-dc.zip`, 'ac-dc'), ' ',
                 downloadLink(`${base}agents-kt`, `${s.id}-agents-kt.zip`, 'Agents.KT'));
  toolbar.append(rename, archive, remove, exports);
  header.append(toolbar);

  const form = el('form', 'rename-form');
  form.hidden = true;
  const input = el('input');
  input.name = 'title';
  input.setAttribute('aria-label', 'New title');
  const save = el('button', '', 'Save');
  save.type = 'submit';
  const cancel = el('button', '', 'Cancel');
  cancel.type = 'button';
  form.append(input, save, cancel);
  rename.addEventListener('click', () => {
    form.hidden = false;
    input.value = s.title;
    input.focus();
    input.select();
  });
  cancel.addEventListener('click', () => { form.hidden = true; });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    renameTo(input.value.trim());
  });
  header.append(form);
  return header;
}

function renderHeader() {
  const old = document.querySelector('.session-head');
  if (old && view.session) old.replaceWith(sessionHeader(view.session));
}

async function renameTo(title) {
  const s = view.session;
  if (!s) return;
  const updated = await attempt(() => api('PATCH', `/v1/sessions/${enc(s.id)}`, {title}));
  if (!updated || view.session !== s) return;
  view.session = updated;
  parentTitles.delete(updated.id);
  renderHeader();
  reloadSessions();
}

async function setArchived(archived) {
  const s = view.session;
  if (!s) return;
  const updated = await attempt(() => api('PATCH', `/v1/sessions/${enc(s.id)}`, {archived}));
  if (!updated || view.session !== s) return;
  view.session = updated;
  renderHeader();
  reloadSessions();
}

// "Fork here": asks for the new session's title, offering the parent's with
// the fork point, then forks and opens the fork.
function askForkTitle(seq) {
  const s = view.session;
  if (!s) return;
  $('fork-dialog-text').textContent =
      `A new session will hold "${sessionTitle(s)}" up to #${seq}, then its own messages.`;
  const input = $('fork-title');
  input.value = `${sessionTitle(s)} (fork at ${seq})`;
  ask('fork-dialog').then((ok) => {
    const title = input.value.trim();
    if (ok && title) forkAt(s, seq, title);
  });
  input.focus();
  input.select();
}

async function forkAt(s, seq, title) {
  if (view.session !== s) return;
  const fork = await attempt(() => api('POST', `/v1/sessions/${enc(s.id)}/fork`, {at_seq: seq, title}));
  if (!fork) return;
  location.hash = sessionHref(fork.id);
  reloadSessions();
}

// "Delete": the session goes to the trash at once (DELETE /v1/sessions/ID
// trashes); the notice offers to undo it, and the Trash view keeps it until
// it is restored or erased.
async function trashSession(s) {
  if (view.session !== s) return;
  // Stop following first: the stream would report the session's going as an error.
  closeSession();
  try {
    await api('DELETE', `/v1/sessions/${enc(s.id)}`);
  } catch (e) {
    showError(e);
    route();  // still there: show it again
    return;
  }
  listChange({deletedId: s.id});
  parentTitles.delete(s.id);
  location.hash = '#/';
  showNotice(`"${sessionTitle(s)}" was moved to the trash.`,
             {label: 'Undo', run: () => restoreSession(s.id)});
}

// Takes a session out of the trash (the notice's Undo) and opens it.
async function restoreSession(id) {
  const back = await attempt(() => api('POST', `/v1/trash/${enc(id)}/restore`));
  if (!back) return;
  restored(back);
  showNotice(`"${sessionTitle(back)}" was restored.`);
  location.hash = sessionHref(back.id);
}

// A session back from the trash: in the list again, its title known again.
function restored(session) {
  parentTitles.delete(session.id);
  listChange({session});
}

function nearBottom() {
  const doc = document.scrollingElement || document.documentElement;
  return doc.scrollHeight - doc.scrollTop - doc.clientHeight < 120;
}

// Adds a stored event (from the first read or the live stream) to the log.
function appendEvent(event) {
  if (!view.session || event.seq <= view.lastSeq) return;  // already shown
  const log = $('log');
  const s = view.session;
  const stick = nearBottom();
  log.querySelector('.empty-log')?.remove();
  if (event.type === 'rewind') markRewound(event);
  log.append(renderEvent(event, view.context));
  view.timeline?.add(event);
  view.lastSeq = event.seq;
  if (s.parent_id && event.seq === s.fork_seq) {
    const divider = el('div', 'fork-divider');
    divider.append(forkOrigin(s, ''));
    log.append(divider);
  }
  if (event.type === 'message') {
    view.lastMessageAt = performance.now();
    // A finished draft's message has arrived: its typing bubble goes.
    for (const [id, d] of view.drafts) {
      if (d.done) removeDraft(id);
    }
    if (!view.loading) {
      view.checkpoints?.refresh();
      s.message_count += 1;
      const count = document.querySelector('.session-head .count');
      if (count) count.textContent = plural(s.message_count, 'message');
    }
  }
  // Keep the draft bubbles last.
  for (const d of view.drafts.values()) log.append(d.node);
  if (stick && !view.loading) window.scrollTo(0, document.body.scrollHeight);
}

function removeDraft(id) {
  const d = view.drafts.get(id);
  if (!d) return;
  clearTimeout(d.timer);
  d.node.remove();
  view.drafts.delete(id);
}

// A draft event: the whole text so far of a message being written.
function showDraft(draft) {
  let d = view.drafts.get(draft.draft_id);
  if (!d) {
    const node = el('article', `event msg draft role-${draft.role || 'assistant'}`);
    node.dataset.draft = draft.draft_id;
    d = {node, done: false, timer: 0, updatedAt: draft.done ? 0 : performance.now()};
    view.drafts.set(draft.draft_id, d);
    $('log').append(node);
  }
  if (!draft.done) d.updatedAt = performance.now();
  const stick = nearBottom();
  const head = el('header', 'event-head');
  head.append(el('span', 'role', draft.role || 'assistant'), el('span', 'typing', draft.done ? 'finishing' : 'typing…'));
  if (draft.model) head.append(el('span', 'model', draft.model));
  const parts = el('div', 'parts');
  if (draft.reasoning) parts.append(folded('reasoning', ['Reasoning'], markdownBlock(draft.reasoning)));
  parts.append(markdownBlock(draft.text || ''));
  d.node.replaceChildren(head, parts);
  if (draft.done) {
    // Its message may have come just before this news: then the bubble goes now.
    if (view.lastMessageAt > d.updatedAt) {
      removeDraft(draft.draft_id);
      return;
    }
    // Else its message follows at once; a discarded draft has none, so the bubble goes by itself.
    d.done = true;
    clearTimeout(d.timer);
    d.timer = setTimeout(() => removeDraft(draft.draft_id), 3000);
  }
  if (stick) window.scrollTo(0, document.body.scrollHeight);
}

function follow(sessionId, generation) {
  const stream = new EventSource(eventsUrl(sessionId, view.lastSeq));
  view.stream = stream;
  const onEvent = (e) => {
    if (generation !== view.generation) return;
    try {
      appendEvent(JSON.parse(e.data));
    } catch (error) {
      showError(error);
    }
  };
  for (const type of ['message', 'compaction', 'resource_view', 'rewind']) {
    stream.addEventListener(type, onEvent);
  }
  stream.addEventListener('draft', (e) => {
    if (generation !== view.generation) return;
    try {
      showDraft(JSON.parse(e.data));
    } catch (error) {
      showError(error);
    }
  });
  stream.addEventListener('error', (e) => {
    if (generation !== view.generation) return;
    if (e.data) {  // the server's own "event: error" (the session was deleted...)
      let message = e.data;
      let code = 'stream';
      try {
        ({message, code} = JSON.parse(e.data));
      } catch {
        // Not JSON: show it as it came.
      }
      showError(new ApiError(0, code, `live updates stopped: ${message}`));
      stream.close();
    } else if (stream.readyState === EventSource.CLOSED) {
      showError(new ApiError(0, 'stream_closed',
                             'live updates stopped: the server refused the event stream; reload the page to try again'));
    }
    // Otherwise the browser reconnects by itself, sending the last id it saw.
  });
  stream.addEventListener('open', () => document.body.classList.add('live'));
}

async function openSession(id, focusSeq) {
  if (view.session && view.session.id === id && view.stream) {
    focusEvent(focusSeq);
    return;
  }
  closeSession();
  const generation = view.generation;
  const main = $('main');
  main.replaceChildren(el('p', 'muted loading', 'Loading…'));
  let session;
  try {
    session = await api('GET', `/v1/sessions/${enc(id)}`);
  } catch (e) {
    if (generation === view.generation) main.replaceChildren(el('p', 'muted', 'This session could not be opened.'));
    showError(e);
    return;
  }
  if (generation !== view.generation) return;
  view.session = session;
  view.timeline = createTimeline(session, (seq) => sessionHref(session.id, seq));
  view.context = {calls: new Map()};  // tool_call_id -> the call shown (renderPart)
  view.checkpoints = trackWrittenFiles(session.id, () => generation === view.generation);
  markCurrentInList();
  const article = el('div', 'session');
  const log = el('div', 'log');
  log.id = 'log';
  article.append(sessionHeader(session), log);
  main.replaceChildren(article);

  // The log in pages, so a long session starts showing at once.
  view.loading = true;
  try {
    for (;;) {
      const page = await api('GET', `/v1/sessions/${enc(id)}/events?since=${view.lastSeq}&limit=500`);
      if (generation !== view.generation) return;
      const events = page.events || [];
      for (const event of events) appendEvent(event);
      if (events.length < 500) break;
    }
  } catch (e) {
    showError(e);
  } finally {
    view.loading = false;
  }
  if (generation !== view.generation) return;
  if (!log.childElementCount) log.append(el('p', 'muted empty-log', 'No messages yet.'));
  view.checkpoints.now();
  focusEvent(focusSeq);
  follow(id, generation);
}

function focusEvent(seq) {
  if (!seq) return;
  const node = document.getElementById(`seq-${seq}`);
  if (!node) return;
  node.scrollIntoView({block: 'center'});
  node.classList.remove('focused');
  void node.offsetWidth;  // restart the highlight animation
  node.classList.add('focused');
}

// ---- Addresses ---------------------------------------------------------------------

function showWelcome() {
  closeSession();
  const section = el('section', 'welcome');
  section.append(el('h1', '', 'History'),
                 el('p', 'muted', 'Pick a session on the left, or search everything it holds.'));
  $('main').replaceChildren(section);
}

function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query = ''] = hash.split('?');
  const segments = path.split('/').filter(Boolean).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  for (const [link, name] of [['trash-link', 'trash'], ['usage-link', 'usage'], ['projects-link', 'projects']]) {
    $(link).setAttribute('aria-current', segments[0] === name ? 'page' : 'false');
  }
  if (segments[0] === 's' && segments[1]) {
    openSession(segments[1], Number(segments[2]) || 0);
  } else if (segments[0] === 'search') {
    showSearch(new URLSearchParams(query).get('q') || '');
  } else if (segments[0] === 'trash') {
    closeSession();
    showTrash($('main'), {restored});
  } else if (segments[0] === 'usage' || segments[0] === 'projects') {
    closeSession();
    const generation = view.generation;
    const isShown = () => generation === view.generation;
    if (segments[0] === 'usage') showUsage($('main'), isShown);
    else showProjects($('main'), isShown, chooseFacet);
  } else if (segments[0] === 'file') {
    closeSession();
    const generation = view.generation;
    const path = new URLSearchParams(query).get('path') || '';
    showFileHistory($('main'), path, () => generation === view.generation);
  } else {
    showWelcome();
  }
}

// ---- Start -------------------------------------------------------------------------

function start() {
  onTokenNeeded(askForToken);
  $('banner-close').addEventListener('click', hideBanner);
  $('notice-close').addEventListener('click', hideNotice);
  $('lightbox').addEventListener('click', closeLightbox);
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !$('lightbox').hidden) closeLightbox();
  });
  $('search-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const q = $('search-input').value.trim();
    const target = `#/search?${new URLSearchParams({q})}`;
    if (location.hash === target) route();
    else location.hash = target;
  });
  for (const radio of document.querySelectorAll('input[name="archived"]')) {
    radio.addEventListener('change', () => {
      if (!radio.checked) return;
      list.filter = radio.value;
      reloadSessions();
    });
  }
  $('load-more').addEventListener('click', () => loadSessions(false));
  setUpNavigation();
  setUpFacets((facet) => {
    list.facet = facet;
    reloadSessions();
  }).catch(showError);
  window.addEventListener('hashchange', route);
  followList();
  // Should the stream not say "ready" soon (a proxy that holds it back), the
  // list is read anyway.
  setTimeout(() => {
    if (!list.everLoaded) reloadSessions();
  }, 3000);
  route();
}

start();
