// The page's files come from the binary with the headers that keep it safe
// and cacheable; they need no token (the API does).
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {startServer} from './support.mjs';

test('/ and each asset are served with CSP, nosniff, an ETag and 304 on revalidation', async (t) => {
  const server = await startServer({token: 'tok'});
  t.after(() => server.stop());

  const index = await fetch(`${server.base}/`);
  assert.equal(index.status, 200);
  assert.match(index.headers.get('content-type'), /^text\/html/);
  const csp = index.headers.get('content-security-policy');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /connect-src 'self'/);
  assert.match(csp, /img-src 'self' data: blob:/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(index.headers.get('x-content-type-options'), 'nosniff');
  const html = await index.text();
  assert.match(html, /<script type="module" src="\/app.js"><\/script>/);
  assert.doesNotMatch(html, /<script>|<script type="module">|\son[a-z]+=/i, 'no inline script or handler');

  // Every file the page refers to is served with its type.
  const types = {'/app.js': /^text\/javascript/, '/api.js': /^text\/javascript/,
                 '/markdown.js': /^text\/javascript/, '/highlight.js': /^text\/javascript/,
                 '/plain_text.js': /^text\/javascript/, '/ui.js': /^text\/javascript/,
                 '/trash.js': /^text\/javascript/, '/tool_calls.js': /^text\/javascript/,
                 '/line_diff.js': /^text\/javascript/, '/history_import.js': /^text\/javascript/,
                 '/navigation.js': /^text\/javascript/, '/list_facets.js': /^text\/javascript/,
                 '/session_timeline.js': /^text\/javascript/, '/bar_chart.js': /^text\/javascript/,
                 '/usage_format.js': /^text\/javascript/, '/session_usage.js': /^text\/javascript/,
                 '/list_usage.js': /^text\/javascript/, '/usage_view.js': /^text\/javascript/,
                 '/projects_view.js': /^text\/javascript/,
                 '/checkpoints.js': /^text\/javascript/, '/file_history_view.js': /^text\/javascript/,
                 '/blame_view.js': /^text\/javascript/, '/file_changes_dialog.js': /^text\/javascript/,
                 '/file_links.js': /^text\/javascript/, '/unified_diff_view.js': /^text\/javascript/,
                 '/app.css': /^text\/css/, '/favicon.svg': /^image\/svg\+xml/, '/index.html': /^text\/html/};
  for (const [path, type] of Object.entries(types)) {
    const res = await fetch(server.base + path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type'), type, path);
    assert.ok(res.headers.get('content-security-policy'), path);
    const etag = res.headers.get('etag');
    assert.match(etag, /^"[0-9a-f]{16}"$/, path);
    assert.equal(res.headers.get('cache-control'), 'no-cache', path);
    const again = await fetch(server.base + path, {headers: {'If-None-Match': etag}});
    assert.equal(again.status, 304, path);
  }

  // The modules the page imports are all served.
  const app = await (await fetch(`${server.base}/app.js`)).text();
  for (const [, module] of app.matchAll(/from '\.\/([\w.-]+)'/g)) assert.ok(types[`/${module}`], module);

  const missing = await fetch(`${server.base}/nothing.js`);
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error.code, 'not_found');
  assert.equal((await fetch(`${server.base}/v1/sessions`)).status, 401);
});
