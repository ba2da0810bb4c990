// What the dashboard offers beside E2B's and Daytona's (issue 55, item 12): named snapshots in a
// table, a runtime's image built from the Runtimes tab with its progress, labels and
// created-at columns, file times with a date, a fork's result as links, a readable page behind
// a share link to a closed port, the token handed to a new tab of the same browser (and
// "Sign out everywhere"), and sub-tabs named for what they are and offered only where the
// runtime can use them. Debian's Chromium against a real sandboxd and Docker.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startService, launchBrowser, apiCall, screenshot, signIn, TOKEN } from './harness.js';

// A recipe no earlier run built: its first step is unique, so no layer cache answers it.
const STAMP = randomBytes(6).toString('hex');
const RECIPE = `t55-${STAMP}`;
const EXTRA_CONFIG = `
[runtimes.slowbuild]
runtime = "${RECIPE}"

[recipes.${RECIPE}]
base = "${process.env.SANDBOXD_TEST_BUSYBOX_IMAGE || 'sandboxd/busybox:local'}"
description = "a build slow enough to watch"
steps = ["RUN echo ${STAMP} > /stamp", "RUN sleep 2", "RUN sleep 2", "RUN sleep 2"]
`;
const LABELS = { team: 'blue', purpose: '<b>demo</b>' };

let service;
let browserHandle;
let context;
let page;
let pageErrors;
let sessionId;

before(async () => {
  service = await startService({ extraConfig: EXTRA_CONFIG });
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'sh', labels: LABELS });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  sessionId = opened.json.id;
  await apiCall(service, 'PUT', `/v1/sessions/${sessionId}/files/content?path=kept.txt`, 'kept');
  const touched = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/exec`, { argv: ['touch', '-d', '2021-03-04 05:06:07', 'kept.txt'] });
  assert.equal(touched.json?.exit_code, 0, JSON.stringify(touched.json));
  browserHandle = await launchBrowser();
  ({ context, page, pageErrors } = await signIn(browserHandle, service));
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
  try {
    const ids = execFileSync('docker', ['images', '-q', `sandboxd/recipe-${RECIPE}`], { encoding: 'utf8' }).split('\n').filter(Boolean);
    if (ids.length) execFileSync('docker', ['rmi', '-f', ...new Set(ids)], { stdio: 'ignore' });
  } catch {
    // nothing built, or the engine is gone
  }
});

const button = (name) => page.locator('.session-actions button', { hasText: name });
const year = new Date().getFullYear();

test('the sessions table shows labels and when each was created; file times carry a date', async () => {
  await page.goto(`${service.url}/#sessions`);
  const row = page.locator(`#sessions-body tr[data-session="${sessionId}"]`);
  await row.locator('.label-chip').first().waitFor();
  assert.deepEqual((await row.locator('.label-chip').allInnerTexts()).sort(), ['purpose=<b>demo</b>', 'team=blue']);
  assert.equal(await row.locator('.label-chip b').count(), 0, 'a label is text, not markup');
  // Today's: the clock time (another day's would carry its date).
  assert.match(await row.locator('td.created').innerText(), /^\d{2}:\d{2}:\d{2}$/);
  assert.deepEqual(await page.locator('#sessions-table thead th').allInnerTexts().then((t) => t.slice(3, 5).map((s) => s.toLowerCase())), ['labels', 'created']);

  await page.goto(`${service.url}/#session/${sessionId}/files`);
  const file = page.locator('.subpanel-files tr[data-name="kept.txt"]');
  await file.waitFor();
  assert.match(await file.innerText(), /2021/, 'a file time says its date');
  await screenshot(page, 'manage-01-files-dated');
});

test('Commands and Shell are named apart; Notebook and Network are offered only where they work', async () => {
  await page.goto(`${service.url}/#session/${sessionId}`);
  await page.locator('.session-head .badge-running').waitFor();
  await page.waitForFunction(() => document.querySelector('a.subtab[data-subtab="notebook"]')?.hidden === true);
  assert.equal(await page.locator('a.subtab[data-subtab="terminal"]').innerText(), 'Commands');
  assert.equal(await page.locator('a.subtab[data-subtab="shell"]').innerText(), 'Shell');
  assert.ok(await page.locator('a.subtab[data-subtab="notebook"]').isHidden(), 'no kernel: no Notebook tab');
  assert.ok(await page.locator('a.subtab[data-subtab="network"]').isHidden(), 'no egress: no Network tab');
  // Their notes stay reachable by address.
  await page.goto(`${service.url}/#session/${sessionId}/notebook`);
  await page.locator('.subpanel-notebook .notebook-note:not([hidden])').waitFor();
  await page.goto(`${service.url}/#session/${sessionId}/network`);
  await page.locator('.subpanel-network .network-note:not([hidden])').waitFor();
});

