// The usage page (#/usage): what the history cost and how many tokens it
// took, over time, by model or by project, from GET /v1/usage. Each turn is
// priced by the server at the price of its day (docs/usage.md); a fork's
// inherited turns are counted once, in the session that made them. Days
// for a short period, months for a long one.

import {api, enc} from './api.js';
import {kSeriesColours, stackedBars} from './bar_chart.js';
import {projectName} from './list_facets.js';
import {$, attempt, el, plural} from './ui.js';
import {allTokens, money, tokens, unpricedNote} from './usage_format.js';

const kPeriods = [['30', 'Last 30 days'], ['90', 'Last 90 days'], ['365', 'Last year'], ['all', 'All time']];
const kTopSessions = 10;
const kDay = 86400000;

const state = {period: '30', by: 'model', measure: 'cost'};

const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);

// The columns of the chart: every day (or month) of the period, oldest first,
// so quiet days show as gaps.
function columnsFor(period, rows, unit) {
  const today = Date.now();
  const first = period === 'all'
      ? Math.min(...rows.map((r) => Date.parse(unit === 'month' ? `${r.month}-01` : r.day)), today)
      : today - (Number(period) - 1) * kDay;
  const out = [];
  if (unit === 'month') {
    const d = new Date(first);
    d.setUTCDate(1);
    while (d.getTime() <= today) {
      out.push(d.toISOString().slice(0, 7));
      d.setUTCMonth(d.getUTCMonth() + 1);
    }
  } else {
    for (let t = first; t <= today; t += kDay) out.push(isoDay(t));
  }
  return out;
}

const measureOf = (row) => (state.measure === 'cost' ? row.cost_usd || 0 : allTokens(row));
const formatMeasure = (v) => (state.measure === 'cost' ? money(v) : tokens(v));
const nameOf = (row) => (state.by === 'model' ? row.model || '(no model)' : row.project ? projectName(row.project) : '(no project)');

// Series for the chart: the seven largest names, then "other".
function seriesOf(rows, columns, unit) {
  const index = new Map(columns.map((c, i) => [c, i]));
  const byName = new Map();
  for (const row of rows) {
    const i = index.get(unit === 'month' ? row.month : row.day);
    if (i === undefined) continue;
    const name = nameOf(row);
    if (!byName.has(name)) byName.set(name, {name, values: new Array(columns.length).fill(0), total: 0});
    const s = byName.get(name);
    s.values[i] += measureOf(row);
    s.total += measureOf(row);
  }
  const ranked = [...byName.values()].filter((s) => s.total > 0).sort((a, b) => b.total - a.total);
  const kept = ranked.slice(0, kSeriesColours - 1);
  const rest = ranked.slice(kSeriesColours - 1);
  if (rest.length) {
    const other = {name: `${rest.length} others`, values: new Array(columns.length).fill(0), colour: kSeriesColours - 1};
    for (const s of rest) s.values.forEach((v, i) => { other.values[i] += v; });
    kept.push(other);
  }
  return kept;
}

function legend(series) {
  const ul = el('ul', 'chart-legend');
  series.forEach((s, k) => {
    const li = el('li');
    li.append(el('span', `swatch series-${s.colour ?? k}`), s.name);
    ul.append(li);
  });
  return ul;
}

function totalsTable(rows, keyOf, heading) {
  const sums = new Map();
  for (const row of rows) {
    const key = keyOf(row);
    const s = sums.get(key) || {key, turns: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, unpriced_turns: 0};
    for (const f of ['turns', 'input_tokens', 'output_tokens', 'cost_usd', 'unpriced_turns']) s[f] += row[f] || 0;
    sums.set(key, s);
  }
  const table = el('table', 'usage-table');
  const head = el('tr');
  for (const h of [heading, 'Turns', 'Tokens in', 'Tokens out', 'Cost']) head.append(el('th', '', h));
  table.append(head);
  for (const s of [...sums.values()].sort((a, b) => b.cost_usd - a.cost_usd || b.turns - a.turns)) {
    const tr = el('tr');
    const cost = el('td', 'num', money(s.cost_usd));
    if (s.unpriced_turns) cost.title = unpricedNote(s);
    tr.append(el('td', '', s.key), el('td', 'num', s.turns), el('td', 'num', tokens(s.input_tokens)),
              el('td', 'num', tokens(s.output_tokens)), cost);
    table.append(tr);
  }
  return table;
}

