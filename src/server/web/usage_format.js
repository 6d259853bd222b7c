// How usage reads wherever the page shows it: dollars, token counts, and the
// words for turns no price covers. The server prices each turn
// (docs/usage.md); the page only adds up and writes.

export function money(usd) {
  if (!Number.isFinite(usd) || usd <= 0) return '$0';
  if (usd < 0.01) return '<$0.01';
  if (usd < 100) return `$${usd.toFixed(2)}`;
  return `$${Math.round(usd).toLocaleString('en-US')}`;
}

export function tokens(n) {
  if (!Number.isFinite(n) || n <= 0) return '0';
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)}k`;
  if (n < 1e9) return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)}M`;
  return `${(n / 1e9).toFixed(1)}B`;
}

// All the tokens of a usage row: the input (which counts cached reads and
// cache writes) and the output (which counts reasoning).
export const allTokens = (row) => (row.input_tokens || 0) + (row.output_tokens || 0);

export const unpricedNote = (row) =>
  row.unpriced_turns ? `${row.unpriced_turns} turn${row.unpriced_turns === 1 ? '' : 's'} with no known price` : '';
