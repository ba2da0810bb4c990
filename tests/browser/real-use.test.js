// The dashboard under real use, in Debian's Chromium against a real sandboxd and Docker:
// endless and large output, Stop during a flood, the table holding still, files opened and
// edited, OOM named, a session removed outside, an image build's progress, one activity entry
// per command. Screenshots of each view at 1440x900 and 390x844 are written to
// tests/browser/screenshots/ (kept with the tests).
//
// Run: (cd tests/browser && npm ci) && node --test tests/browser/

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { startService, launchBrowser, apiCall, TOKEN, ROOT } from './harness.js';

const STEP_TIMEOUT = 30_000;
const SHOTS = path.join(ROOT, 'tests/browser/screenshots');
/** How long `yes` floods the terminal while the page is measured (issue 55's "Done when"). */
const FLOOD_MS = 10_000;
/** The tab's JS heap stays under this while `yes` floods it, and after 100 MB of output. */
const HEAP_BOUND_BYTES = 64 << 20;
/** The main thread never stalls this much longer during the flood than a blank page's in the
 * same seconds (the issue saw 401 ms). */
const STALL_BOUND_MS = 100;
/** The heartbeat's period: a timer asked for every HEARTBEAT_MS, its lateness is a stall. */
const HEARTBEAT_MS = 10;
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

// A recipe no earlier run built: its first step is unique, so no layer cache answers it.
const STAMP = randomBytes(6).toString('hex');
const RECIPE = `t21-${STAMP}`;
const EXTRA_CONFIG = `
[runtimes.slow]
runtime = "${RECIPE}"

[recipes.${RECIPE}]
base = "${process.env.SANDBOXD_TEST_BUSYBOX_IMAGE || 'sandboxd/busybox:local'}"
description = "a build slow enough to watch"
steps = ["RUN echo ${STAMP} > /stamp", "RUN sleep 2", "RUN sleep 2", "RUN sleep 2"]
`;

let service;
let browserHandle;
let context;
let page;
let sessionId;
const pageErrors = [];

before(async () => {
  service = await startService({ extraConfig: EXTRA_CONFIG });
  browserHandle = await launchBrowser();
  context = await browserHandle.browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  context.setDefaultTimeout(STEP_TIMEOUT);
  await context.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__longTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: 'longtask', buffered: true });
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  fs.mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
  removeRecipeImages();
});

function removeRecipeImages() {
  try {
    const ids = execFileSync('docker', ['images', '-q', `sandboxd/recipe-${RECIPE}`], { encoding: 'utf8' }).split('\n').filter(Boolean);
    if (ids.length) execFileSync('docker', ['rmi', '-f', ...new Set(ids)], { stdio: 'ignore' });
  } catch {
    // nothing built, or the engine is gone
  }
}

async function waitForText(selector, expected, timeout = STEP_TIMEOUT) {
  await page.waitForFunction(
    ([sel, want]) => [...document.querySelectorAll(sel)].some((e) => e.textContent.includes(want)),
    [selector, expected],
    { timeout },
  );
}

async function openSubtab(name) {
  await page.click(`a.subtab[data-subtab="${name}"]`);
  await page.locator(`.subpanel-${name}:not([hidden])`).waitFor();
}

/** Types a command into the terminal; returns its entry. */
async function startInTerminal(command) {
  const before = await page.locator('.subpanel-terminal .entry').count();
  await page.fill('.subpanel-terminal .term-input', command);
  await page.press('.subpanel-terminal .term-input', 'Enter');
  return page.locator('.subpanel-terminal .entry').nth(before);
}

async function runInTerminal(command) {
  const entry = await startInTerminal(command);
  await entry.locator('.entry-status:not(.running)').waitFor();
  return entry;
}

