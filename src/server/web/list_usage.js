// The cost and models of the sessions the list shows, added to their items
// after the page of the list arrives: one GET /v1/usage?group=session,model
// for the whole page, never one per session. Sessions with no usage show
// nothing; a server that cannot say leaves the list as it was.

import {api} from './api.js';
import {el} from './ui.js';
import {money} from './usage_format.js';

const known = new Map();  // session id -> {cost, models, unpriced}

// The model, cost line of a session already asked about, or null.
export function usageBadge(sessionId) {
  const u = known.get(sessionId);
  if (!u || (!u.models.length && !u.cost)) return null;
  const span = el('span', 'item-usage');
  const first = u.models[0];
  if (first) span.append(el('span', 'item-model', u.models.length > 1 ? `${first} +${u.models.length - 1}` : first));
  if (u.cost > 0 || !u.unpriced) span.append(el('span', 'item-cost', money(u.cost)));
  span.title = u.models.join(', ');
  return span;
}

// Asks the usage of `ids` (at most 500) and calls `decorate(id)` for each
// session it learnt about.
export async function learnUsage(ids, decorate) {
  if (!ids.length) return;
  let answer;
  try {
    const params = new URLSearchParams({group: 'session,model', session: ids.slice(0, 500).join(',')});
    answer = await api('GET', `/v1/usage?${params}`);
  } catch {
    return;
  }
  const bySession = new Map();
  for (const row of answer.rows || []) {
    const u = bySession.get(row.session_id) || {cost: 0, models: [], turns: new Map(), unpriced: 0};
    u.cost += row.cost_usd || 0;
    u.unpriced += row.unpriced_turns || 0;
    if (row.model) u.turns.set(row.model, (u.turns.get(row.model) || 0) + (row.turns || 0));
    bySession.set(row.session_id, u);
  }
  for (const [id, u] of bySession) {
    // The model that served most turns first.
    const models = [...u.turns.entries()].sort((a, b) => b[1] - a[1]).map(([m]) => m);
    known.set(id, {cost: u.cost, models, unpriced: u.unpriced});
    decorate(id);
  }
}