test('a snapshot is saved under the name given and listed in a table that opens and deletes it', async () => {
  await page.goto(`${service.url}/#session/${sessionId}`);
  await page.locator('.session-head .badge-running').waitFor();
  await button('Snapshot').click();
  await page.fill('.snapshot-form .snapshot-name', 'before the upgrade');
  await page.click('.snapshot-form .snapshot-save');
  await page.locator('.session-head .notice', { hasText: 'before the upgrade' }).waitFor();
  const [snapshot] = (await apiCall(service, 'GET', '/v1/snapshots')).json.snapshots;
  assert.equal(snapshot.name, 'before the upgrade');

  await page.goto(`${service.url}/#sessions`);
  const row = page.locator(`#snapshots-body tr[data-snapshot="${snapshot.id}"]`);
  await row.waitFor();
  const cells = await row.locator('th, td').allInnerTexts();
  assert.match(cells[0], /before the upgrade/);
  assert.equal(cells[1], sessionId.slice(0, 12) + (sessionId.length > 14 ? '…' : ''));
  assert.equal(cells[2], 'sh');
  assert.match(cells[3], /\d+(\.\d+)? (B|KiB|MiB)/);
  assert.match(cells[4], new RegExp(`${year}`), 'the created time carries its date');
  assert.equal(await row.locator('a.id-link').getAttribute('href'), `#session/${encodeURIComponent(sessionId)}`);
  await screenshot(page, 'manage-02-snapshots');
  // On a phone the sessions and snapshots tables are cards that fit the width.
  await page.setViewportSize({ width: 390, height: 844 });
  const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(over <= 0, `too wide by ${over} px at 390 px`);
  await row.scrollIntoViewIfNeeded();
  await screenshot(page, 'manage-02-snapshots-390');
  await page.setViewportSize({ width: 1280, height: 800 });

  const before = new Set((await apiCall(service, 'GET', '/v1/sessions')).json.sessions.map((s) => s.id));
  await row.locator('button.snapshot-open').click();
  await page.waitForURL((url) => url.hash.startsWith('#session/') && !before.has(decodeURIComponent(url.hash.slice(9))));
  const opened = decodeURIComponent(new URL(page.url()).hash.slice(9));
  await page.locator('.session-head .badge-running').waitFor();
  const read = await fetch(`${service.url}/v1/sessions/${opened}/files/content?path=kept.txt`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.equal(await read.text(), 'kept', 'the session opened from the snapshot has its files');
  await apiCall(service, 'DELETE', `/v1/sessions/${opened}`);

  await page.goto(`${service.url}/#sessions`);
  await row.locator('button.snapshot-delete').click();
  await row.locator('button.snapshot-delete').click();
  await page.locator('#snapshots-empty:not([hidden])').waitFor();
  assert.deepEqual((await apiCall(service, 'GET', '/v1/snapshots')).json.snapshots, []);
});

test("a fork's result links to the new session", async () => {
  await page.goto(`${service.url}/#session/${sessionId}`);
  await page.locator('.session-head .badge-running').waitFor();
  await button('Fork').click();
  const link = page.locator('.session-head .notice a.fork-link');
  await link.waitFor();
  const fork = (await apiCall(service, 'GET', '/v1/sessions')).json.sessions.find((s) => s.id !== sessionId);
  assert.ok(fork);
  assert.equal(await link.getAttribute('href'), `#session/${encodeURIComponent(fork.id)}`);
  await link.click();
  await page.locator(`.session-head .session-id:text-is("${fork.id}")`).waitFor();
  await apiCall(service, 'DELETE', `/v1/sessions/${fork.id}`);
});

test('a share link to a closed port, an unknown or a malformed one shows a readable page, not JSON', async () => {
  const shared = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/ports/8123/share`, {});
  assert.equal(shared.status, 201, JSON.stringify(shared.json));
  const preview = await context.newPage();
  const answer = await preview.goto(`${service.url}${shared.json.path}`);
  assert.ok(answer.status() >= 400, `status ${answer.status()}`);
  assert.match(answer.headers()['content-type'], /^text\/html/);
  const shown = await preview.locator('body').innerText();
  assert.match(shown, /This link's page cannot be shown/);
  assert.match(shown, /8123/, 'the page names the port');
  assert.doesNotMatch(shown, /^\s*\{/, 'not the API JSON');
  await screenshot(preview, 'manage-03-share-closed');
  // A link that does not exist says so in words too; an API client still gets JSON.
  const nowhere = await preview.goto(`${service.url}/p/${'0'.repeat(62)}/`);
  assert.equal(nowhere.status(), 404);
  assert.match(await preview.locator('h1').innerText(), /This link leads nowhere/);
  const json = await fetch(`${service.url}/p/${'0'.repeat(62)}/`);
  assert.equal((await json.json()).error.code, 'not_found');
  // So does every other refusal under /p/: a malformed link, and /p/ itself.
  for (const path of ['/p/not.a.link', '/p/']) {
    const refused = await preview.goto(`${service.url}${path}`);
    assert.equal(refused.status(), 404, path);
    assert.match(refused.headers()['content-type'], /^text\/html/, path);
    assert.match(await preview.locator('h1').innerText(), /This link leads nowhere/, path);
    assert.equal((await (await fetch(`${service.url}${path}`)).json()).error.code, 'not_found', path);
  }
  await preview.close();
});

test('the Runtimes tab builds an image not built yet, showing its progress', async () => {
  await page.goto(`${service.url}/#runtimes`);
  const row = page.locator('#runtimes-body tr[data-runtime="slowbuild"]');
  const build = row.locator('button.runtime-build');
  await build.waitFor();
  assert.equal(await build.innerText(), 'Build image');
  await build.click();
  await page.waitForFunction(() => /building step \d of \d/.test(document.querySelector('#runtimes-body tr[data-runtime="slowbuild"] .state-building')?.textContent || ''), null, { timeout: 60_000 });
  await screenshot(page, 'manage-04-runtime-building');
  await row.locator('.state-ready, .state-failed').first().waitFor({ timeout: 120_000 });
  assert.equal(await row.locator('.state-ready').count(), 1, `the build did not end ready: ${await row.innerText()}`);
  assert.equal(await build.count(), 0, 'no Build button once the image is there');
  const listed = (await apiCall(service, 'GET', '/v1/runtimes')).json.runtimes.find((r) => r.name === 'slowbuild');
  assert.equal(listed.state, 'ready');
});

test('a new tab of the same browser is signed in without asking; Sign out everywhere signs out every tab', async () => {
  await page.goto(`${service.url}/#sessions`);
  await page.locator('#app:not([hidden])').waitFor();
  const second = await context.newPage();
  await second.goto(`${service.url}/#sessions`);
  await second.locator('#app:not([hidden])').waitFor();
  assert.ok(await second.locator('#signin').isHidden(), 'the new tab did not ask for the token');
  assert.deepEqual(await context.cookies(), [], 'no cookie');
  assert.equal(await second.evaluate(() => localStorage.length), 0, 'nothing in local storage');
  assert.ok(!second.url().includes(TOKEN));

  // Another browser session (a fresh context) is not handed anything.
  const stranger = await browserHandle.browser.newContext();
  const strangerPage = await stranger.newPage();
  await strangerPage.goto(`${service.url}/`);
  await strangerPage.locator('#signin:not([hidden])').waitFor();
  await stranger.close();

  await second.click('#sign-out-everywhere');
  await second.locator('#signin:not([hidden])').waitFor();
  await page.locator('#signin:not([hidden])').waitFor();
  assert.match(await page.locator('#signin-status').innerText(), /Signed out in every tab/);
  const kept = await page.evaluate((token) => Object.values(sessionStorage).some((value) => value.includes(token)), TOKEN);
  assert.equal(kept, false, 'the first tab forgot it');
  await page.reload();
  await page.locator('#signin:not([hidden])').waitFor();
  await screenshot(page, 'manage-05-signed-out');
  await second.close();
  assert.deepEqual(pageErrors, []);
});
