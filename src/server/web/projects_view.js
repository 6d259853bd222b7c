// The history grouped (#/projects): each project and each source (Claude
// Code, Codex, ...) with how many sessions it has, what it cost, and its
// latest sessions when opened; "Show in the list" narrows the list to it.
// Counts come from GET /v1/facets, costs from GET /v1/usage?group=project,
// sessions from GET /v1/sessions?meta_key=...&meta_value=... (read when a
// group is opened, so a store with many projects reads little).

import {api, enc} from './api.js';
import {projectName, sourceName} from './list_facets.js';
import {$, attempt, el, plural, timeElement} from './ui.js';
import {money} from './usage_format.js';

const kShownGroups = 60;
const kOpenAtFirst = 3;
const kSessionsPerGroup = 8;

async function fillGroup(details, facet) {
  const params = new URLSearchParams({limit: String(kSessionsPerGroup), archived: 'all',
                                      meta_key: facet.key, meta_value: facet.value});
  const page = await attempt(() => api('GET', `/v1/sessions?${params}`));
  if (!page) return;
  const ul = el('ul', 'group-sessions');
  for (const s of page.sessions || []) {
    const li = el('li');
    const a = el('a', '', s.title || s.preview || s.id);
    a.href = `#/s/${enc(s.id)}`;
    const branch = s.metadata && typeof s.metadata.git_branch === 'string' ? s.metadata.git_branch : '';
    li.append(a, ' ', timeElement(s.updated_ms));
    if (branch) li.append(' ', el('span', 'chip chip-branch', branch));
    ul.append(li);
  }
  details.querySelector('.group-sessions')?.remove();
  details.append(ul);
}

function group(facet, name, cost, showInList, open) {
  const details = el('details', 'facet-group');
  details.dataset.key = facet.key;
  details.dataset.value = facet.value;
  const summary = el('summary');
  summary.append(el('span', 'group-name', name), ' ',
                 el('span', 'muted', plural(facet.sessions, 'session')));
  if (cost > 0) summary.append(' ', el('span', 'group-cost', money(cost)));
  details.append(summary);
  if (facet.key === 'project') details.append(el('p', 'muted group-path', facet.value));
  const show = el('button', 'show-in-list', 'Show in the list');
  show.type = 'button';
  show.addEventListener('click', () => showInList(facet));
  details.append(show);
  let filled = false;
  details.addEventListener('toggle', () => {
    if (details.open && !filled) {
      filled = true;
      fillGroup(details, facet);
    }
  });
  details.open = open;
  return details;
}

// Shows the grouped history in `main`; `showInList({key, value})` narrows
// the session list to one group.
export async function showProjects(main, isShown, showInList) {
  const section = el('section', 'projects-page');
  section.append(el('h1', '', 'Projects and sources'));
  const status = el('p', 'muted', 'Reading…');
  section.append(status);
  main.replaceChildren(section);
  const facets = await attempt(() => api('GET', '/v1/facets'));
  if (!facets || !isShown()) return;
  let costs = new Map();
  try {
    const usage = await api('GET', '/v1/usage?group=project');
    costs = new Map((usage.rows || []).map((r) => [r.project, r.cost_usd || 0]));
  } catch {
    // Costs are an extra: the groups read without them.
  }
  if (!isShown()) return;
  const projects = facets.projects || [];
  const sources = facets.sources || [];
  status.textContent = projects.length + sources.length
      ? `${plural(projects.length, 'project')} and ${plural(sources.length, 'source')}` +
        (facets.partial ? ` among the ${facets.sessions_read} most recent sessions` : '')
      : 'No session names its project or source yet. Imported sessions do.';
  if (projects.length) {
    section.append(el('h2', '', 'By project'));
    projects.slice(0, kShownGroups).forEach((f, i) =>
      section.append(group(f, projectName(f.value), costs.get(f.value) || 0, showInList, i < kOpenAtFirst)));
    if (projects.length > kShownGroups) {
      section.append(el('p', 'muted', `${projects.length - kShownGroups} more: pick them in the list's filter.`));
    }
  }
  if (sources.length) {
    section.append(el('h2', '', 'By source'));
    for (const f of sources) section.append(group(f, sourceName(f.value), 0, showInList, false));
  }
  $('projects-link')?.setAttribute('aria-current', 'page');
}