function choice(name, options, current, onChange) {
  const select = el('select');
  select.setAttribute('aria-label', name);
  for (const [value, label] of options) {
    const o = el('option', '', label);
    o.value = value;
    o.selected = value === current;
    select.append(o);
  }
  select.addEventListener('change', () => onChange(select.value));
  return select;
}

async function topSessions(params) {
  const answer = await api('GET', `/v1/usage?${new URLSearchParams({...params, group: 'session'})}`);
  const rows = (answer.rows || []).filter((r) => r.cost_usd > 0 || r.turns > 0)
      .sort((a, b) => b.cost_usd - a.cost_usd || b.turns - a.turns).slice(0, kTopSessions);
  const ol = el('ol', 'usage-sessions');
  for (const row of rows) {
    const li = el('li');
    const a = el('a', '', row.session_id);
    a.href = `#/s/${enc(row.session_id)}`;
    li.append(a, el('span', 'muted', ` ${money(row.cost_usd)} · ${plural(row.turns, 'turn')}`));
    ol.append(li);
    // Titles one by one: at most ten small reads.
    api('GET', `/v1/sessions/${enc(row.session_id)}`).then((s) => {
      a.textContent = s.title || s.preview || row.session_id;
    }, () => {});
  }
  return rows.length ? ol : el('p', 'muted', 'No session used tokens in this period.');
}

async function render(section, isShown) {
  const unit = state.period === 'all' || Number(state.period) > 120 ? 'month' : 'day';
  const params = {};
  if (state.period !== 'all') params.since = isoDay(Date.now() - (Number(state.period) - 1) * kDay);
  const group = `${unit},${state.by}`;
  const answer = await attempt(() => api('GET', `/v1/usage?${new URLSearchParams({...params, group})}`));
  if (!answer || !isShown()) return;
  const rows = answer.rows || [];
  const total = answer.total || {};
  const body = el('div', 'usage-body');
  const headline = el('p', 'usage-headline');
  headline.append(el('strong', 'usage-total-cost', money(total.cost_usd)), ' · ',
                  `${tokens(allTokens(total))} tokens · ${plural(total.turns || 0, 'turn')}`);
  if (total.unpriced_turns) headline.append(' · ', el('span', 'muted', unpricedNote(total)));
  body.append(headline);
  if (!rows.length) {
    body.append(el('p', 'muted', 'No usage recorded in this period. Usage comes with each turn ' +
                                 'an agent or an import records (docs/usage.md).'));
  } else {
    const columns = columnsFor(state.period, rows, unit);
    const series = seriesOf(rows, columns, unit);
    const what = state.measure === 'cost' ? 'Cost' : 'Tokens';
    body.append(el('h2', '', `${what} by ${unit} and ${state.by}`));
    const chart = el('div', 'chart-box');
    chart.append(stackedBars(columns, series, formatMeasure,
                             {label: `${what} by ${unit} and ${state.by}`, fit: section.clientWidth}));
    body.append(chart, legend(series));
    body.append(el('h2', '', state.by === 'model' ? 'By model' : 'By project'));
    body.append(totalsTable(rows, nameOf, state.by === 'model' ? 'Model' : 'Project'));
    body.append(el('h2', '', 'Sessions that cost most'));
    const top = await attempt(() => topSessions(params));
    if (top && isShown()) body.append(top);
  }
  if (!isShown()) return;
  section.querySelector('.usage-body')?.remove();
  section.append(body);
}

// Shows the usage page in `main`; `isShown()` says whether it still is.
export function showUsage(main, isShown) {
  const section = el('section', 'usage-page');
  section.append(el('h1', '', 'Usage and cost'));
  const controls = el('div', 'usage-controls');
  const again = () => render(section, isShown);
  controls.append(
      choice('Period', kPeriods, state.period, (v) => { state.period = v; again(); }),
      choice('Split by', [['model', 'By model'], ['project', 'By project']], state.by, (v) => { state.by = v; again(); }),
      choice('Measure', [['cost', 'Cost'], ['tokens', 'Tokens']], state.measure, (v) => { state.measure = v; again(); }));
  section.append(controls);
  main.replaceChildren(section);
  $('usage-link')?.setAttribute('aria-current', 'page');
  return again();
}
