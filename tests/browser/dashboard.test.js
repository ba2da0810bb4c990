// The dashboard as an operator uses it: Debian's Chromium (driven by playwright-core) against
// a real sandboxd on loopback and the real Docker engine. The steps run in order on one page;
// each asserts what a person would see. Screenshots of every tab go to test-output/screenshots/.
//
// Run: (cd tests/browser && npm ci) && node --test tests/browser/
// (scripts/test.sh does this after the Rust tests.)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { startService, launchBrowser, apiCall, screenshot, TOKEN, REBIND_HOST } from './harness.js';

const STEP_TIMEOUT = 30_000;

let service;
let browserHandle;
let context;
let page;
let sessionId;
const dialogs = [];
const requestUrls = [];
const pageErrors = [];

before(async () => {
  service = await startService();
  browserHandle = await launchBrowser();
  context = await browserHandle.browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  context.setDefaultTimeout(STEP_TIMEOUT);
  // Anything the page's policy refuses is recorded, so a test can say there was none.
  await context.addInitScript(() => {
    // The subprotocols each WebSocket offers, so a test can say no token was among them.
    window.__socketProtocols = [];
    const NativeWebSocket = window.WebSocket;
    window.WebSocket = class extends NativeWebSocket {
      constructor(url, protocols) {
        window.__socketProtocols.push([].concat(protocols ?? []));
        super(url, protocols);
      }
    };
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__violations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample || ''}`);
    });
  });
  page = await context.newPage();
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  page.on('request', (request) => requestUrls.push(request.url()));
  page.on('websocket', (socket) => requestUrls.push(socket.url()));
  page.on('pageerror', (error) => pageErrors.push(error.message));
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

const text = (selector) => page.locator(selector).first().innerText();

async function waitForText(selector, expected, timeout = STEP_TIMEOUT) {
  await page.waitForFunction(
    ([sel, want]) => {
      const element = document.querySelector(sel);
      return element && element.textContent.includes(want);
    },
    [selector, expected],
    { timeout },
  );
}

/** Reads until the text matches or the step's time is up, then asserts on the last read. */
async function untilMatches(read, pattern) {
  const deadline = Date.now() + STEP_TIMEOUT;
  let last = await read();
  while (!pattern.test(last) && Date.now() < deadline) {
    await page.waitForTimeout(100);
    last = await read();
  }
  assert.match(last, pattern);
}

async function runInTerminal(command) {
  const before = await page.locator('.subpanel-terminal .entry').count();
  await page.fill('.subpanel-terminal .term-input', command);
  await page.press('.subpanel-terminal .term-input', 'Enter');
  const entry = page.locator('.subpanel-terminal .entry').nth(before);
  await entry.locator('.entry-status:not(.running)').waitFor();
  return entry;
}

async function openSubtab(name) {
  await page.click(`a.subtab[data-subtab="${name}"]`);
  await page.locator(`.subpanel-${name}:not([hidden])`).waitFor();
}

async function shot(name, options) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name, options);
}

test('the page is served with a strict security policy', async () => {
  const response = await fetch(`${service.url}/`);
  assert.equal(response.status, 200);
  const csp = response.headers.get('content-security-policy');
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self';/);
  assert.match(csp, /style-src 'self' 'nonce-[A-Za-z0-9+/=]+';/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /connect-src 'self' ws:\/\/127\.0\.0\.1:\d+/);
  assert.doesNotMatch(csp, /unsafe/);
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
  const html = await response.text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  assert.doesNotMatch(html, /\sstyle=/, 'no style attribute');
  assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handler');
  const second = await fetch(`${service.url}/`);
  assert.notEqual(second.headers.get('content-security-policy'), csp, 'a fresh nonce per answer');
});

test('a page reached through another host name (DNS rebinding) gets nothing', async () => {
  const port = new URL(service.url).port;
  const other = await context.newPage();
  const response = await other.goto(`http://${REBIND_HOST}:${port}/`);
  assert.equal(response.status(), 403);
  const body = JSON.parse(await response.text());
  assert.equal(body.error.code, 'forbidden_host');
  await other.close();
});

test('a wrong token shows the error state, and no token is kept', async () => {
  await page.goto(`${service.url}/`);
  await page.locator('#signin:not([hidden])').waitFor();
  await page.fill('#signin-token', 'not-the-token-at-all');
  await page.click('#signin-submit');
  await page.locator('#signin-error:not([hidden])').waitFor();
  assert.match(await text('#signin-error'), /refused this token/);
  assert.equal(await text('#conn-text'), 'token refused');
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  assert.ok(await page.locator('#app').isHidden());
  await shot('00-sign-in-refused');
});

test('signing in shows the live figures and the empty state', async () => {
  await page.fill('#signin-token', TOKEN);
  await page.click('#signin-submit');
  await page.locator('#app:not([hidden])').waitFor();
  await waitForText('#conn-text', 'connected');
  await waitForText('#stat-runtimes', '2');
  assert.equal(await text('#stat-sessions'), '0');
  assert.match(await text('#stat-sessions-caption'), /of 6 at most/);
  assert.equal(await text('#stat-memory'), '0 B');
  await page.locator('#sessions-empty:not([hidden])').waitFor();
  assert.match(await text('#sessions-empty'), /No open sessions\.\s+Create one here, or let an agent open its own\./);
  assert.match(await text('.create-note'), /set per runtime by the operator, not per session\. Pick a different runtime to change them\./);
  // Kept for this tab only: session storage, no cookie.
  assert.equal((await context.cookies()).length, 0);
  assert.equal(await page.evaluate(() => document.cookie), '');
  await shot('01-sessions-empty');
});

test('opening a session from the form shows it, and the figures follow', async () => {
  await page.selectOption('#create-runtime', 'python');
  assert.match(await text('#create-limits'), /256 MiB memory · 0\.5 CPUs · 128 processes · no network/);
  // The operator's description, as text: markup in it is shown, never parsed.
  assert.equal(await text('#create-description'), 'Python <b>3.11</b> & friends');
  assert.equal(await page.locator('#create-description b').count(), 0);
  await page.fill('#create-tenant', 'team-a');
  await page.click('#create-submit');
  await page.locator('#session-view:not([hidden]) .session-id').waitFor();
  sessionId = (await text('#session-view .session-id')).trim();
  assert.match(sessionId, /^[0-9a-f]{24}$/);
  assert.ok(page.url().includes(`#session/${sessionId}`));
  await waitForText('#session-view .facts', 'team-a');
  await waitForText('#stat-sessions', '1');
  const listed = await apiCall(service, 'GET', '/v1/sessions');
  assert.deepEqual(listed.json.sessions.map((s) => s.tenant), ['team-a']);
});

test('a command runs in the terminal and its output shows', async () => {
  const entry = await runInTerminal('echo hi && ls /');
  const output = await entry.locator('.entry-out').innerText();
  assert.match(output, /^hi$/m);
  assert.match(output, /^workspace$/m);
  assert.match(await entry.locator('.entry-status').innerText(), /exit 0/);
  assert.ok(await entry.locator('.entry-status.ok').count());
});

test('a failing command shows its exit code and its stderr apart', async () => {
  const entry = await runInTerminal('echo to-stdout; echo oops >&2; exit 3');
  assert.match(await entry.locator('.entry-status.fail').innerText(), /exit 3/);
  assert.equal((await entry.locator('.out-stderr').innerText()).trim(), 'oops');
  assert.equal((await entry.locator('.out-stdout').innerText()).trim(), 'to-stdout');
});

test('the arrow keys walk the command history', async () => {
  const input = page.locator('.subpanel-terminal .term-input');
  await input.focus();
  await input.press('ArrowUp');
  assert.equal(await input.inputValue(), 'echo to-stdout; echo oops >&2; exit 3');
  await input.press('ArrowUp');
  assert.equal(await input.inputValue(), 'echo hi && ls /');
  await input.press('ArrowDown');
  await input.press('ArrowDown');
  assert.equal(await input.inputValue(), '');
});

test('a long command streams its output as it comes', async () => {
  const before = await page.locator('.subpanel-terminal .entry').count();
  // The pause is long enough that "still running" below holds on a loaded machine too, where
  // the first line may take a second or two to reach the page.
  await page.fill('.subpanel-terminal .term-input', 'echo first; sleep 6; echo second');
  await page.press('.subpanel-terminal .term-input', 'Enter');
  const entry = page.locator('.subpanel-terminal .entry').nth(before);
  await entry.locator('.out-stdout').waitFor();
  await waitForText('.subpanel-terminal .entry:last-child .entry-out', 'first');
  // The first line is on the page while the command still runs.
  assert.ok(await entry.locator('.entry-status.running').count(), 'still running');
  assert.doesNotMatch(await entry.locator('.entry-out').innerText(), /second/);
  await entry.locator('.entry-status.ok').waitFor();
  assert.match(await entry.locator('.entry-out').innerText(), /first\s+second/);
});

test('Stop interrupts a running command', async () => {
  const before = await page.locator('.subpanel-terminal .entry').count();
  await page.fill('.subpanel-terminal .term-input', 'echo waiting; sleep 60');
  await page.press('.subpanel-terminal .term-input', 'Enter');
  const entry = page.locator('.subpanel-terminal .entry').nth(before);
  await entry.locator('.out-stdout').waitFor();
  await page.click('.subpanel-terminal .term-prompt button:has-text("Stop")');
  await entry.locator('.entry-status.fail').waitFor({ timeout: 15_000 });
  assert.match(await entry.locator('.entry-status').innerText(), /signal 2|exit 130/);
});

test('the Source pane runs python source with the interpreter', async () => {
  await page.fill('.source-text', 'import sys\nprint(sum(range(10)))\nprint("warn", file=sys.stderr)\n');
  await page.click('.source button:has-text("Run")');
  const entry = page.locator('.subpanel-terminal .entry').last();
  await entry.locator('.entry-status.ok').waitFor();
  assert.match(await entry.locator('.entry-cmd').innerText(), /python3 -/);
  assert.equal((await entry.locator('.out-stdout').innerText()).trim(), '45');
  assert.equal((await entry.locator('.out-stderr').innerText()).trim(), 'warn');
  await shot('02-session-terminal');
});

const uploaded = randomBytes(200 * 1024);

test('a file uploads and is listed, with the policy cap shown', async () => {
  await openSubtab('files');
  await waitForText('.subpanel-files .files-cap', 'Uploads up to 8 MiB');
  await page.setInputFiles('.subpanel-files input[type=file]', { name: 'data.bin', mimeType: 'application/octet-stream', buffer: uploaded });
  const row = page.locator('.subpanel-files tr[data-name="data.bin"]');
  await row.waitFor();
  assert.match(await row.innerText(), /200 KiB/);
});

test('the uploaded file downloads with the same bytes', async () => {
  const row = page.locator('.subpanel-files tr[data-name="data.bin"]');
  const [download] = await Promise.all([page.waitForEvent('download'), row.locator('button:has-text("Download")').click()]);
  assert.equal(download.suggestedFilename(), 'data.bin');
  const file = await download.path();
  assert.ok(Buffer.compare(fs.readFileSync(file), uploaded) === 0, 'the same bytes');
  await shot('03-session-files');
});

test('a file is deleted after a confirmation', async () => {
  await apiCall(service, 'PUT', `/v1/sessions/${sessionId}/files/content?path=${encodeURIComponent('/workspace/scratch.txt')}`, 'scratch');
  await page.click('.subpanel-files button[aria-label="Refresh"]');
  const row = page.locator('.subpanel-files tr[data-name="scratch.txt"]');
  await row.waitFor();
  await row.locator('button:has-text("Delete")').click();
  await row.locator('button:has-text("Really delete?")').click();
  await row.waitFor({ state: 'detached' });
  const listing = await apiCall(service, 'GET', `/v1/sessions/${sessionId}/files?path=/workspace`);
  assert.deepEqual(listing.json.entries.map((e) => e.name), ['data.bin']);
});

test('the activity log shows the operations, from the dashboard, without payloads', async () => {
  await openSubtab('activity');
  await page.locator('.subpanel-activity tbody tr').first().waitFor();
  await waitForText('.subpanel-activity tbody', 'read_file');
  const rows = await page.locator('.subpanel-activity tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({ action: tr.dataset.action, iface: tr.dataset.interface, text: tr.innerText })),
  );
  const actions = new Set(rows.map((r) => r.action));
  for (const action of ['open', 'write_file', 'read_file', 'delete_file', 'list_files']) {
    assert.ok(actions.has(action), `${action} is in the log (${[...actions].join(', ')})`);
  }
  assert.ok(actions.has('process_start') || actions.has('exec'), 'commands are in the log');
  for (const action of ['open', 'write_file', 'read_file', 'delete_file', 'list_files']) {
    assert.ok(rows.some((r) => r.action === action && r.iface === 'dashboard'), `${action} made here says "dashboard"`);
  }
  // The test itself wrote scratch.txt and listed the directory through the API.
  assert.ok(rows.every((r) => r.iface === 'dashboard' || r.iface === 'api'));
  const all = rows.map((r) => r.text).join('\n');
  assert.doesNotMatch(all, /oops|to-stdout|sum\(range/, 'no command argument, output or source is recorded');
  assert.match(await text('.subpanel-activity .prose'), /Payloads are never\s+recorded .* most recent 200 entries per session\./s);
  await shot('04-session-activity');
});

test('the interactive shell runs what is typed and shows its output', async () => {
  await openSubtab('shell');
  await page.locator('.subpanel-shell .shell-state[data-state="connected"]').waitFor();
  await page.click('.subpanel-shell .xterm');
  await page.keyboard.type('cd /tmp && echo "in $(pwd): $((6*7))"\n');
  await waitForText('.subpanel-shell .xterm-rows', 'in /tmp: 42');
  // The shell keeps its working directory, unlike the terminal's separate commands.
  await page.keyboard.type('pwd\n');
  await page.waitForFunction(() => /^\/tmp$/m.test(document.querySelector('.subpanel-shell .xterm-rows').innerText));
  await shot('05-session-shell');
  await page.keyboard.type('exit\n');
  await waitForText('.subpanel-shell .xterm-rows', 'the shell ended: exit 0');
  await page.locator('.subpanel-shell .shell-state[data-state="exited"]').waitFor();
  // The socket presented a single-use ticket, never the long-lived token.
  const offered = await page.evaluate(() => window.__socketProtocols);
  assert.ok(offered.length >= 1);
  for (const protocols of offered) {
    assert.equal(protocols.length, 2, String(protocols));
    assert.equal(protocols[0], 'sandboxd');
    assert.match(protocols[1], /^ticket\.[0-9a-f]{64}$/);
  }
});

test('Kill processes ends what commands left running, and the session stays', async () => {
  // A leftover no timeout reaches: it left its command's process group.
  const detached = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/exec`, {
    command: 'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo started',
  });
  assert.equal(detached.json.stdout, 'started\n');
  await page.click('.session-head button:has-text("Kill processes")');
  await page.click('.session-head button:has-text("Kill them all?")');
  await waitForText('.session-head .killed', 'Killed');
  assert.match(await text('.session-head .killed'), /^Killed [1-9]\d* process(es)?\.$/);
  await shot('05b-session-processes-killed');
  const left = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/exec`, {
    command: "ps -o args | grep -c '^sleep 300' || true",
  });
  assert.equal(left.json.stdout, '0\n');
  assert.match(await text('.session-head'), /running/i, 'the session is still open');
});

test('names and tenants with markup are shown as text, and no script runs', async () => {
  // Made through the API, as an agent (or an attacker in a sandbox) could.
  const created = await apiCall(service, 'POST', '/v1/sessions', {
    runtime: 'sh',
    tenant: '<b>t</b><img src=x onerror=window.__xss=1>',
  });
  assert.equal(created.status, 201);
  const hostile = created.json.id;
  const names = ['<img src=x onerror=alert(1)>', '<img src=x onerror=window.__xss=1>', '"><svg onload=window.__xss=2>'];
  for (const name of names) {
    const put = await apiCall(service, 'PUT', `/v1/sessions/${sessionId}/files/content?path=${encodeURIComponent(`/workspace/${name}`)}`, 'x');
    assert.equal(put.status, 200, JSON.stringify(put.json));
  }
  await page.click('#tab-sessions');
  const tenantCell = page.locator(`#sessions-body tr[data-session="${hostile}"] td.tenant`);
  await tenantCell.waitFor();
  assert.equal(await tenantCell.innerText(), '<b>t</b><img src=x onerror=window.__xss=1>');
  assert.equal(await page.locator('#sessions-body b, #sessions-body img').count(), 0);
  await shot('06-sessions-two-open');

  await page.goto(`${service.url}/#session/${sessionId}/files`);
  await page.locator('.subpanel-files:not([hidden]) tr[data-name="data.bin"]').waitFor();
  for (const name of names) {
    const row = page.locator('.subpanel-files tr').filter({ has: page.locator('.file-name', { hasText: name }) });
    assert.equal(await row.locator('.file-name').innerText(), name);
  }
  assert.equal(await page.locator('.subpanel-files tbody img, .subpanel-files tbody script').count(), 0);
  await page.goto(`${service.url}/#session/${hostile}/terminal`);
  await waitForText('#session-view .facts', '<b>t</b>');
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  const closed = await apiCall(service, 'DELETE', `/v1/sessions/${hostile}`);
  assert.equal(closed.status, 200);
});

test('the runtime allowlist, the config in force and the policy are shown', async () => {
  await page.click('#tab-runtimes');
  const python = page.locator('#runtimes-body tr[data-runtime="python"]');
  await python.waitFor();
  // Polled: a refresh or a late route change can re-render the table between two reads, and
  // innerText of a row not laid out at that instant loses its line breaks (CI saw it once).
  await untilMatches(
    async () => (await python.locator('td, th').allInnerTexts()).join(' | '),
    /python\s+Python <b>3\.11<\/b> & friends \| sandboxd\/python:3\.11-bookworm\s*ready \| 256 MiB \| 0\.5 \| 128 \| none \| 16 MiB \| python3/,
  );
  assert.match(await page.locator('#runtimes-body tr[data-runtime="sh"]').innerText(), /default/);
  await waitForText('#config-toml', '[runtimes.python]');
  const toml = await text('#config-toml');
  assert.match(toml, /description = "Python <b>3\.11<\/b> & friends"/);
  assert.match(toml, /token = "<redacted>"/);
  assert.doesNotMatch(toml, new RegExp(TOKEN));
  assert.match(toml, /mem_limit = "256m"/);
  assert.match(toml, /max_upload_bytes = "8m"/);
  const policy = await text('#policy-list');
  assert.match(policy, /Largest upload\s.*\s8 MiB/s);
  assert.match(policy, /Command timeout\s.*\s30 s/s);
  assert.match(await text('#panel-runtimes'), /a request may name an alias, nothing else/);
  assert.match(await text('#panel-runtimes'), /read-only here, on purpose/);
  assert.equal(await page.locator('#panel-runtimes a[href="/docs/api"]').count(), 1, 'the API reference is linked');
  await shot('07-runtimes-and-policy');
});

test('the page fits a narrow window', async () => {
  await page.setViewportSize({ width: 420, height: 860 });
  await page.click('#tab-sessions');
  await page.locator('#sessions-body tr').first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no sideways scrolling (${overflow}px too wide)`);
  await shot('08-narrow-sessions', { fullPage: true });
  await page.goto(`${service.url}/#session/${sessionId}/terminal`);
  await page.locator('.subpanel-terminal:not([hidden])').waitFor();
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(wide <= 0, `no sideways scrolling in the session view (${wide}px too wide)`);
  await shot('09-narrow-session', { fullPage: true });
  await page.click('#tab-runtimes');
  await page.locator('#runtimes-body tr').first().waitFor();
  await shot('10-narrow-runtimes', { fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
});

test('closing the session from the table takes Sessions from 1 to 0', async () => {
  await page.click('#tab-sessions');
  await waitForText('#stat-sessions', '1');
  const row = page.locator(`#sessions-body tr[data-session="${sessionId}"]`);
  await row.locator('button:has-text("Close")').click();
  await row.locator('button:has-text("Really close?")').click();
  await waitForText('#stat-sessions', '0');
  // The closed session stays in the table, as ended with why, until it is dismissed.
  await row.locator('.badge-ended').waitFor();
  assert.match(await row.innerText(), /closed by the client/);
  await row.locator('button:has-text("Dismiss")').click();
  // The session closed through the API earlier is there as ended too.
  const dismiss = page.locator('#sessions-body button:has-text("Dismiss"):visible');
  while (await dismiss.count()) await dismiss.first().click();
  await page.locator('#sessions-empty:not([hidden])').waitFor();
  const info = await apiCall(service, 'GET', `/v1/sessions/${sessionId}`);
  assert.equal(info.json.state, 'ended');
  // The page learns of the end as it happens; the close entry is written just after.
  let close;
  for (let i = 0; i < 50 && !close; i += 1) {
    const log = await apiCall(service, 'GET', `/v1/sessions/${sessionId}/activity`);
    close = log.json.entries.find((e) => e.action === 'close');
    if (!close) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(close.interface, 'dashboard');
  assert.equal(close.status, 'ok');
});

test('the token never appears in a URL, and no page error happened', async () => {
  assert.ok(requestUrls.length > 10);
  const leaked = requestUrls.filter((url) => url.includes(TOKEN) || url.includes(Buffer.from(TOKEN).toString('base64url')));
  assert.deepEqual(leaked, []);
  assert.deepEqual(pageErrors, []);
});

test('an unreachable service is shown as such', async () => {
  await service.stop();
  await waitForText('#conn-text', 'unreachable', 15_000);
  await page.locator('#offline:not([hidden])').waitFor();
  assert.match(await text('#offline'), /does not answer/);
  await shot('11-unreachable');
});
