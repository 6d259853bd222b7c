// The page as people see it, kept as pictures: the list with a session open,
// search, the projects and the usage views, at a desktop's size and a
// phone's, in the light and the dark scheme. They land in
// $SESSIONDB_WEB_SCREENSHOTS (ctest sets build/web-screenshots) for a person
// to look at. The test checks what a picture cannot be trusted to show: each
// scheme really is light or dark, nothing is wider than the screen, and each
// file is a PNG of the size asked.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {after, before, test} from 'node:test';

import {kRareWord, launchBrowser, newPage, seedHistory, startServer} from './support.mjs';

const outDir = process.env.SESSIONDB_WEB_SCREENSHOTS ||
               fs.mkdtempSync(path.join(os.tmpdir(), 'sessiondb-screenshots-'));

let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => { await browser?.close(); });

const kSizes = {desktop: {width: 1280, height: 800}, phone: {width: 390, height: 844}};

// The relative luminance of the page's background, 0 (black) to 1 (white).
const backgroundLuminance = (page) => page.evaluate(() => {
  const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number);
  const lin = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
});

function pngSize(file) {
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', `${file} is a PNG`);
  return {width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20)};
}

test('each view at desktop and phone size, light and dark, is kept as a picture', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const ids = await seedHistory(server);
  // A session with a project, a branch and usage, for the list and the usage view.
  const coded = await server.api('POST', '/v1/sessions', {title: 'Speed up the CI cache',
    metadata: {source: 'claude-code', cwd: '/home/dev/shop', git_branch: 'ci/cache'}});
  for (let i = 0; i < 4; i++) {
    await server.api('POST', `/v1/sessions/${coded.id}/messages`, {role: 'user', parts: [{type: 'text', text: `Step ${i}: the docker cache misses`}]});
    await server.api('POST', `/v1/sessions/${coded.id}/messages`, {role: 'assistant', model: 'claude-sonnet-4-5', provider: 'anthropic',
      usage: {input_tokens: 12000 * (i + 1), output_tokens: 900, cached_tokens: 8000}, parts: [{type: 'text', text: 'Keyed the layer on the lockfile.'}]});
  }
  fs.mkdirSync(outDir, {recursive: true});
  const views = {
    session: `#/s/${ids.main}`,
    search: `#/search?q=${kRareWord}`,
    projects: '#/projects',
    usage: '#/usage',
  };
  const ready = {
    session: '.session-head .timeline .tl-mark',
    search: '.hits .hit',
    projects: '.facet-group',
    usage: '.usage-headline',
  };
  for (const scheme of ['light', 'dark']) {
    for (const [sizeName, size] of Object.entries(kSizes)) {
      const {page, context, problems} = await newPage(browser);
      await page.setViewportSize(size);
      await page.emulateMedia({colorScheme: scheme});
      for (const [view, hash] of Object.entries(views)) {
        await page.goto(server.url + hash);
        await page.locator(ready[view]).first().waitFor();
        const lum = await backgroundLuminance(page);
        if (scheme === 'dark') assert.ok(lum < 0.1, `${view} ${sizeName} dark: luminance ${lum}`);
        else assert.ok(lum > 0.8, `${view} ${sizeName} light: luminance ${lum}`);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= size.width, `${view} ${sizeName} ${scheme} is ${wide} px wide`);
        const file = path.join(outDir, `${view}-${sizeName}-${scheme}.png`);
        await page.screenshot({path: file});
        assert.deepEqual(pngSize(file), size);
      }
      assert.deepEqual(problems, [], `${sizeName} ${scheme}`);
      await context.close();
    }
  }
});
