// What one session cost, in its header: the money and tokens of its own
// turns (a fork's inherited turns are its parent's, counted there), the
// models that served them, and a bar per turn. Asked from GET
// /v1/sessions/{id}/usage?turns=1; a session with no usage recorded shows
// nothing.

import {api, enc} from './api.js';
import {stackedBars} from './bar_chart.js';
import {el} from './ui.js';
import {allTokens, money, tokens, unpricedNote} from './usage_format.js';

// Each turn that recorded usage: seq, time, model, tokens and cost_usd
// (null when no price covers its model).
const turnsOf = (report) => (Array.isArray(report.per_turn) ? report.per_turn : []);

function summary(report) {
  const total = report.total || {};
  const models = (report.by_model || []).map((m) => m.model).filter(Boolean);
  const line = el('p', 'session-usage-line');
  line.append(el('strong', 'usage-cost', money(report.cost_usd)), ' · ',
              el('span', 'usage-tokens', `${tokens(total.input_tokens)} tokens in, ${tokens(total.output_tokens)} out`));
  if (total.cached_tokens) line.append(` (${tokens(total.cached_tokens)} from cache)`);
  if (models.length) line.append(' · ', el('span', 'usage-models', models.join(', ')));
  const unpriced = unpricedNote(report);
  if (unpriced) line.append(' · ', el('span', 'muted', unpriced));
  return line;
}

// Fills `node` (an empty <div>) for session `id`; `stillShown()` says whether
// the page still shows that session when the answer comes.
export async function showSessionUsage(node, id, stillShown) {
  let report;
  try {
    report = await api('GET', `/v1/sessions/${enc(id)}/usage?turns=1`);
  } catch {
    return;  // usage is an extra: the session reads without it
  }
  if (!stillShown() || !report) return;
  const turns = turnsOf(report);
  if (!report.total || (!allTokens(report.total) && !turns.length)) return;
  node.replaceChildren(summary(report));
  if (turns.length > 1) {
    const chart = stackedBars(turns.map((t) => `#${t.seq}`),
                              [{name: 'cost', values: turns.map((t) => t.cost_usd || 0)}], money,
                              {height: 70, label: 'Cost of each turn', fit: 420});
    const box = el('div', 'session-usage-chart');
    box.append(chart);
    node.append(box);
  }
  node.hidden = false;
}
