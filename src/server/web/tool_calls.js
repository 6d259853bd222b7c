// A coding agent's tool call, and its result, as the page shows them: folded
// to one line that says what happened ("Edited src/app.py: +12 −3"), and
// opened, an Edit as a unified diff under its file's path, a Write as the
// file highlighted under its path, a Bash call as `$ command` with its
// output, a Read as the file and its lines, an MCP call as its server and
// tool. A long output is folded again with its size. The words follow the
// C++ rules of `show` and the Markdown export (src/core/tool_call_text.h).
//
// Arguments come from outside: a field may be missing or of another type, or
// the arguments not JSON at all (then the API gives them as a string).
// Nothing here throws on them: a call these rules cannot read shows its raw
// arguments, as JSON. Every text reaches the DOM as a text node.
//
// Example:
//   const call = renderToolCall(part);   // {node, attach(resultPart)}
//   parts.append(call.node);
//   ...later, when its result comes:  call.attach(resultPart);

import {diffCounts, lineDiff, splitLines} from './line_diff.js';
import {el, formatBytes} from './ui.js';

export const kLongOutputLines = 40;
export const kLongOutputBytes = 4096;
const kSummaryCommandChars = 100;
const kHighlightMaxChars = 200_000;

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const str = (v) => (typeof v === 'string' ? v : '');
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const utf8Bytes = (text) => new TextEncoder().encode(text).length;

// "312 lines, 18.1 KiB".
export function outputSize(text) {
  return `${plural(splitLines(text).length, 'line')}, ${formatBytes(utf8Bytes(text)) || '0 B'}`;
}

export function isLongOutput(text) {
  return splitLines(text).length > kLongOutputLines || utf8Bytes(text) > kLongOutputBytes;
}

const kLanguages = {
  py: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'jsx', ts: 'typescript',
  tsx: 'tsx', c: 'c', h: 'cpp', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hh: 'cpp', hpp: 'cpp', rs: 'rust',
  go: 'go', java: 'java', kt: 'kotlin', swift: 'swift', rb: 'ruby', php: 'php', cs: 'csharp',
  sh: 'bash', bash: 'bash', zsh: 'bash', md: 'markdown', json: 'json', yaml: 'yaml', yml: 'yaml',
  toml: 'toml', html: 'html', css: 'css', scss: 'scss', sql: 'sql', xml: 'xml', cmake: 'cmake',
  lua: 'lua', r: 'r', scala: 'scala', ini: 'ini', dockerfile: 'dockerfile',
};

// The language of a file from its name ("src/app.py" -> "python"), or ''.
export function languageForPath(path) {
  const base = String(path).slice(String(path).lastIndexOf('/') + 1);
  if (base === 'CMakeLists.txt') return 'cmake';
  if (['Makefile', 'makefile', 'GNUmakefile'].includes(base)) return 'make';
  if (base === 'Dockerfile') return 'dockerfile';
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return '';
  return kLanguages[base.slice(dot + 1).toLowerCase()] || '';
}

// The first line of a command, cut; '…' when anything was left out.
function commandHead(command) {
  const newline = command.indexOf('\n');
  const head = newline < 0 ? command : command.slice(0, newline);
  const chars = Array.from(head);
  const cut = newline >= 0 || chars.length > kSummaryCommandChars;
  return chars.slice(0, kSummaryCommandChars).join('') + (cut ? '…' : '');
}

