// Narrowing the session list to one source (Claude Code, Codex, ...) or one
// project: the choices come from GET /v1/facets, with how many sessions
// each has; the list then asks /v1/sessions with meta_key and meta_value.
// Each session of the list also shows its source, project and git branch. docs/web.md
// says what it does.

import {api} from './api.js';
import {$, el} from './ui.js';

// What the sources are called where people see them.
const kSourceNames = {
  'claude-code': 'Claude Code',
  'codex': 'Codex',
  'chatgpt': 'ChatGPT',
  'claude-ai': 'Claude.ai',
  'ac-dc': 'ac-dc',
  'agents-kt': 'agents-kt',
  'pixir': 'pixir',
  'extremis': 'extremis',
  'snapshot': 'snapshot',
};

export const sourceName = (value) => kSourceNames[value] || value;

// The last folder of a project's path: what it is usually called.
export function projectName(path) {
  const parts = String(path).split(/[\\/]+/).filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path);
}

function metadataOf(session) {
  return session.metadata && typeof session.metadata === 'object' ? session.metadata : {};
}

// The source and project badges of a session of the list (none it lacks).
export function sessionFacetBadges(session) {
  const meta = metadataOf(session);
  const out = [];
  if (typeof meta.source === 'string' && meta.source) {
    out.push(el('span', 'chip chip-source', sourceName(meta.source)));
  }
  const project = typeof meta.project === 'string' && meta.project ? meta.project
                : typeof meta.cwd === 'string' ? meta.cwd : '';
  if (project) {
    const chip = el('span', 'chip chip-project', projectName(project));
    chip.title = project;
    out.push(chip);
  }
  if (typeof meta.git_branch === 'string' && meta.git_branch) {
    const chip = el('span', 'chip chip-branch', meta.git_branch);
    chip.title = `git branch ${meta.git_branch}`;
    out.push(chip);
  }
  return out;
}

// Narrows the list to `facet` ({key, value}) as if it had been picked in
// the list's choice, adding the choice when the list had not offered it.
export function chooseFacet(facet) {
  const select = $('list-facet');
  const value = `${facet.key}\u0000${facet.value}`;
  if (![...select.options].some((o) => o.value === value)) {
    const option = el('option', '', facet.key === 'project' ? projectName(facet.value) : sourceName(facet.value));
    option.value = value;
    select.append(option);
  }
  select.value = value;
  $('list-facet-row').hidden = false;
  select.dispatchEvent(new Event('change'));
}

// Fills the list's "Source or project" choice and calls `onChange({key,
// value})` (both empty for every session) when it changes. Hidden when the
// store has neither.
export async function setUpFacets(onChange) {
  const select = $('list-facet');
  select.addEventListener('change', () => {
    const [key, ...rest] = select.value.split('\u0000');
    onChange({key: key || '', value: rest.join('\u0000')});
  });
  const facets = await api('GET', '/v1/facets');
  const sources = facets.sources || [];
  const projects = facets.projects || [];
  const options = [el('option', '', 'All sources and projects')];
  options[0].value = '';
  const group = (label, entries, name) => {
    if (entries.length === 0) return;
    const g = el('optgroup');
    g.label = label;
    for (const f of entries) {
      const option = el('option', '', `${name(f.value)} (${f.sessions})`);
      option.value = `${f.key}\u0000${f.value}`;
      option.title = f.value;
      g.append(option);
    }
    options.push(g);
  };
  group('Source', sources, sourceName);
  group('Project', projects, projectName);
  select.replaceChildren(...options);
  $('list-facet-row').hidden = sources.length + projects.length === 0;
}