/** Screenshots of the page as it is, at the desktop and the phone size. */
async function shots(name) {
  for (const [size, viewport] of [['1440', DESKTOP], ['390', PHONE]]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${size}.png`) });
    // Nothing makes the page scroll sideways; the tabs fit their bar.
    const fit = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      tabs: [...document.querySelectorAll('.tabs, .subtabs')].map((bar) => bar.scrollWidth - bar.clientWidth),
    }));
    assert.ok(fit.page <= 0, `${name} at ${size} px: ${fit.page} px too wide`);
    assert.ok(fit.tabs.every((over) => over <= 0), `${name} at ${size} px: tabs cut by ${fit.tabs}`);
  }
  await page.setViewportSize(DESKTOP);
}

/** In the page: a timer asked for every `period` ms; its greatest lateness is a stall. */
function startHeartbeat(period) {
  const beat = { late: 0, beats: 0 };
  let due = performance.now() + period;
  const tick = () => {
    const now = performance.now();
    beat.late = Math.max(beat.late, now - due);
    beat.beats += 1;
    due = now + period;
    beat.timer = setTimeout(tick, period);
  };
  beat.timer = setTimeout(tick, period);
  window.__beat = beat;
}

async function heapUsed() {
  const cdp = await context.newCDPSession(page);
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  await cdp.detach();
  return usedSize;
}

test('sign in and open a session', async () => {
  await page.goto(`${service.url}/`);
  await page.fill('#signin-token', TOKEN);
  await page.click('#signin-submit');
  await page.locator('#app:not([hidden])').waitFor();
  const created = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'sh' });
  assert.equal(created.status, 201);
  sessionId = created.json.id;
  await page.goto(`${service.url}/#session/${sessionId}/terminal`);
  await page.locator('.subpanel-terminal:not([hidden]) .term-input').waitFor();
  // The one timeout rule, said in the terminal.
  await waitForText('.subpanel-terminal .term-note', 'at most 30 s (policy.default_timeout_secs)');
});

test('yes floods the terminal for 10 s: no main-thread stall 100 ms over a blank page, the heap under 64 MiB, Stop ends it within 2 s', async () => {
  const entry = await startInTerminal('yes');
  await entry.locator('.out-gap:not([hidden])').waitFor();
  // The main thread's stalls: the long tasks Chromium reports, and the lateness of a timer
  // asked for every HEARTBEAT_MS (what a click or a key press would wait for). The floor: the
  // same timer on a blank page of another browser context (so another renderer process), over
  // the same seconds: what the machine's own load does to any page.
  const floorContext = await browserHandle.browser.newContext();
  const floorPage = await floorContext.newPage();
  await page.evaluate(() => {
    window.__longTasks = [];
  });
  await Promise.all([page, floorPage].map((p) => p.evaluate(startHeartbeat, HEARTBEAT_MS)));
  const cdp = await context.newCDPSession(page);
  let heap = 0;
  for (const until = Date.now() + FLOOD_MS; Date.now() < until;) {
    await page.waitForTimeout(500);
    heap = Math.max(heap, (await cdp.send('Runtime.getHeapUsage')).usedSize);
  }
  await cdp.detach();
  const { late, beats, longest, tasks } = await page.evaluate(() => {
    clearTimeout(window.__beat.timer);
    const lengths = window.__longTasks.map((t) => t.duration);
    return { ...window.__beat, longest: Math.max(0, ...lengths), tasks: lengths.length };
  });
  const floor = await floorPage.evaluate(() => {
    clearTimeout(window.__beat.timer);
    return window.__beat;
  });
  await floorContext.close();
  const stall = Math.max(late, longest);
  console.log(`# during ${FLOOD_MS / 1000} s of yes: longest stall ${stall.toFixed(0)} ms (timer late by ${late.toFixed(0)} ms over ${beats} beats; ${tasks} long tasks, the longest ${longest.toFixed(0)} ms), a blank page's timer late by ${floor.late.toFixed(0)} ms, JS heap at most ${(heap / 1048576).toFixed(1)} MiB`);
  // Lines are counted, not kept on the page.
  const gap = await entry.locator('.out-gap').innerText();
  const shown = await entry.locator('.out-lines').evaluateAll((pres) => pres.reduce((n, pre) => n + pre.textContent.split('\n').length, 0));
  await shots('01-terminal-flood');
  // Stopped before the bounds are asserted, so a failure here leaves no flood to the next test.
  const stopped = Date.now();
  await page.click('.subpanel-terminal button.term-stop');
  await entry.locator('.entry-status:not(.running)').waitFor({ timeout: 5000 });
  const stopTook = Date.now() - stopped;
  console.log(`# Stop ended yes in ${stopTook} ms`);
  assert.ok(beats > FLOOD_MS / HEARTBEAT_MS / 4, `the heartbeat ran ${beats} times`);
  assert.ok(floor.beats > FLOOD_MS / HEARTBEAT_MS / 4, `the blank page's heartbeat ran ${floor.beats} times`);
  assert.ok(stall < STALL_BOUND_MS + floor.late, `the main thread stalled ${stall.toFixed(0)} ms (a blank page ${floor.late.toFixed(0)} ms)`);
  assert.ok(heap < HEAP_BOUND_BYTES, `the heap reached ${heap} bytes`);
  assert.match(gap, /earlier lines? not shown; download the full output/);
  assert.ok(shown <= 1200, `${shown} lines on the page`);
  assert.ok(stopTook <= 2000, `Stop took ${stopTook} ms`);
  assert.match(await entry.locator('.entry-status').innerText(), /interrupted/);
});

