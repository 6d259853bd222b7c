// A session at a glance, above its log: one mark per event in order, coloured
// by what happened (a user's turn, an answer, a tool call and its result, a
// compaction, a rewind, a resource shown again), the point a fork left its
// parent, and the counts beside. A mark links to its event; a rewind dims the
// marks it took out of the view, as the log dims their events. docs/web.md
// says what it shows.

import {el, plural} from './ui.js';

// What a mark stands for, by kind: the words of its tooltip and of the counts.
const kKinds = {
  user: {label: 'user turn', count: 'turn'},
  assistant: {label: 'answer', count: 'answer'},
  tool: {label: 'tool call', count: 'tool call'},
  result: {label: 'tool result', count: ''},
  compaction: {label: 'compaction', count: 'compaction'},
  rewind: {label: 'rewind', count: 'rewind'},
  view: {label: 'resource shown again', count: 'resource view'},
  other: {label: 'event', count: ''},
};

function messageKind(message) {
  const parts = message.parts || [];
  if (parts.some((p) => p.type === 'tool_call')) return 'tool';
  if (message.role === 'tool' || (parts.length && parts.every((p) => p.type === 'tool_result'))) {
    return 'result';
  }
  if (message.role === 'user') return 'user';
  if (message.role === 'assistant') return 'assistant';
  return 'other';
}

export function eventKind(event) {
  switch (event.type) {
    case 'message':
      return messageKind(event.message || {});
    case 'compaction':
      return 'compaction';
    case 'rewind':
      return 'rewind';
    case 'resource_view':
      return 'view';
    default:
      return 'other';
  }
}

const toolCallsIn = (event) =>
  event.type === 'message' ? ((event.message || {}).parts || []).filter((p) => p.type === 'tool_call').length : 0;

// The timeline of `session`; `hrefOf(seq)` is the address of one of its
// events. Returns {node, add(event)}: add each event as the log shows it.
export function createTimeline(session, hrefOf) {
  const node = el('nav', 'timeline');
  node.setAttribute('aria-label', 'Timeline of the session');
  const track = el('div', 'timeline-track');
  const counts = el('p', 'timeline-counts muted');
  node.append(track, counts);
  const tally = new Map();  // counted word -> how many
  let forked = false;

  const count = (word, n = 1) => {
    if (word && n) tally.set(word, (tally.get(word) || 0) + n);
  };
  const showCounts = () => {
    const words = [];
    for (const kind of Object.values(kKinds)) {
      if (kind.count && tally.get(kind.count)) words.push(plural(tally.get(kind.count), kind.count));
    }
    if (forked) words.push(`forked at #${session.fork_seq}`);
    counts.textContent = words.join(' · ');
  };

  function add(event) {
    const kind = eventKind(event);
    const mark = el('a', `tl-mark tl-${kind}`);
    mark.href = hrefOf(event.seq);
    mark.dataset.seq = String(event.seq);
    const calls = toolCallsIn(event);
    mark.title = `#${event.seq} ${kKinds[kind].label}${calls > 1 ? ` (${calls} calls)` : ''}`;
    mark.setAttribute('aria-label', mark.title);
    track.append(mark);
    count(kKinds[kind].count, kind === 'tool' ? calls : 1);
    if (kind === 'rewind') {
      const to = (event.rewind || {}).to_seq ?? 0;
      for (const m of track.querySelectorAll('.tl-mark')) {
        const seq = Number(m.dataset.seq);
        if (seq > to && seq < event.seq) m.classList.add('tl-rewound');
      }
    }
    if (session.parent_id && event.seq === session.fork_seq) {
      const point = el('span', 'tl-fork');
      point.title = `This fork starts after #${session.fork_seq}; what is before is its parent's`;
      track.append(point);
      forked = true;
    }
    showCounts();
  }
  return {node, add};
}
