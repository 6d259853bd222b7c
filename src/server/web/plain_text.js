// Markdown as the plain text it stands for, for one-line displays: a
// session's preview in the list. The preview is the start of a message as
// written, so "**Fix** the `parser`" would otherwise show its asterisks and
// backticks. (Search snippets arrive plain from the server, their highlight
// ranges fitted to the plain text.)
//
// Returns a string; the caller puts it in a text node, never in HTML.
//
// Example:
//   plainText('## Fix\n**the** [docs](https://x.example) `a*b`')  // 'Fix the docs a*b'

// Inline code first, so what it holds keeps its characters.
const kCode = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;

// A backslash-escaped character is text: it is hidden from the marker rules
// as a private-use character and given back at the end.
const hide = (text) => text.replace(/\\([!-/:-@[-`{-~])/g,
                                    (_, c) => String.fromCharCode(0xe000 + c.charCodeAt(0)));
const unhide = (text) => text.replace(/[\ue000-\ue07f]/g,
                                      (c) => String.fromCharCode(c.charCodeAt(0) - 0xe000));

function plainInline(text) {
  return text
    .replace(/(^|\s)#{1,6}[ \t]+/g, '$1')              // a heading's hashes, where a line began
    .replace(/!\[([^\]]*)\]\([^)\s]*\)/g, '$1')       // images: their alt text
    .replace(/\[([^\]]+)\]\([^)\s]*\)/g, '$1')        // links: their text
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2')  // strong
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '$1')         // strikethrough
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?![\w*])/g, '$1$2')  // *em*
    .replace(/(^|[^\w])_(?=\S)([^_]*?\S)_(?!\w)/g, '$1$2')        // _em_ (not snake_case)
    // What is left of an emphasis the preview cut in half: doubled markers
    // touching a word are never meant as text.
    .replace(/\*{2,}(?=\S)|(?<=\S)\*{2,}/g, '');
}

// Per line: block markers (headings, quotes, list bullets, fences) go; the
// lines then join with spaces.
export function plainText(markdown) {
  const lines = String(markdown ?? '').split(/\r?\n/).map((line) => line
    .replace(/^ {0,3}(`{3,}|~{3,}).*$/, '')
    .replace(/^ {0,3}#{1,6}(?:[ \t]+|$)/, '')
    .replace(/^ {0,3}(?:>[ \t]?)+/, '')
    .replace(/^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+/, ''));
  const joined = hide(lines.join(' '));
  let out = '';
  let at = 0;
  for (const m of joined.matchAll(kCode)) {
    out += plainInline(joined.slice(at, m.index)) + m[2];
    at = m.index + m[0].length;
  }
  out += plainInline(joined.slice(at));
  return unhide(out).replace(/\s+/g, ' ').trim();
}