test('seq 1 200000 renders without a long task over 200 ms, its start and end shown, the cut said', async () => {
  await page.click('.subpanel-terminal button:has-text("Clear")');
  // The observer sees long tasks: a deliberate one of 250 ms is reported.
  await page.evaluate(() => {
    setTimeout(() => {
      const until = performance.now() + 250;
      while (performance.now() < until);
    }, 0);
  });
  await page.waitForFunction(() => window.__longTasks.some((t) => t.duration >= 240));
  await page.evaluate(() => {
    window.__longTasks = [];
  });
  const entry = await runInTerminal('seq 1 200000');
  await page.waitForTimeout(300);
  const tasks = await page.evaluate(() => window.__longTasks);
  const longest = Math.max(0, ...tasks.map((t) => t.duration));
  console.log(`# seq 1 200000: ${tasks.length} long tasks, the longest ${longest.toFixed(0)} ms`);
  assert.ok(longest <= 200, `a long task of ${longest} ms`);
  const text = await entry.locator('.entry-out').innerText();
  assert.match(text, /^1\n2\n3\n/);
  assert.match(text, /\n200000\s*$/);
  assert.match(text, /earlier lines? not shown/);
  const status = await entry.locator('.entry-status').innerText();
  assert.match(status, /exit 0/);
  // 1.3 MB is more than the 256 KiB per stream the service keeps: said as cut, not as lost
  // (where in the text depends on what the page received while streaming; the status always).
  assert.match(status, /output cut: more came than the service keeps \(256 KiB per stream/);
  assert.doesNotMatch(text + status, /dropped while away/);
  // The download holds what the page received: from the first line to the last.
  const [download] = await Promise.all([page.waitForEvent('download'), entry.locator('.out-gap a.out-download').click()]);
  const saved = fs.readFileSync(await download.path(), 'utf8');
  assert.match(saved, /^1\n2\n3\n/);
  assert.match(saved, /\n199999\n200000\n$/);
  await shots('02-terminal-seq');
});

test('output written in big chunks keeps every line counted, the newest 200 drawn during a flood and 1000 after', async () => {
  const seen = await page.evaluate(async () => {
    const { OutputView } = await import('/assets/js/output.js');
    const view = new OutputView();
    const numbers = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');
    view.write('stdout', numbers(1, 50));
    view.write('stdout', `${numbers(51, 30000)}30001 (a line still being wr`);
    view.write('stdout', `itten)\n${numbers(30002, 90000)}end`);
    const lines = (pre) => pre.textContent.split('\n');
    const [head, tail] = view.element.querySelectorAll('.out-lines');
    // Drawn while it comes, a flood shows its newest 200 lines; once it calms, all 1000.
    view.draw({ live: true });
    const flood = lines(tail).length;
    while (lines(tail).length === flood) await new Promise((resolve) => setTimeout(resolve, 50));
    return { head: lines(head), tail: lines(tail), flood, gap: view.gap.textContent, lines: view.lines };
  });
  assert.equal(seen.flood, 201);
  assert.equal(seen.lines, 90000);
  assert.deepEqual(seen.head.slice(0, 2), ['1', '2']);
  assert.equal(seen.head.at(-2), '100');
  assert.equal(seen.tail[0], '89001');
  assert.equal(seen.tail.at(-1), 'end');
  assert.equal(seen.tail.length, 1001);
  assert.match(seen.gap, /^88,900 earlier lines not shown/);
});

test('a 100 MB stream leaves the tab responsive and its heap bounded', async () => {
  const entry = await runInTerminal('yes | head -c 100000000');
  assert.match(await entry.locator('.entry-status').innerText(), /exit 0 · output cut/);
  const heap = await heapUsed();
  console.log(`# after 100 MB of output: JS heap ${(heap / 1048576).toFixed(1)} MiB`);
  assert.ok(heap < HEAP_BOUND_BYTES, `the heap is ${heap} bytes`);
  const answered = await page.evaluate(() => new Promise((resolve) => {
    const asked = performance.now();
    setTimeout(() => resolve(performance.now() - asked), 0);
  }));
  assert.ok(answered < STALL_BOUND_MS, `a task waited ${answered} ms`);
});

test('the transcript and the Source text survive a reload', async () => {
  await page.fill('.source-text', 'echo from the source pane\n');
  await page.waitForTimeout(700);
  await page.reload();
  await page.locator('.subpanel-terminal:not([hidden]) .entry').first().waitFor();
  assert.equal(await page.inputValue('.source-text'), 'echo from the source pane\n');
  const seq = page.locator('.subpanel-terminal .entry').filter({ hasText: 'seq 1 200000' });
  assert.match(await seq.locator('.entry-out').innerText(), /^1\n2\n3\n[^]*\n200000\s*$/);
  assert.match(await seq.locator('.entry-status').innerText(), /exit 0/);
  await page.click('.source button:has-text("Run")');
  const entry = page.locator('.subpanel-terminal .entry').last();
  await entry.locator('.entry-status.ok').waitFor();
  assert.equal((await entry.locator('.out-stdout').innerText()).trim(), 'from the source pane');
});

test('OOM is named', async () => {
  // A shell holding 200 MB in a variable, in a sandbox of 128 MiB.
  const entry = await runInTerminal("x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived");
  const status = await entry.locator('.entry-status').innerText();
  assert.match(status, /out of memory: the kernel killed it \(the sandbox's memory limit is 128 MiB\)/);
  assert.doesNotMatch(await entry.locator('.entry-out').innerText().catch(() => ''), /survived/);
});

test('the activity log has one entry per terminal command, from the dashboard, Ctrl+C interrupted', async () => {
  const fresh = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'sh' });
  const id = fresh.json.id;
  await page.goto(`${service.url}/#session/${id}/terminal`);
  await page.locator('.subpanel-terminal:not([hidden]) .term-input').waitFor();
  await runInTerminal('echo one');
  await runInTerminal('cd /tmp && ls -a');
  const sleeping = await startInTerminal('for i in 1 2 3; do sleep 20; done');
  await page.locator('.subpanel-terminal button.term-stop:not([hidden])').waitFor();
  await page.press('.subpanel-terminal .term-input', 'Control+c');
  await sleeping.locator('.entry-status:not(.running)').waitFor();
  assert.match(await sleeping.locator('.entry-status').innerText(), /interrupted/);
  await page.fill('.source-text', 'echo sourced\n');
  await page.click('.source button:has-text("Run")');
  await page.locator('.subpanel-terminal .entry').last().locator('.entry-status.ok').waitFor();
  let entries = [];
  for (let i = 0; i < 30; i += 1) {
    entries = (await apiCall(service, 'GET', `/v1/sessions/${id}/activity`)).json.entries.reverse();
    if (entries.filter((e) => e.action === 'process_start').length === 4) break;
    await page.waitForTimeout(100);
  }
  const commands = entries.filter((e) => e.action.startsWith('process') || e.action === 'exec');
  // In the order recorded; the signal and the command it ended may come either way round.
  const seen = commands.map((e) => [e.action, e.target, e.status, e.interface].join(' ')).sort();
  assert.deepEqual(seen, [
    'process_signal sleep ok dashboard',
    'process_start echo ok dashboard',
    'process_start ls ok dashboard',
    'process_start sh ok dashboard',
    'process_start sleep interrupted dashboard',
  ]);
  await openSubtab('activity');
  await page.locator('.subpanel-activity tbody tr[data-status="interrupted"]').waitFor();
  await shots('03-session-activity');
  await openSubtab('shell');
  await page.locator('.subpanel-shell .shell-state[data-state="connected"]').waitFor();
  await page.click('.subpanel-shell .xterm');
  await page.keyboard.type('echo in-the-shell\n');
  await waitForText('.subpanel-shell .xterm-rows', 'in-the-shell');
  await shots('04-session-shell');
  await page.keyboard.type('exit\n');
  await page.locator('.subpanel-shell .shell-state[data-state="exited"]').waitFor();
  let pty;
  for (let i = 0; i < 30 && !pty; i += 1) {
    pty = (await apiCall(service, 'GET', `/v1/sessions/${id}/activity`)).json.entries.find((e) => e.action === 'pty');
    if (!pty) await page.waitForTimeout(100);
  }
  assert.equal(pty.interface, 'dashboard', 'the interactive shell is the dashboard\'s');
  await apiCall(service, 'DELETE', `/v1/sessions/${id}`);
});

/** A small PNG drawn in Node: a gradient of `size` x `size`. */
function png(size) {
  const rows = [];
  for (let y = 0; y < size; y += 1) {
    const row = Buffer.alloc(1 + size * 3);
    for (let x = 0; x < size; x += 1) row.set([x * 4, y * 4, 160], 1 + x * 3);
    rows.push(row);
  }
  const chunk = (type, data) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

test('a text file opens with line numbers, is edited, saved and read back', async () => {
  const put = (name, body) => apiCall(service, 'PUT', `/v1/sessions/${sessionId}/files/content?path=${encodeURIComponent(`/workspace/${name}`)}`, body);
  assert.equal((await put('notes.txt', 'first line\nsecond line\n')).status, 200);
  assert.equal((await put('picture.png', new Uint8Array(png(64)))).status, 200);
  assert.equal((await put('blob.bin', new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]))).status, 200);
  await page.goto(`${service.url}/#session/${sessionId}/files`);
  const row = page.locator('.subpanel-files tr[data-name="notes.txt"]');
  await row.waitFor();
  await row.locator('a.file-name').click();
  const viewer = page.locator('.subpanel-files .viewer');
  await viewer.locator('.viewer-code').waitFor();
  assert.equal(await viewer.locator('.viewer-lines').innerText(), '1\n2');
  assert.equal(await viewer.locator('.viewer-code').innerText(), 'first line\nsecond line');
  await shots('05-files-text');
  await viewer.locator('button:has-text("Edit")').click();
  await viewer.locator('textarea.viewer-editor').fill('first line\nsecond line, edited\nthird line\n');
  await shots('06-files-editor');
  await viewer.locator('button:has-text("Save")').click();
  await waitForText('.subpanel-files .viewer-status', 'Saved');
  assert.equal(await viewer.locator('.viewer-lines').innerText(), '1\n2\n3');
  const read = await fetch(`${service.url}/v1/sessions/${sessionId}/files/content?path=/workspace/notes.txt`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.equal(await read.text(), 'first line\nsecond line, edited\nthird line\n');
});

test('an image file is shown, another binary described', async () => {
  await page.locator('.subpanel-files tr[data-name="picture.png"] a.file-name').click();
  const image = page.locator('.subpanel-files .viewer img.viewer-image');
  await image.waitFor();
  await page.waitForFunction(() => document.querySelector('.viewer-image')?.naturalWidth === 64);
  await waitForText('.subpanel-files .viewer-facts', '64 × 64');
  await shots('07-files-image');
  await page.locator('.subpanel-files tr[data-name="blob.bin"] a.file-name').click();
  await waitForText('.subpanel-files .viewer-binary', 'an executable (ELF)');
});

test('a symlink says what it leads to, and opens it: a file in the viewer, a folder in the list', async () => {
  const made = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/exec`, {
    command: 'cd /workspace && mkdir -p deep/er && ln -s notes.txt to-notes && ln -s deep/er to-deep && ln -s /nowhere broken && echo made',
  });
  assert.equal(made.json.stdout, 'made\n');
  await page.click('.subpanel-files button[aria-label="Refresh"]');
  const link = (name) => page.locator(`.subpanel-files tr[data-name="${name}"][data-type="symlink"]`);
  await link('to-notes').waitFor();
  assert.match(await link('to-notes').innerText(), /to-notes\s*→ a file/);
  assert.match(await link('to-deep').innerText(), /→ a folder/);
  assert.match(await link('broken').innerText(), /→ nowhere/);
  await link('to-notes').locator('a.file-name').click();
  const viewer = page.locator('.subpanel-files .viewer');
  await waitForText('.subpanel-files .viewer-title', '/workspace/notes.txt');
  assert.match(await viewer.locator('.viewer-code').innerText(), /^first line/);
  await waitForText('.subpanel-files .files-status', 'to-notes → notes.txt');
  await link('broken').locator('a.file-name').click();
  await waitForText('.subpanel-files .files-status', 'broken → /nowhere: it leads nowhere');
  await link('to-deep').locator('a.file-name').click();
  await page.waitForFunction(() => document.querySelector('.subpanel-files .path-form input')?.value === '/workspace/deep/er');
  await page.locator('.subpanel-files .path-form input').fill('/workspace');
  await page.press('.subpanel-files .path-form input', 'Enter');
  await link('to-notes').waitFor();
  const removed = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/exec`, { command: 'cd /workspace && rm -r deep to-notes to-deep broken' });
  assert.equal(removed.json.exit_code, 0);
  await page.click('.subpanel-files button[aria-label="Refresh"]');
  await link('to-notes').waitFor({ state: 'detached' });
});

