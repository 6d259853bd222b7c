// A small Markdown renderer that builds DOM nodes and never parses HTML:
// message text is untrusted, so every character of it ends up in a text
// node. Supports what chat transcripts use: fenced code blocks (with a
// language-* class), headings, lists, block quotes, paragraphs, inline code,
// **bold**, *emphasis*, and [links](https://...) to http(s) and mailto only.

const SAFE_LINK = /^(https?:|mailto:)/i;

// Inline spans of one line of text, appended to `parent`.
function renderInline(text, parent) {
  // Tokens: `code`, **bold**, *em* or _em_, [label](url).
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) parent.append(text.slice(at, m.index));
    let node;
    if (m[1] !== undefined) {
      node = document.createElement('code');
      node.textContent = m[1];
    } else if (m[2] !== undefined) {
      node = document.createElement('strong');
      renderInline(m[2], node);
    } else if (m[3] !== undefined || m[4] !== undefined) {
      node = document.createElement('em');
      renderInline(m[3] ?? m[4], node);
    } else if (SAFE_LINK.test(m[6])) {
      node = document.createElement('a');
      node.href = m[6];
      node.rel = 'noopener noreferrer';
      node.target = '_blank';
      node.textContent = m[5];
    } else {
      node = document.createTextNode(m[0]);  // not a link we follow: shown as typed
    }
    parent.append(node);
    at = m.index + m[0].length;
  }
  if (at < text.length) parent.append(text.slice(at));
}

// Lines joined as one paragraph, with line breaks kept.
function paragraph(lines) {
  const p = document.createElement('p');
  lines.forEach((line, i) => {
    if (i > 0) p.append(document.createElement('br'));
    renderInline(line, p);
  });
  return p;
}

// Renders `text` into a new <div class="markdown">.
export function renderMarkdown(text) {
  const root = document.createElement('div');
  root.className = 'markdown';
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) root.append(paragraph(para));
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+#.-]*)/);
    if (fence) {
      flush();
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++;  // the closing fence (or the end)
      const pre = document.createElement('pre');
      const code = document.createElement('code');
      if (fence[2]) code.className = 'language-' + fence[2];
      code.textContent = body.join('\n');
      pre.append(code);
      root.append(pre);
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      flush();
      const h = document.createElement('h' + Math.min(heading[1].length + 2, 6));
      renderInline(heading[2], h);
      root.append(h);
      i++;
      continue;
    }
    const item = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      const list = document.createElement(ordered ? 'ol' : 'ul');
      while (i < lines.length) {
        const m = lines[i].match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        const li = document.createElement('li');
        renderInline(m[2], li);
        list.append(li);
        i++;
      }
      root.append(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ''));
      const q = document.createElement('blockquote');
      q.append(paragraph(quoted));
      root.append(q);
      continue;
    }
    if (line.trim() === '') flush();
    else para.push(line);
    i++;
  }
  flush();
  return root;
}

// The snippet with its highlighted byte ranges (of its UTF-8 bytes) wrapped
// in <mark>, as nodes appended to `parent`.
export function renderHighlighted(snippet, highlights, parent) {
  const bytes = new TextEncoder().encode(snippet);
  const decode = (a, b) => new TextDecoder().decode(bytes.slice(a, b));
  let at = 0;
  for (const [begin, end] of highlights || []) {
    if (begin < at || end > bytes.length || begin >= end) continue;
    parent.append(decode(at, begin));
    const mark = document.createElement('mark');
    mark.textContent = decode(begin, end);
    parent.append(mark);
    at = end;
  }
  parent.append(decode(at, bytes.length));
}
