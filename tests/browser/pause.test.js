// Pause, resume, snapshot and fork from the session's header in the dashboard, and the Sessions
// tab's snapshots table: Debian's Chromium against a real sandboxd and Docker. Each step asserts
// what the page shows and what the API then says.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startService, launchBrowser, apiCall, screenshot, signIn, TOKEN } from './harness.js';

let service;
let browserHandle;
let page;
let pageErrors;
let sessionId;

before(async () => {
  service = await startService();
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'sh' });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  sessionId = opened.json.id;
  await apiCall(service, 'PUT', `/v1/sessions/${sessionId}/files/content?path=kept.txt`, 'kept');
  browserHandle = await launchBrowser();
  ({ page, pageErrors } = await signIn(browserHandle, service));
  await page.goto(`${service.url}/#session/${sessionId}`);
  await page.locator('.session-head .badge-running').waitFor();
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

const button = (name) => page.locator('.session-actions button', { hasText: name });

test('pause shows the state paused and resume thaws it', async () => {
  await button('Pause').click();
  await page.locator('.session-head .badge-paused').waitFor();
  assert.match(await page.locator('.session-head .notice').innerText(), /Paused: no CPU/);
  assert.equal((await apiCall(service, 'GET', `/v1/sessions/${sessionId}`)).json.state, 'paused');
  assert.equal(await page.locator('.session-head .alert-info:not(.notice):not(.killed):not([hidden])').count(), 0, 'a paused session is not shown as ended');
  await screenshot(page, 'pause-01-paused');
  await button('Resume').click();
  await page.locator('.session-head .badge-running').waitFor();
  assert.equal((await apiCall(service, 'GET', `/v1/sessions/${sessionId}`)).json.state, 'running');
});

test('snapshot saves one and fork opens a session with the files', async () => {
  await button('Snapshot').click();
  await page.fill('.snapshot-form .snapshot-name', 'kept file');
  await page.click('.snapshot-form .snapshot-save');
  await page.locator('.session-head .notice', { hasText: 'Snapshot' }).waitFor();
  const snapshots = (await apiCall(service, 'GET', '/v1/snapshots')).json.snapshots;
  assert.equal(snapshots.length, 1);
  assert.equal(snapshots[0].name, 'kept file');
  assert.match(await page.locator('.session-head .notice').innerText(), new RegExp(snapshots[0].id));

  await button('Fork').click();
  await page.locator('.session-head .notice', { hasText: 'Forked into' }).waitFor();
  const sessions = (await apiCall(service, 'GET', '/v1/sessions')).json.sessions;
  const fork = sessions.find((s) => s.id !== sessionId);
  assert.ok(fork, JSON.stringify(sessions));
  const read = await fetch(`${service.url}/v1/sessions/${fork.id}/files/content?path=kept.txt`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(await read.text(), 'kept');
  assert.deepEqual(pageErrors, []);
});

test('the snapshots table opens a session from a snapshot, then deletes it', async () => {
  const [snapshot] = (await apiCall(service, 'GET', '/v1/snapshots')).json.snapshots;
  await page.goto(`${service.url}/#sessions`);
  const row = page.locator(`#snapshots-body tr[data-snapshot="${snapshot.id}"]`);
  await row.waitFor();
  assert.match(await row.innerText(), new RegExp(`kept file\\s+${snapshot.id}`));
  await screenshot(page, 'pause-02-snapshot-picker');
  const before = new Set((await apiCall(service, 'GET', '/v1/sessions')).json.sessions.map((s) => s.id));
  await row.locator('button.snapshot-open').click();
  await page.waitForURL((url) => url.hash.startsWith('#session/') && !before.has(decodeURIComponent(url.hash.slice(9))));
  const opened = decodeURIComponent(new URL(page.url()).hash.slice(9));
  await page.locator('.session-head .badge-running').waitFor();
  const read = await fetch(`${service.url}/v1/sessions/${opened}/files/content?path=kept.txt`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(await read.text(), 'kept', 'the session opened from the snapshot has its files');

  await page.goto(`${service.url}/#sessions`);
  await row.locator('button.snapshot-delete').click();
  await row.locator('button.snapshot-delete').click();
  await page.locator('#snapshots-empty:not([hidden])').waitFor();
  assert.deepEqual((await apiCall(service, 'GET', '/v1/snapshots')).json.snapshots, []);
  assert.deepEqual(pageErrors, []);
});
