// Search snippets with their matches marked.
//
// The server gives highlights as [begin, end) BYTE offsets into the UTF-8
// snippet; JavaScript strings are indexed in UTF-16 code units. This module
// converts one into the other (a range that begins or ends inside a
// multi-byte character is widened to the whole character) and builds the
// snippet as text nodes and <mark> elements, never as HTML.
//
// Example:
//   hit.append(renderHighlighted('café au lait', [[6, 8]]));  // café <mark>au</mark> lait

// Returns, for each UTF-8 byte offset 0..length of `text`, the UTF-16 index
// of the character that byte belongs to (`starts`), and whether the byte
// begins a character (`boundary`).
export function utf8Offsets(text) {
  const starts = [];
  const boundary = [];
  let index = 0;
  for (const ch of text) {  // iterates by code point
    const cp = ch.codePointAt(0);
    const bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    for (let b = 0; b < bytes; b++) {
      starts.push(index);
      boundary.push(b === 0);
    }
    index += ch.length;
  }
  starts.push(index);
  boundary.push(true);
  return {starts, boundary};
}

// Converts byte ranges into sorted, merged [begin, end) string index ranges.
export function byteRangesToIndices(text, ranges) {
  const {starts, boundary} = utf8Offsets(text);
  const last = starts.length - 1;
  const out = [];
  for (const range of Array.isArray(ranges) ? ranges : []) {
    if (!Array.isArray(range) || range.length < 2) continue;
    let [b, e] = range.map((n) => Math.max(0, Math.min(last, Math.trunc(Number(n)) || 0)));
    if (e <= b) continue;
    const begin = starts[b];
    // An end inside a character takes the whole character.
    while (e < last && !boundary[e]) e++;
    const end = starts[e];
    if (end > begin) out.push([begin, end]);
  }
  out.sort((x, y) => x[0] - y[0]);
  const merged = [];
  for (const r of out) {
    const prev = merged[merged.length - 1];
    if (prev && r[0] <= prev[1]) prev[1] = Math.max(prev[1], r[1]);
    else merged.push([...r]);
  }
  return merged;
}

// A DocumentFragment of `snippet` with each highlighted range in a <mark>.
export function renderHighlighted(snippet, highlights) {
  const text = String(snippet ?? '');
  const fragment = document.createDocumentFragment();
  let at = 0;
  for (const [begin, end] of byteRangesToIndices(text, highlights)) {
    if (begin > at) fragment.append(document.createTextNode(text.slice(at, begin)));
    const mark = document.createElement('mark');
    mark.textContent = text.slice(begin, end);
    fragment.append(mark);
    at = end;
  }
  if (at < text.length) fragment.append(document.createTextNode(text.slice(at)));
  return fragment;
}