test('new file, new folder and rename', async () => {
  await page.click('.subpanel-files button:has-text("New folder")');
  await page.fill('.subpanel-files .name-form input', 'docs');
  await page.press('.subpanel-files .name-form input', 'Enter');
  await page.locator('.subpanel-files tr[data-name="docs"][data-type="dir"]').waitFor();
  await page.click('.subpanel-files button:has-text("New file")');
  await page.fill('.subpanel-files .name-form input', 'todo.txt');
  await page.press('.subpanel-files .name-form input', 'Enter');
  await page.locator('.subpanel-files .viewer textarea.viewer-editor').waitFor();
  await page.fill('.subpanel-files .viewer textarea.viewer-editor', 'write the tests\n');
  await page.click('.subpanel-files .viewer button:has-text("Save")');
  await waitForText('.subpanel-files .viewer-status', 'Saved');
  const row = page.locator('.subpanel-files tr[data-name="todo.txt"]');
  await row.locator('button:has-text("Rename")').click();
  await page.fill('.subpanel-files .name-form input', 'done.txt');
  await page.press('.subpanel-files .name-form input', 'Enter');
  await page.locator('.subpanel-files tr[data-name="done.txt"]').waitFor();
  const listing = await apiCall(service, 'GET', `/v1/sessions/${sessionId}/files?path=/workspace`);
  const names = listing.json.entries.map((e) => e.name).sort();
  assert.deepEqual(names, ['blob.bin', 'docs', 'done.txt', 'notes.txt', 'picture.png']);
  await shots('08-files-list');
});

