// The page's renderers, case by case, in the browser that runs them: Markdown
// (markdown.js) and search highlights given as UTF-8 byte ranges
// (highlight.js), and previews as plain text (plain_text.js). Each case is
// input -> what the DOM ends up holding.
import assert from 'node:assert/strict';
import {after, before, test} from 'node:test';

import {launchBrowser, newPage, startServer} from './support.mjs';

let browser;
let server;
let page;
before(async () => {
  browser = await launchBrowser();
  server = await startServer();
  ({page} = await newPage(browser));
  await page.goto(server.url);
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const kLink = 'target="_blank" rel="noopener noreferrer nofollow"';

const kMarkdown = [
  ['# Title', '<h1>Title</h1>'],
  ['### Three ###', '<h3>Three</h3>'],
  ['#hashtag', '<p>#hashtag</p>'],
  ['**bold**, *em*, _em_, ~~gone~~', '<p><strong>bold</strong>, <em>em</em>, <em>em</em>, <del>gone</del></p>'],
  ['***both***', '<p><strong><em>both</em></strong></p>'],
  ['snake_case_name and 2 * 3 * 4', '<p>snake_case_name and 2 * 3 * 4</p>'],
  ['\\*not em\\*', '<p>*not em*</p>'],
  ['line one\nline two', '<p>line one<br>line two</p>'],
  ['`a <b> c`', '<p><code>a &lt;b&gt; c</code></p>'],
  ['``has ` tick``', '<p><code>has ` tick</code></p>'],
  ['```js\nlet a = "<x>";\n```', '<pre><code class="language-js">let a = "&lt;x&gt;";</code></pre>'],
  ['~~~\nplain\n~~~', '<pre><code>plain</code></pre>'],
  ['```py\nunclosed', '<pre><code class="language-py">unclosed</code></pre>'],
  ['```"><img src=x>\nx\n```', '<pre><code class="language-img">x</code></pre>'],
  ['- a\n- b\n  - nested\n- c', '<ul><li>a</li><li>b<ul><li>nested</li></ul></li><li>c</li></ul>'],
  ['1. one\n2. two', '<ol><li>one</li><li>two</li></ol>'],
  ['3. three', '<ol start="3"><li>three</li></ol>'],
  ['> quoted\n> more', '<blockquote><p>quoted<br>more</p></blockquote>'],
  ['a\n\n---\n\nb', '<p>a</p><hr><p>b</p>'],
  ['[docs](https://example.com/a?b=1)', `<p><a href="https://example.com/a?b=1" ${kLink}>docs</a></p>`],
  ['[mail](mailto:a@b.c)', `<p><a href="mailto:a@b.c" ${kLink}>mail</a></p>`],
  ['see https://example.com/x).', `<p>see <a href="https://example.com/x" ${kLink}>https://example.com/x</a>).</p>`],
  ['![chart](https://example.com/c.png)', `<p><a href="https://example.com/c.png" ${kLink} class="md-image-link">image: chart</a></p>`],
  // Nothing hostile survives as markup or as a link.
  ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
  ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
  ['[x](javascript:alert(1))', '<p>x</p>'],
  ['[x](JaVaScRiPt:alert(1))', '<p>x</p>'],
  ['[x](java\tscript:alert(1))', '<p>x</p>'],
  ['[x](data:text/html,<b>hi</b>)', '<p>x</p>'],
  ['[x](/v1/gc)', '<p>x</p>'],
  ['[x](&#106;avascript:alert(1))', '<p>x</p>'],
  ['![x](javascript:alert(1))', '<p>[image: x]</p>'],
  ['&lt;b&gt; &amp;', '<p>&amp;lt;b&amp;gt; &amp;amp;</p>'],
];

test('Markdown renders to the expected DOM, and hostile input stays text', async () => {
  const got = await page.evaluate(async (inputs) => {
    const {renderMarkdown} = await import('/markdown.js');
    return inputs.map((input) => {
      const div = document.createElement('div');
      div.append(renderMarkdown(input));
      return div.innerHTML;
    });
  }, kMarkdown.map(([input]) => input));
  kMarkdown.forEach(([input, expected], i) => assert.equal(got[i], expected, JSON.stringify(input)));
});

// [snippet, byte ranges, expected HTML]
const kHighlights = [
  ['plain text here', [[6, 10]], 'plain <mark>text</mark> here'],
  ['café au lait', [[6, 8]], 'café <mark>au</mark> lait'],
  ['Bär „quetzal“', [[8, 15]], 'Bär „<mark>quetzal</mark>“'],
  ['🦎 lizard', [[5, 11]], '🦎 <mark>lizard</mark>'],
  // A range that starts or ends inside a character takes the whole character.
  ['é', [[1, 2]], '<mark>é</mark>'],
  ['a🦎b', [[2, 3]], 'a<mark>🦎</mark>b'],
  // Overlapping and unordered ranges merge; out-of-range ones are clamped or dropped.
  ['abcdef', [[3, 5], [1, 4]], 'a<mark>bcde</mark>f'],
  ['abc', [[2, 99], [7, 9], [2, 2]], 'ab<mark>c</mark>'],
  ['<b>x</b>', [[3, 4]], '&lt;b&gt;<mark>x</mark>&lt;/b&gt;'],
];

test('search highlights given as UTF-8 byte ranges mark the right characters', async () => {
  const got = await page.evaluate(async (cases) => {
    const {renderHighlighted} = await import('/highlight.js');
    return cases.map(([snippet, ranges]) => {
      const p = document.createElement('p');
      p.append(renderHighlighted(snippet, ranges));
      return p.innerHTML;
    });
  }, kHighlights.map(([snippet, ranges]) => [snippet, ranges]));
  kHighlights.forEach(([snippet, ranges, expected], i) =>
    assert.equal(got[i], expected, `${snippet} ${JSON.stringify(ranges)}`));
});

// [Markdown, the plain text a preview shows]
const kPlain = [
  ['the **first** words', 'the first words'],
  ['## Fix the `a*b` case', 'Fix the a*b case'],
  ['see [the docs](https://x.example/a) and ![shot](https://x.example/s.png)', 'see the docs and shot'],
  ['*em*, _em_, ~~strike~~, __strong__', 'em, em, strike, strong'],
  // A preview cut inside a bold keeps no asterisks beside a word.
  ['word **a b…', 'word a b…'],
  ['…important** thing', '…important thing'],
  // What only looks like a marker stays.
  ['2 * 3 = 6, snake_case_name, issue #12, C#', '2 * 3 = 6, snake_case_name, issue #12, C#'],
  ['\\*not em\\* and \\`not code\\`', '*not em* and `not code`'],
  ['> quoted\n- one\n1. two\n```js\nx()\n```', 'quoted one two x()'],
  ['<b>tags</b> stay text', '<b>tags</b> stay text'],
];

test('previews show the text Markdown stands for, without its markers', async () => {
  const got = await page.evaluate(async (inputs) => {
    const {plainText} = await import('/plain_text.js');
    return inputs.map((input) => plainText(input));
  }, kPlain.map(([input]) => input));
  kPlain.forEach(([input, expected], i) => assert.equal(got[i], expected, JSON.stringify(input)));
});
