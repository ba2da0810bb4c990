// The session's Ports pane in the dashboard: Debian's Chromium against a real sandboxd and
// Docker. A server started in the session is listed with its process; one click opens it in a
// new tab through a share link, which shows the server's page without the token.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startService, launchBrowser, apiCall, screenshot, signIn, TOKEN } from './harness.js';

const PORT = 8000;
const MARKER = `preview-${randomBytes(6).toString('hex')}`;

let service;
let browserHandle;
let context;
let page;
let pageErrors;
let sessionId;

before(async () => {
  service = await startService();
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'python' });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  sessionId = opened.json.id;
  const page_html = `<!doctype html><title>preview</title><h1 id="marker">${MARKER}</h1>`;
  const written = await apiCall(service, 'PUT', `/v1/sessions/${sessionId}/files/content?path=index.html`, page_html);
  assert.equal(written.status, 200, JSON.stringify(written.json));
  const started = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/processes`, {
    command: `python3 -m http.server ${PORT}`,
    timeout_secs: 120,
  });
  assert.equal(started.status, 201, JSON.stringify(started.json));
  browserHandle = await launchBrowser();
  ({ context, page, pageErrors } = await signIn(browserHandle, service));
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

test('the ports pane lists the server and one click opens its page in a new tab', async () => {
  await page.goto(`${service.url}/#session/${sessionId}/ports`);
  const row = page.locator(`.ports-table tr[data-port="${PORT}"]`);
  await row.waitFor();
  assert.match(await row.innerText(), /python3 \(pid \d+\)/);
  await screenshot(page, 'ports-01-listed');
  // On a phone the pane and the session's tabs fit the width.
  await page.setViewportSize({ width: 390, height: 844 });
  const over = await page.evaluate(() => [document.documentElement, ...document.querySelectorAll('.subtabs')].map((e) => e.scrollWidth - e.clientWidth));
  assert.ok(over.every((px) => px <= 0), `too wide by ${over} px at 390 px`);
  await screenshot(page, 'ports-01-listed-390');
  await page.setViewportSize({ width: 1280, height: 800 });

  const [preview] = await Promise.all([context.waitForEvent('page'), row.locator('button.open-preview').click()]);
  await preview.waitForURL(/\/p\/[0-9a-f]{62}\/$/);
  await preview.locator('#marker').waitFor();
  assert.equal(await preview.locator('#marker').innerText(), MARKER);
  assert.ok(!preview.url().includes(TOKEN), 'the token is not in the preview URL');
  assert.equal(await preview.evaluate(() => window.opener), null, 'the preview cannot reach the dashboard');
  await screenshot(preview, 'ports-02-preview');

  // The link is the session's, made by the dashboard, and its opening is in the log.
  const shares = (await apiCall(service, 'GET', `/v1/sessions/${sessionId}/shares`)).json.shares;
  assert.equal(shares.length, 1);
  assert.equal(shares[0].port, PORT);
  const activity = (await apiCall(service, 'GET', `/v1/sessions/${sessionId}/activity`)).json.entries;
  const made = activity.find((e) => e.action === 'share_port');
  assert.equal(made?.interface, 'dashboard', JSON.stringify(made));
  assert.match(await page.locator('.subpanel-ports .alert-info').innerText(), /opened in a new tab/);
  assert.deepEqual(pageErrors, []);
});