test('the Close confirmation survives a refresh of the table', async () => {
  await page.click('#tab-sessions');
  const row = page.locator(`#sessions-body tr[data-session="${sessionId}"]`);
  await row.waitFor();
  const before = await page.locator('#sessions-updated').innerText();
  await row.locator('button:has-text("Close")').click();
  // Wait for the next refresh of the figures (every 2 s).
  await page.waitForFunction((text) => document.getElementById('sessions-updated').textContent !== text, before);
  await page.waitForTimeout(200);
  assert.equal(await row.locator('button.armed').innerText(), 'Really close?');
  await shots('09-sessions');
});

test('a session removed outside shows as ended within 2 s, with why', async () => {
  const other = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'sh' });
  const id = other.json.id;
  const row = page.locator(`#sessions-body tr[data-session="${id}"]`);
  await row.locator('.badge-running').waitFor();
  const ids = execFileSync('docker', ['ps', '-q', '--filter', `label=org.sandboxd.session=${id}`], { encoding: 'utf8' }).split('\n').filter(Boolean);
  assert.equal(ids.length, 1);
  const removed = Date.now();
  execFileSync('docker', ['rm', '-f', ...ids], { stdio: 'ignore' });
  await row.locator('.badge-ended').waitFor({ timeout: 5000 });
  const took = Date.now() - removed;
  console.log(`# a session removed outside showed as ended after ${took} ms`);
  assert.ok(took <= 2000, `it took ${took} ms`);
  assert.match(await row.innerText(), /its sandbox stopped/);
  assert.ok(await row.locator('button:has-text("Dismiss")').isVisible());
  assert.ok(await row.locator('button:has-text("Close")').isHidden());
  await page.goto(`${service.url}/#session/${id}/files`);
  await waitForText('#session-view .alert', 'This session ended');
  const pane = await page.locator('.subpanel-files').innerText();
  assert.doesNotMatch(pane, /\/v1\/|os error/);
  await shots('10-session-ended');
});

test('opening a session on a runtime not built yet shows the build, step by step', async () => {
  await page.click('#tab-sessions');
  await page.selectOption('#create-runtime', 'slow');
  await page.click('#create-submit');
  await waitForText('#create-build', 'step', 60_000);
  assert.match(await page.locator('#create-build').innerText(), /Building the runtime's image \(a session waits for it\): step \d of \d/);
  await shots('11-build-progress');
  await page.locator('#session-view:not([hidden]) .session-id').waitFor({ timeout: 120_000 });
  await page.click('#tab-runtimes');
  await page.locator('#runtimes-body tr[data-runtime="slow"] .state-ready').waitFor();
  await shots('12-runtimes');
});

test('no page error and no policy violation happened', async () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
});
