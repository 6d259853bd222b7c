// A small Markdown renderer for message text, which is untrusted.
//
// It builds DOM nodes and puts the message's characters in only as text
// nodes, so nothing a message holds is ever parsed as HTML: "<script>" is
// shown as those nine characters. (This is the "escape first" rule taken to
// its end: there is no HTML string to escape.) Links keep only absolute
// http:, https: and mailto: targets; anything else (javascript:, data:,
// relative paths) stays plain text. Images written as ![alt](url) become
// links: the page never loads anything from outside its own server.
//
// Supported: ATX headings (# .. ######), paragraphs (a single newline is a
// line break, as chat text expects), block quotes, ordered and unordered
// lists (nested by indentation), horizontal rules, fenced code blocks
// (``` or ~~~, the info string's first word as class "language-X"), inline
// code, **strong**, *em*, _em_, ~~strike~~, [links](url), bare http(s) URLs
// and backslash escapes.
//
// Example:
//   node.append(renderMarkdown('## Fix\n\n```cmake\nadd_executable(app a.cc)\n```'));

const kFence = /^( {0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const kHeading = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const kRule = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const kQuote = /^ {0,3}> ?(.*)$/;
const kListItem = /^( *)([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*)|$)/;
const kPunctuation = /[!-/:-@[-`{-~]/;

function el(tag, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
}

const isBlank = (line) => /^\s*$/.test(line);
const indentOf = (line) => /^ */.exec(line)[0].length;

function startsBlock(line) {
  return kFence.test(line) || kHeading.test(line) || kRule.test(line) || kQuote.test(line) ||
         kListItem.test(line);
}

// Removes up to `n` leading spaces.
function dedent(line, n) {
  let i = 0;
  while (i < n && line[i] === ' ') i++;
  return line.slice(i);
}

// Returns the href for an absolute http, https or mailto URL, else null.
export function safeHref(url) {
  // Browsers ignore control characters and spaces inside a scheme
  // ("java\tscript:"); so does this check.
  const compact = url.replace(/[\u0000-\u0020\u007f]/g, '');
  if (!/^(https?:\/\/|mailto:)/i.test(compact)) return null;
  try {
    const parsed = new URL(compact);
    return ['http:', 'https:', 'mailto:'].includes(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

function externalLink(href) {
  const a = el('a');
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer nofollow';
  return a;
}

// [label](url "title") starting at text[i] === '['; null if it is not one.
function parseLink(text, i) {
  let depth = 0;
  let j = i;
  for (; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') {
      j++;
    } else if (c === '[') {
      depth++;
    } else if (c === ']') {
      depth--;
      if (depth === 0) break;
    } else if (c === '\n' && text[j + 1] === '\n') {
      return null;
    }
  }
  if (j >= text.length || text[j + 1] !== '(') return null;
  let k = j + 2;
  let parens = 1;
  for (; k < text.length; k++) {
    const c = text[k];
    if (c === '\\') k++;
    else if (c === '(') parens++;
    else if (c === ')' && --parens === 0) break;
    else if (c === '\n') return null;
  }
  if (k >= text.length) return null;
  let target = text.slice(j + 2, k).trim();
  if (target.startsWith('<')) {
    const close = target.indexOf('>');
    target = close > 0 ? target.slice(1, close) : target;
  } else {
    target = target.split(/\s+/)[0] || '';
  }
  return {label: text.slice(i + 1, j), url: target, end: k + 1};
}

const isWordChar = (c) => c !== undefined && /[\p{L}\p{N}]/u.test(c);
const isSpace = (c) => c === undefined || /\s/.test(c);

// Where the delimiter `delim` that opens at `open` closes, or -1.
function findCloser(text, open, delim) {
  const c = delim[0];
  let from = open + delim.length;
  if (isSpace(text[from])) return -1;
  for (;;) {
    let at = text.indexOf(delim, from);
    if (at < 0) return -1;
    // Inside a run of the same character ("***"), close at its end.
    while (text[at + delim.length] === c) at++;
    const before = text[at - 1];
    const after = text[at + delim.length];
    const innerNotEmpty = at > open + delim.length;
    if (innerNotEmpty && !isSpace(before) && before !== '\\' && !(c === '_' && isWordChar(after))) {
      return at;
    }
    from = at + delim.length;
  }
}

// A bare URL at text[i] (after a non-word character), without the trailing
// punctuation that belongs to the sentence; or null.
function bareUrl(text, i) {
  if (i > 0 && isWordChar(text[i - 1])) return null;
  const m = /^https?:\/\/[^\s<>"'`]+/i.exec(text.slice(i, i + 2048));
  if (!m) return null;
  let url = m[0];
  for (;;) {
    const last = url[url.length - 1];
    if ('.,;:!?\'"'.includes(last)) {
      url = url.slice(0, -1);
    } else if (last === ')' && (url.match(/\(/g) || []).length < (url.match(/\)/g) || []).length) {
      url = url.slice(0, -1);
    } else {
      break;
    }
  }
  return url;
}

// Appends `text` as inline Markdown to `parent`.
function appendInline(parent, text) {
  let buffer = '';
  const flush = () => {
    if (buffer) parent.append(document.createTextNode(buffer));
    buffer = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && kPunctuation.test(text[i + 1])) {
      buffer += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '\n') {
      flush();
      parent.append(el('br'));
      i++;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(text.slice(i))[0];
      let close = text.indexOf(run, i + run.length);
      while (close >= 0 && text[close + run.length] === '`') {
        let end = close;
        while (text[end] === '`') end++;
        close = text.indexOf(run, end);
      }
      if (close < 0) {
        buffer += run;
        i += run.length;
        continue;
      }
      let code = text.slice(i + run.length, close).replace(/\n/g, ' ');
      if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ')) code = code.slice(1, -1);
      flush();
      const node = el('code');
      node.textContent = code;
      parent.append(node);
      i = close + run.length;
      continue;
    }
    if (c === '[' || (c === '!' && text[i + 1] === '[')) {
      const image = c === '!';
      const link = parseLink(text, image ? i + 1 : i);
      if (link) {
        flush();
        const href = safeHref(link.url);
        if (image) {
          // Never loaded: shown as a link to where it lives.
          const label = `image: ${link.label || link.url}`;
          if (href) {
            const a = externalLink(href);
            a.className = 'md-image-link';
            a.textContent = label;
            parent.append(a);
          } else {
            parent.append(document.createTextNode(`[${label}]`));
          }
        } else if (href) {
          const a = externalLink(href);
          appendInline(a, link.label);
          parent.append(a);
        } else {
          appendInline(parent, link.label);
        }
        i = link.end;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && text[i + 4] !== undefined) {
      const url = bareUrl(text, i);
      if (url) {
        const href = safeHref(url);
        if (href) {
          flush();
          const a = externalLink(href);
          a.textContent = url;
          parent.append(a);
          i += url.length;
          continue;
        }
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      const double = text[i + 1] === c;
      const opensWord = c !== '_' || !isWordChar(text[i - 1]);
      const candidates = c === '~' ? (double ? ['~~'] : []) : double ? [c + c, c] : [c];
      let matched = false;
      for (const delim of opensWord ? candidates : []) {
        const close = findCloser(text, i, delim);
        if (close < 0) continue;
        flush();
        const node = el(delim === '~~' ? 'del' : delim.length === 2 ? 'strong' : 'em');
        appendInline(node, text.slice(i + delim.length, close));
        parent.append(node);
        i = close + delim.length;
        matched = true;
        break;
      }
      if (matched) continue;
      // An unmatched run is text, all of it (so "**" does not later open "*").
      const run = /^([*_~])\1*/.exec(text.slice(i))[0];
      buffer += run;
      i += run.length;
      continue;
    }
    buffer += c;
    i++;
  }
  flush();
}

function codeBlock(code, info) {
  const pre = el('pre');
  const node = el('code');
  const language = info.replace(/[^\w+#.-]/g, '');
  if (language) node.className = `language-${language}`;
  node.textContent = code;
  pre.append(node);
  return pre;
}

// Renders `lines[i]`, a list item, and the items that follow it in the same
// list; returns the index after the list.
function parseList(lines, i, parent) {
  const first = kListItem.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const baseIndent = first[1].length;
  const list = el(ordered ? 'ol' : 'ul');
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1) list.start = start;
  }
  while (i < lines.length) {
    const m = kListItem.exec(lines[i]);
    if (!m || m[1].length !== baseIndent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = m[1].length + m[2].length + Math.min((m[3] || ' ').length, 4);
    const itemLines = [m[4] || ''];
    i++;
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) {
        const next = lines[i + 1];
        if (next !== undefined && !isBlank(next) && indentOf(next) > baseIndent) {
          itemLines.push('');
          i++;
          continue;
        }
        break;
      }
      if (indentOf(line) > baseIndent) {
        itemLines.push(dedent(line, Math.min(contentIndent, indentOf(line))));
        i++;
        continue;
      }
      if (!startsBlock(line)) {  // a lazy continuation of the item's paragraph
        itemLines.push(line);
        i++;
        continue;
      }
      break;
    }
    const li = el('li');
    parseBlocks(itemLines, li);
    // An item without blank lines ("- one line") holds its text directly, not in a <p>.
    if (!itemLines.includes('')) {
      for (const p of [...li.children].filter((child) => child.nodeName === 'P')) p.replaceWith(...p.childNodes);
    }
    list.append(li);
    let j = i;
    while (j < lines.length && isBlank(lines[j])) j++;
    const after = j < lines.length ? kListItem.exec(lines[j]) : null;
    if (j > i && after && after[1].length === baseIndent) i = j;
  }
  parent.append(list);
  return i;
}

function parseBlocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (isBlank(line)) {
      i++;
    } else if ((m = kFence.exec(line))) {
      const indent = m[1].length;
      const fence = m[2];
      const closing = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`);
      const body = [];
      i++;
      while (i < lines.length && !closing.test(lines[i])) body.push(dedent(lines[i++], indent));
      i++;  // the closing fence (or the end of the text)
      parent.append(codeBlock(body.join('\n'), m[3]));
    } else if ((m = kHeading.exec(line))) {
      const heading = el(`h${m[1].length}`);
      appendInline(heading, m[2] || '');
      parent.append(heading);
      i++;
    } else if (kRule.test(line)) {
      parent.append(el('hr'));
      i++;
    } else if (kQuote.test(line)) {
      const inner = [];
      while (i < lines.length && (m = kQuote.exec(lines[i]))) {
        inner.push(m[1]);
        i++;
      }
      const quote = el('blockquote');
      parseBlocks(inner, quote);
      parent.append(quote);
    } else if (kListItem.test(line) && (kListItem.exec(line)[4] || '').trim() !== '' ) {
      i = parseList(lines, i, parent);
    } else {
      const paragraph = [];
      while (i < lines.length && !isBlank(lines[i]) && (paragraph.length === 0 || !startsBlock(lines[i]))) {
        paragraph.push(lines[i].replace(/^[ \t]+/, ''));
        i++;
      }
      const p = el('p');
      appendInline(p, paragraph.join('\n').replace(/[ \t]+$/, ''));
      parent.append(p);
    }
  }
}

// Returns a DocumentFragment holding `text` rendered as Markdown.
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  parseBlocks(String(text ?? '').replace(/\r\n?/g, '\n').split('\n'), fragment);
  return fragment;
}