function shellWord(word) {
  return /^[A-Za-z0-9_./=:,+@%-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

// The command of a Bash or Codex shell call: a string, or an argv array
// ("bash -lc SCRIPT" gives SCRIPT); '' when there is none.
function commandOf(args) {
  for (const key of ['command', 'cmd']) {
    const c = args[key];
    if (typeof c === 'string') return c;
    if (!Array.isArray(c) || !c.length) continue;
    if (!c.every((a) => typeof a === 'string')) return '';
    const shell = c[0].slice(c[0].lastIndexOf('/') + 1);
    if (c.length === 3 && ['bash', 'sh', 'zsh'].includes(shell) && ['-lc', '-c'].includes(c[1])) return c[2];
    return c.map(shellWord).join(' ');
  }
  return '';
}

function integer(v) {
  if (Number.isInteger(v) && v >= 0) return v;
  if (typeof v === 'string' && /^\d{1,12}$/.test(v)) return Number(v);
  return null;
}

// Codex's apply_patch: the files it names and the lines it adds and removes.
function readPatch(patch) {
  if (!patch.includes('*** ')) return null;
  const files = [];
  let added = 0;
  let removed = 0;
  for (const line of splitLines(patch)) {
    const m = /^\*\*\* (?:Update|Add|Delete) File: (.*)$/.exec(line);
    if (m) files.push(m[1]);
    if (line.startsWith('***')) continue;
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  return files.length ? {files, added, removed} : null;
}

const counts = (added, removed) => `+${added} −${removed}`;

// What a call is, read from its name and arguments: {kind, summary, ...} with
// the fields its kind shows; kind 'raw' (summary '') for a tool these rules
// do not know or arguments they cannot read. Pure.
export function describeToolCall(name, args) {
  const raw = {kind: 'raw', summary: ''};
  name = String(name ?? '');
  if (name.startsWith('mcp__')) {
    const rest = name.slice(5);
    const split = rest.indexOf('__');
    const server = split < 0 ? rest : rest.slice(0, split);
    const tool = split < 0 ? '' : rest.slice(split + 2);
    if (!server) return raw;
    return {kind: 'mcp', server, tool: tool || '?', summary: `${server} › ${tool || '?'}`};
  }
  if (name === 'apply_patch') {
    let patch = typeof args === 'string' ? args : '';
    if (isObject(args)) patch = str(args.input) || str(args.patch);
    const read = readPatch(patch);
    if (!read) return raw;
    const what = read.files.length === 1 ? read.files[0] : plural(read.files.length, 'file');
    return {kind: 'patch', patch, summary: `Patched ${what}: ${counts(read.added, read.removed)}`};
  }
  if (!isObject(args)) return raw;
  switch (name) {
    case 'Edit':
    case 'MultiEdit': {
      const path = str(args.file_path);
      let edits;
      if (name === 'MultiEdit') {
        if (!Array.isArray(args.edits)) return raw;
        edits = args.edits.map((e) => ({old: str(e?.old_string), new: str(e?.new_string)}));
      } else {
        if (typeof args.old_string !== 'string' && typeof args.new_string !== 'string') return raw;
        edits = [{old: str(args.old_string), new: str(args.new_string)}];
      }
      if (!path) return raw;
      let added = 0;
      let removed = 0;
      for (const e of edits) {
        e.diff = lineDiff(e.old, e.new);
        const c = e.diff ? diffCounts(e.diff)
                         : {added: splitLines(e.new).length, removed: splitLines(e.old).length};
        added += c.added;
        removed += c.removed;
      }
      const many = name === 'MultiEdit' ? ` (${plural(edits.length, 'edit')})` : '';
      return {kind: 'edit', path, edits, summary: `Edited ${path}: ${counts(added, removed)}${many}`};
    }
    case 'Write': {
      const path = str(args.file_path);
      if (!path || typeof args.content !== 'string') return raw;
      return {kind: 'write', path, content: args.content,
              summary: `Wrote ${path} (${plural(splitLines(args.content).length, 'line')})`};
    }
    case 'Read': {
      const path = str(args.file_path);
      if (!path) return raw;
      const offset = integer(args.offset);
      const limit = integer(args.limit);
      const first = Math.max(1, offset ?? 1);
      let summary = `Read ${path}`;
      if (limit) summary += ` (lines ${first}–${first + limit - 1})`;
      else if (offset !== null) summary += ` (from line ${first})`;
      return {kind: 'read', path, summary};
    }
    case 'Bash':
    case 'shell':
    case 'local_shell':
    case 'exec_command':
    case 'container.exec': {
      const command = commandOf(args);
      if (!command) return raw;
      return {kind: 'command', command, summary: `$ ${commandHead(command)}`};
    }
    case 'Grep':
    case 'Glob': {
      const pattern = str(args.pattern);
      if (!pattern) return raw;
      const where = str(args.path) ? ` in ${args.path}` : '';
      return {kind: 'search', summary: name === 'Grep' ? `Searched for "${pattern}"${where}`
                                                        : `Listed files matching ${pattern}${where}`};
    }
    case 'WebFetch':
      if (!str(args.url)) return raw;
      return {kind: 'text', text: str(args.prompt), summary: `Fetched ${args.url}`};
    case 'WebSearch':
    case 'web_search':
      if (!str(args.query)) return raw;
      return {kind: 'text', text: '', summary: `Searched the web for "${args.query}"`};
    case 'Task':
    case 'Agent':
      if (!str(args.description)) return raw;
      return {kind: 'text', text: str(args.prompt), summary: `Sub-agent: ${args.description}`};
    case 'TodoWrite': {
      if (!Array.isArray(args.todos)) return raw;
      const text = args.todos.map((t) => {
        const status = str(t?.status);
        return `${status === 'completed' ? '[x]' : status === 'in_progress' ? '[~]' : '[ ]'} ${str(t?.content)}`;
      }).join('\n');
      return {kind: 'text', text, summary: `Updated the to-do list (${plural(args.todos.length, 'item')})`};
    }
    case 'NotebookEdit': {
      const path = str(args.notebook_path);
      if (!path) return raw;
      const mode = str(args.edit_mode);
      const verb = mode === 'delete' ? 'Deleted a cell of' : mode === 'insert' ? 'Inserted a cell in' : 'Edited a cell of';
      return {kind: 'write', path: '', content: str(args.new_source),
              language: str(args.cell_type) === 'markdown' ? 'markdown' : 'python', summary: `${verb} ${path}`};
    }
    default:
      return raw;
  }
}

// ---- Syntax highlighting (a few token kinds, as text nodes in spans) -------------

const kKeywords = new Set(('as async await break case catch class const continue def default del do elif ' +
  'else enum export extends false fn for from func function if impl import in interface let loop match ' +
  'mod namespace new nil None not null or package pass private protected pub public raise return self ' +
  'static struct super switch this throw True true try type typedef typename use var void while with ' +
  'yield auto bool char double float int long unsigned using template constexpr nullptr lambda and is ' +
  'then fi done esac local echo').split(' '));
const kHashComments = new Set(['python', 'bash', 'ruby', 'yaml', 'toml', 'cmake', 'make', 'r',
                               'dockerfile', 'ini']);
const kToken = /("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`(?:[^`\\]|\\.)*`?)|(\b\d[\d_]*(?:\.\d+)?\b)|([A-Za-z_]\w*)/y;

// `text` as a fragment of text nodes, keywords, strings, numbers and comments
// in spans (classes tok-kw, tok-str, tok-num, tok-com).
export function highlightCode(text, language) {
  const fragment = document.createDocumentFragment();
  if (!language || language === 'markdown' || text.length > kHighlightMaxChars) {
    fragment.append(text);
    return fragment;
  }
  const hash = kHashComments.has(language);
  const slash = !hash && language !== 'json';
  let plain = '';
  const flush = () => {
    if (plain) fragment.append(plain);
    plain = '';
  };
  const span = (className, t) => {
    flush();
    fragment.append(el('span', className, t));
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if ((hash && c === '#') || (slash && c === '/' && text[i + 1] === '/')) {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      span('tok-com', text.slice(i, stop));
      i = stop;
      continue;
    }
    if (slash && c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      span('tok-com', text.slice(i, stop));
      i = stop;
      continue;
    }
    kToken.lastIndex = i;
    const m = /["'`\dA-Za-z_]/.test(c) ? kToken.exec(text) : null;
    if (!m) {
      plain += c;
      i++;
      continue;
    }
    if (m[1]) span('tok-str', m[1]);
    else if (m[2]) span('tok-num', m[2]);
    else if (kKeywords.has(m[3])) span('tok-kw', m[3]);
    else plain += m[3];
    i += m[0].length;
  }
  flush();
  return fragment;
}

// ---- The DOM ------------------------------------------------------------------------

function codeBlock(text, language, className = '') {
  const pre = el('pre', className);
  const code = el('code', language ? `language-${language}` : '');
  code.append(highlightCode(text, language));
  pre.append(code);
  return pre;
}

function pathLine(path) {
  const line = el('div', 'tool-path');
  line.append(el('code', '', path));
  return line;
}

// A unified diff: "--- path", "+++ path", then each line in a span of class
// diff-add, diff-del or diff-same.
function diffBlock(path, edits) {
  const code = el('code', 'language-diff');
  const line = (className, text) => {
    code.append(el('span', `diff-line ${className}`, text), '\n');
  };
  line('diff-file', `--- ${path}`);
  line('diff-file', `+++ ${path}`);
  edits.forEach((e, n) => {
    if (edits.length > 1) line('diff-hunk', `@@ edit ${n + 1} of ${edits.length} @@`);
    const lines = e.diff || [...splitLines(e.old).map((text) => ({op: '-', text})),
                             ...splitLines(e.new).map((text) => ({op: '+', text}))];
    for (const l of lines) {
      line(l.op === '+' ? 'diff-add' : l.op === '-' ? 'diff-del' : 'diff-same', l.op + l.text);
    }
  });
  code.lastChild?.remove();  // the last newline
  const pre = el('pre', 'diff');
  pre.append(code);
  return pre;
}

function patchBlock(patch) {
  const code = el('code', 'language-diff');
  for (const text of splitLines(patch)) {
    const className = text.startsWith('***') ? 'diff-file' : text.startsWith('@@') ? 'diff-hunk'
        : text.startsWith('+') ? 'diff-add' : text.startsWith('-') ? 'diff-del' : 'diff-same';
    code.append(el('span', `diff-line ${className}`, text), '\n');
  }
  code.lastChild?.remove();
  const pre = el('pre', 'diff');
  pre.append(code);
  return pre;
}

// `$ command`, to which the output is added when it comes.
function consoleBlock(command) {
  const pre = el('pre', 'console');
  const code = el('code', 'language-console');
  const line = el('span', 'console-command');
  line.append(el('span', 'console-prompt', '$ '), command);
  code.append(line);
  pre.append(code);
  return pre;
}

function rawArguments(args) {
  let text;
  if (typeof args === 'string') text = args;
  else {
    try {
      text = JSON.stringify(args ?? {}, null, 2);
    } catch {
      text = String(args);
    }
  }
  const pre = el('pre');
  pre.append(el('code', 'language-json', text));
  return pre;
}

// The output of a result: a block, or when long a fold saying its size.
export function outputBlock(result) {
  const whole = String(result.text ?? '');
  const pre = el('pre', `tool-output${result.is_error ? ' is-error' : ''}`, whole.replace(/\n+$/, ''));
  if (!isLongOutput(whole)) return pre;
  const fold = el('details', 'tool-output-fold');
  fold.append(el('summary', '', `${result.is_error ? 'Error' : 'Output'}, ${outputSize(whole)}`), pre);
  return fold;
}

function summaryLine(described, name, isError) {
  const summary = el('summary');
  if (described.summary) {
    summary.append(el('span', 'tool-summary', described.summary), ' ');
  } else {
    summary.append('Tool call ');
  }
  summary.append(el('code', 'tool-name', name || '?'));
  if (isError) summary.append(' ', el('span', 'badge error', 'error'));
  return summary;
}

// A tool call part, folded: {node, attach(result)}; attach shows the result
// (a tool_result part) beside the call, once.
export function renderToolCall(call) {
  const args = call.arguments;
  const name = String(call.tool_name || '');
  const described = describeToolCall(name, args);
  const node = el('details', `tool tool-call tool-${described.kind}`);
  node.dataset.toolCallId = String(call.tool_call_id ?? '');
  const body = el('div', 'tool-body');
  let consolePre = null;
  switch (described.kind) {
    case 'edit':
      body.append(pathLine(described.path), diffBlock(described.path, described.edits));
      break;
    case 'write':
      if (described.path) body.append(pathLine(described.path));
      body.append(codeBlock(described.content, described.language || languageForPath(described.path), 'code'));
      break;
    case 'patch':
      body.append(patchBlock(described.patch));
      break;
    case 'command':
      consolePre = consoleBlock(described.command);
      body.append(consolePre);
      break;
    case 'read':
      body.append(pathLine(described.path));
      break;
    case 'text':
      if (described.text) body.append(el('pre', 'tool-text', described.text));
      break;
    case 'mcp':
      if (isObject(args) && !Object.keys(args).length) break;
      body.append(rawArguments(args));
      break;
    default:
      body.append(rawArguments(args));
  }
  const slot = el('div', 'tool-result-slot');
  body.append(slot);
  node.append(summaryLine(described, name, false), body);
  let attached = false;
  const attach = (result) => {
    if (attached || !result) return;
    attached = true;
    node.classList.add('has-result');
    if (result.is_error) {
      node.classList.add('is-error');
      node.querySelector('summary').append(' ', el('span', 'badge error', 'error'));
    }
    const text = String(result.text ?? '').replace(/\n+$/, '');
    if (consolePre && !isLongOutput(String(result.text ?? ''))) {
      if (text) consolePre.firstChild.append('\n', el('span', 'console-output', text));
      return;
    }
    if (text) slot.append(outputBlock(result));
    else slot.append(el('p', 'muted tool-no-output', '(no output)'));
  };
  return {node, attach, name, summary: described.summary};
}

// A result shown without its call (the call is not in view): folded, named by
// the call's tool when known.
export function renderToolResult(result, name) {
  const summary = ['Tool result ', el('code', 'tool-name', name || result.tool_call_id || '?')];
  if (result.is_error) summary.push(' ', el('span', 'badge error', 'error'));
  const text = String(result.text ?? '');
  if (isLongOutput(text)) summary.push(el('span', 'muted', ` · ${outputSize(text)}`));
  const node = el('details', `tool tool-result${result.is_error ? ' is-error' : ''}`);
  const head = el('summary');
  head.append(...summary);
  node.append(head, el('pre', 'tool-output', text));
  return node;
}
