// The session's Network pane in the dashboard: Debian's Chromium against a real sandboxd and
// Docker, with an egress runtime whose names resolve nowhere (a name server on loopback where
// none listens), so nothing leaves the machine. The pane shows the runtime's allow-list and
// the session's, narrows it through its form (what GET /v1/sessions/{id}/network answers
// then), refuses a widening, and lists a connection the proxy refused inside the sandbox.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startService, launchBrowser, apiCall, screenshot, signIn } from './harness.js';

const EGRESS = ['allowed.test', 'files.allowed.test', '*.pkg.test'];
const PYTHON = process.env.SANDBOXD_TEST_PYTHON_IMAGE || 'sandboxd/python:3.11-bookworm';

let service;
let browserHandle;
let page;
let pageErrors;
let sessionId;
let plainId;

before(async () => {
  service = await startService({
    extraConfig: `
[runtimes.net]
image = "${PYTHON}"
mem_limit = "256m"
network_mode = "egress"
egress = ${JSON.stringify(EGRESS)}

[egress]
upstream_dns = ["127.0.0.1:9"]
`,
  });
  for (const [runtime, set] of [
    ['net', (id) => (sessionId = id)],
    ['sh', (id) => (plainId = id)],
  ]) {
    const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime });
    assert.equal(opened.status, 201, JSON.stringify(opened.json));
    set(opened.json.id);
  }
  browserHandle = await launchBrowser();
  ({ page, pageErrors } = await signIn(browserHandle, service));
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

const rules = (which) => page.locator(`.subpanel-network .${which}-rules li`).allInnerTexts();

test('the network pane shows the lists, narrows through its form and lists a refused connection', async () => {
  await page.goto(`${service.url}/#session/${sessionId}/network`);
  await page.locator('.subpanel-network .session-rules li.rule').first().waitFor();
  assert.ok(await page.locator('a.subtab[data-subtab="network"]').isVisible(), 'an egress runtime is offered the Network tab');
  assert.deepEqual(await rules('runtime'), EGRESS);
  assert.deepEqual(await rules('session'), EGRESS);
  assert.match(await page.locator('.network-narrowed').innerText(), /the runtime's/);
  assert.equal(await page.locator('.network-input').inputValue(), EGRESS.join('\n'));
  await screenshot(page, 'network-01-lists');

  // A widening is refused, with the rule named, and changes nothing.
  await page.fill('.network-input', 'allowed.test\nevil.test');
  await page.click('.network-save');
  await page.locator('.subpanel-network .alert-error:not([hidden])').waitFor();
  assert.match(await page.locator('.subpanel-network .alert-error').innerText(), /"evil\.test" is not allowed by runtime "net"/);
  assert.deepEqual((await apiCall(service, 'GET', `/v1/sessions/${sessionId}/network`)).json.egress, EGRESS);

  // Narrowed through the form: the API answers the new list, and the pane says so.
  await page.fill('.network-input', 'allowed.test');
  await page.click('.network-save');
  await page.locator('.subpanel-network .alert-info:not([hidden])').waitFor();
  assert.deepEqual((await apiCall(service, 'GET', `/v1/sessions/${sessionId}/network`)).json.egress, ['allowed.test']);
  assert.deepEqual(await rules('session'), ['allowed.test']);
  assert.deepEqual(await rules('runtime'), EGRESS);
  assert.match(await page.locator('.network-narrowed').innerText(), /narrowed/);
  const changed = (await apiCall(service, 'GET', `/v1/sessions/${sessionId}/activity`)).json.entries.find((e) => e.action === 'set_network');
  assert.equal(changed?.interface, 'dashboard', JSON.stringify(changed));

  // A name narrowed away, fetched inside the sandbox: refused by the proxy, and the pane,
  // refreshing while it is open, lists it as refused.
  const fetched = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/exec`, {
    command: `python3 -c "
import urllib.request, urllib.error
try:
    urllib.request.urlopen('http://files.allowed.test/', timeout=15)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())"`,
  });
  assert.match(fetched.json.stdout, /^403 refused by policy/, JSON.stringify(fetched.json));
  const row = page.locator('.connections-table tr[data-target="files.allowed.test:80"]');
  await row.waitFor();
  assert.equal(await row.getAttribute('data-outcome'), 'refused');
  assert.match(await row.innerText(), /refused[\s\S]*not on this sandbox's egress allow-list/);
  await screenshot(page, 'network-02-refused');
  // On a phone the pane fits the width (its table scrolls inside its own box).
  await page.setViewportSize({ width: 390, height: 844 });
  const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(over <= 0, `too wide by ${over} px at 390 px`);
  await screenshot(page, 'network-02-refused-390');
  await page.setViewportSize({ width: 1280, height: 800 });

  // Back to the runtime's whole list.
  await page.click('.network-reset');
  await page.waitForFunction(() => document.querySelector('.network-narrowed')?.textContent.includes("the runtime's"));
  assert.deepEqual((await apiCall(service, 'GET', `/v1/sessions/${sessionId}/network`)).json.egress, EGRESS);
  assert.deepEqual(pageErrors, []);
});

test('a session whose runtime has no egress says so', async () => {
  await page.goto(`${service.url}/#session/${plainId}/network`);
  const note = page.locator('.subpanel-network .network-note');
  await note.waitFor();
  assert.match(await note.innerText(), /Runtime "sh" has no egress network \(network mode "none"\)/);
  assert.equal(await page.locator('.subpanel-network .network-body').isHidden(), true);
  assert.ok(await page.locator('a.subtab[data-subtab="network"]').isHidden(), 'no Network tab offered without egress');
  assert.deepEqual(pageErrors, []);
});
