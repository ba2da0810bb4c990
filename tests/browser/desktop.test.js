// The live view of a desktop session in the dashboard, and take-over: Debian's Chromium
// against a real sandboxd and Docker, in a session of the catalogue's `desktop` recipe (built
// through the service on first use, about four minutes cold; kept like any recipe build).
// The Screen pane shows the screen (pixels on noVNC's canvas); while view-only nothing the
// person does reaches the sandbox, and the service enforces it (a client that sends input
// anyway over the same WebSocket has it dropped); after Take over, clicks and typing do reach
// it (checked in the sandbox with xdotool and files a typed command writes); taking over and
// giving back are in the activity log. The sessions table marks desktops.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startService, launchBrowser, signIn, apiCall, screenshot, TOKEN } from './harness.js';

let service;
let browserHandle;
let page;
let pageErrors;
let sessionId;
let plainId;

/** Builds the desktop runtime's image through the service, read to the end of its stream. */
async function build() {
  const response = await fetch(`${service.url}/v1/runtimes/desktop/build`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
  const text = await response.text();
  assert.equal(response.status, 200, text.slice(-2000));
  const last = JSON.parse(text.split('\n').filter(Boolean).pop());
  assert.equal(last.state, 'ready', text.slice(-2000));
}

async function exec(command) {
  const ran = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/exec`, { command });
  assert.equal(ran.status, 200, JSON.stringify(ran.json));
  return ran.json;
}

async function computer(body) {
  const answer = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/computer`, body);
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return answer.json;
}

async function pointer() {
  return (await computer({ action: 'cursor_position' })).cursor;
}

/** Waits for `probe()` to answer something truthy (each try is a request; gives up after 60). */
async function until(probe, what) {
  for (let i = 0; i < 60; i += 1) {
    const seen = await probe();
    if (seen) return seen;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** What a file in the sandbox holds, once it exists. */
function fileText(path) {
  return until(async () => {
    const ran = await exec(`cat ${path} 2>/dev/null`);
    return ran.exit_code === 0 && ran.stdout ? ran.stdout.trim() : null;
  }, path);
}

async function activity() {
  const answer = await apiCall(service, 'GET', `/v1/sessions/${sessionId}/activity`);
  assert.equal(answer.status, 200);
  return answer.json.entries;
}

/** A terminal on the screen, focused, ready for typed commands. */
async function focusedTerminal() {
  // The first computer action starts the display.
  assert.deepEqual((await computer({ action: 'screen_size' })).screen, { width: 1024, height: 768 });
  await exec('DISPLAY=:0 setsid -f xfce4-terminal >/tmp/terminal.log 2>&1');
  await until(async () => (await exec('DISPLAY=:0 xdotool search --onlyvisible --class Xfce4-terminal')).stdout.trim(), 'a terminal window').catch(async (error) => {
    throw new Error(`${error.message}: ${(await exec('cat /tmp/terminal.log')).stdout}`);
  });
  await exec('DISPLAY=:0 xdotool search --onlyvisible --class Xfce4-terminal windowactivate --sync windowmove 0 0 windowsize 800 600');
  await computer({ action: 'click', x: 400, y: 300 });
}

/** Clicks the live view where the screen's point (x, y) is. */
async function clickScreen(x, y) {
  const canvas = page.locator('.screen-view canvas');
  const box = await canvas.boundingBox();
  await canvas.click({ position: { x: (x * box.width) / 1024, y: (y * box.height) / 768 } });
}

before(async () => {
  service = await startService({
    extraConfig: `
[runtimes.desktop]
runtime = "desktop"
mem_limit = "2g"
cpus = 2.0
pids_limit = 1024
tmpfs_size = "512m"

[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]
`,
  });
  // The first use builds the image (about four minutes when nothing is cached).
  await build();
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'desktop' });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  sessionId = opened.json.id;
  const plain = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'sh' });
  assert.equal(plain.status, 201, JSON.stringify(plain.json));
  plainId = plain.json.id;
  // The display (started by the first action) and a terminal on it.
  await focusedTerminal();
  browserHandle = await launchBrowser();
  ({ page, pageErrors } = await signIn(browserHandle, service, { viewport: { width: 1280, height: 900 }, timeout: 60_000 }));
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

test('the sessions table marks desktops, and only they have a Screen tab', async () => {
  await page.goto(`${service.url}/#sessions`);
  const desktopRow = page.locator(`tr[data-session="${sessionId}"]`);
  await desktopRow.locator('.pill-desktop').waitFor();
  assert.equal(await desktopRow.locator('.pill-desktop').innerText(), 'desktop');
  assert.equal(await page.locator(`tr[data-session="${plainId}"] .pill-desktop`).isVisible(), false);

  await page.goto(`${service.url}/#session/${plainId}/terminal`);
  await page.locator('.session-head .pill', { hasText: 'sh' }).waitFor();
  assert.equal(await page.locator('a.subtab[data-subtab="screen"]').isVisible(), false, 'no Screen tab for a plain runtime');
  await page.goto(`${service.url}/#session/${sessionId}/terminal`);
  await page.locator('a.subtab[data-subtab="screen"]:not([hidden])').waitFor();
});

test('the Screen tab shows the desktop live, view-only: a click and typing change nothing', async () => {
  const started = Date.now();
  await page.click('a.subtab[data-subtab="screen"]');
  await page.locator('.screen-state[data-state="connected"]').waitFor();
  // Pixels: the canvas is the screen's size and shows more than one colour.
  const drawn = await until(
    () =>
      page.evaluate(() => {
        const canvas = document.querySelector('.screen-view canvas');
        if (!canvas || canvas.width !== 1024 || canvas.height !== 768) return null;
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        const colours = new Set();
        for (let i = 0; i < pixels.length && colours.size < 64; i += 4 * 97) colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
        return colours.size > 8 ? colours.size : null;
      }),
    'the screen drawn on the canvas',
  );
  console.log(`# first frame on the canvas ${Date.now() - started} ms after opening the tab (${drawn}+ colours sampled)`);
  // A change on the screen reaches the canvas: the terminal moved away from (50, 50). Measured,
  // not asserted: the exec's own round trip is part of it, and said apart.
  const changed = page.evaluate(
    () =>
      new Promise((resolve) => {
        const context = document.querySelector('.screen-view canvas').getContext('2d');
        const pixel = () => context.getImageData(50, 50, 1, 1).data.join();
        const first = pixel();
        const check = (tries) => {
          if (pixel() !== first) resolve(Date.now());
          else if (tries > 6000) resolve(null);
          else setTimeout(() => check(tries + 1), 4);
        };
        check(0);
      }),
  );
  const moveSent = Date.now();
  await exec('DISPLAY=:0 xdotool search --onlyvisible --class Xfce4-terminal windowmove 100 100');
  const moveDone = Date.now();
  const seen = await changed;
  assert.ok(seen, 'the moved window shows on the canvas');
  console.log(`# a window moved by exec shows on the canvas ${seen - moveSent} ms after the exec was sent (the exec itself took ${moveDone - moveSent} ms)`);
  assert.equal(await page.locator('.screen-state').innerText(), 'view-only');
  assert.equal(await page.locator('input.take-over').isChecked(), false);
  await screenshot(page, 'session-screen');

  // View-only: a click elsewhere and keys typed into the view reach nothing.
  await clickScreen(900, 700);
  await page.keyboard.type('zzz');
  await page.keyboard.press('Enter');
  // Take over and type a command that records where the pointer is: the click above did not
  // move it (it is where the REST click left it), and the keys above did not reach the
  // terminal (they would have prefixed the command).
  await page.locator('input.take-over').check();
  await page.locator('.screen-state', { hasText: 'you have control' }).waitFor();
  await page.keyboard.type('xdotool getmouselocation --shell > /tmp/pos.txt; echo typed-$((6 * 7)) > /tmp/typed.txt');
  await page.keyboard.press('Enter');
  assert.equal(await fileText('/tmp/typed.txt'), 'typed-42');
  const position = await fileText('/tmp/pos.txt');
  assert.match(position, /^X=400\nY=300\n/, `the view-only click moved the pointer: ${position}`);
  const history = await exec('cat /tmp/typed.txt /tmp/pos.txt; ls /tmp');
  assert.doesNotMatch(history.stdout, /zzz/);
});

test('after Take over a click reaches the sandbox, and giving back stops it', async () => {
  assert.equal(await page.locator('input.take-over').isChecked(), true);
  await clickScreen(200, 150);
  const moved = await until(async () => {
    const at = await pointer();
    return Math.abs(at.x - 200) <= 2 && Math.abs(at.y - 150) <= 2 ? at : null;
  }, 'the pointer at the clicked point');
  assert.ok(moved);

  await page.locator('input.take-over').uncheck();
  await page.locator('.screen-state', { hasText: 'view-only' }).waitFor();
  await computer({ action: 'mouse_move', x: 10, y: 10 });
  await clickScreen(600, 500);
  await page.keyboard.type('yyy');
  // The next entry written after those is the REST action's: the pointer is still at 10,10.
  assert.deepEqual(await pointer(), { x: 10, y: 10 });

  const entries = await activity();
  const actions = entries.map((e) => e.action);
  const takeOver = entries.find((e) => e.action === 'computer_take_over');
  const giveBack = entries.find((e) => e.action === 'computer_give_back');
  assert.ok(takeOver && giveBack, `take-over entries: ${actions.join(' ')}`);
  assert.equal(takeOver.interface, 'dashboard');
  assert.equal(takeOver.status, 'ok');
  assert.ok(entries.indexOf(takeOver) !== entries.indexOf(giveBack));
});

test('the service drops input while view-only, whatever the client sends', async () => {
  // A client of the same WebSocket that sends keys and a pointer move without taking over,
  // then takes over and types a command: only the command arrives.
  await computer({ action: 'click', x: 400, y: 300 });
  const ticket = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/tickets`, {});
  assert.equal(ticket.status, 200);
  const result = await page.evaluate(
    async ({ id, ticket: presented }) => {
      const socket = new WebSocket(`ws://${location.host}/v1/sessions/${id}/computer/view`, ['sandboxd', `ticket.${presented}`]);
      socket.binaryType = 'arraybuffer';
      let received = new Uint8Array(0);
      let wake = null;
      socket.onmessage = (event) => {
        const data = new Uint8Array(event.data);
        const joined = new Uint8Array(received.length + data.length);
        joined.set(received);
        joined.set(data, received.length);
        received = joined;
        if (wake) wake();
      };
      const closed = new Promise((resolve) => {
        socket.onclose = (event) => resolve({ code: event.code, reason: event.reason });
      });
      const receive = async (n) => {
        while (received.length < n) {
          await Promise.race([new Promise((resolve) => { wake = resolve; }), closed]);
          if (socket.readyState === WebSocket.CLOSED) throw new Error(`closed after ${received.length} bytes`);
        }
      };
      await new Promise((resolve, reject) => {
        socket.onopen = resolve;
        socket.onerror = reject;
      });
      const send = (bytes) => socket.send(new Uint8Array(bytes));
      const key = (keysym, down) => [4, down ? 1 : 0, 0, 0, (keysym >>> 24) & 255, (keysym >>> 16) & 255, (keysym >>> 8) & 255, keysym & 255];
      const typed = (text) => [...text].flatMap((c) => [...key(c.charCodeAt(0), true), ...key(c.charCodeAt(0), false)]);
      await receive(12);
      send([...new TextEncoder().encode('RFB 003.008\n')]);
      await receive(12 + 2);
      send([1]);
      await receive(12 + 2 + 4);
      send([1]);
      await receive(12 + 2 + 4 + 24);
      // View-only: keys and a pointer move, which the page itself would never send.
      send([...typed('qqq'), 5, 0, 0, 100, 0, 100]);
      socket.send(JSON.stringify({ type: 'take_over' }));
      send([...typed('xdotool getmouselocation --shell > /tmp/rawpos.txt; echo raw-ok > /tmp/raw.txt'), ...key(0xff0d, true), ...key(0xff0d, false)]);
      // A screen update asked for after the keys: once it is answered they were read.
      const before = received.length;
      send([3, 0, 0, 0, 0, 0, 4, 0, 3, 0]);
      await receive(before + 4);
      socket.close(1000);
      return closed;
    },
    { id: sessionId, ticket: ticket.json.ticket },
  );
  assert.equal(result.code, 1000, JSON.stringify(result));
  assert.equal(await fileText('/tmp/raw.txt'), 'raw-ok');
  const position = await fileText('/tmp/rawpos.txt');
  assert.match(position, /^X=400\nY=300\n/, `the view-only pointer move reached the screen: ${position}`);
  const refused = await until(
    async () => (await activity()).find((e) => e.action === 'computer_input_refused'),
    'the refused input in the activity log',
  );
  assert.match(refused.target, /^7 input messages while view-only$/);
  assert.deepEqual(pageErrors, []);
});

test('a viewer message the service cannot size, or an unknown text message, closes the view (1008)', async () => {
  const closes = [];
  for (const bad of [[99, 0, 0, 0], 'hello']) {
    const ticket = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/tickets`, {});
    closes.push(
      await page.evaluate(
        async ({ id, presented, message }) => {
          const socket = new WebSocket(`ws://${location.host}/v1/sessions/${id}/computer/view`, ['sandboxd', `ticket.${presented}`]);
          socket.binaryType = 'arraybuffer';
          const closed = new Promise((resolve) => {
            socket.onclose = (event) => resolve({ code: event.code, reason: event.reason });
          });
          await new Promise((resolve) => {
            socket.onopen = resolve;
          });
          socket.send(new Uint8Array([...new TextEncoder().encode('RFB 003.008\n'), 1, 1]));
          socket.send(typeof message === 'string' ? message : new Uint8Array(message));
          return closed;
        },
        { id: sessionId, presented: ticket.json.ticket, message: bad },
      ),
    );
  }
  assert.equal(closes[0].code, 1008, JSON.stringify(closes));
  assert.match(closes[0].reason, /client message type 99/);
  assert.equal(closes[1].code, 1008, JSON.stringify(closes));
  assert.match(closes[1].reason, /take_over/);
});

test('the activity pane lists the take-over; leaving the Screen tab ends the view with its bytes', async () => {
  await page.click('a.subtab[data-subtab="activity"]');
  await page.locator('.subpanel-activity tbody tr', { hasText: 'computer_take_over' }).first().waitFor();
  await page.locator('.subpanel-activity tbody tr', { hasText: 'computer_give_back' }).first().waitFor();
  const view = await until(
    async () => (await activity()).find((e) => e.action === 'computer_view' && e.interface === 'dashboard'),
    "the dashboard's view recorded at its end",
  );
  assert.equal(view.status, 'ok');
  assert.ok(view.bytes > 10_000, JSON.stringify(view));
  console.log(`# the dashboard's view carried ${view.bytes} bytes in ${view.duration_ms} ms`);
  assert.deepEqual(pageErrors, []);
});

test('Record makes a video of the screen in the sandbox, and Stop ends its file', async () => {
  const opened = Date.now();
  await page.click('a.subtab[data-subtab="screen"]');
  await page.locator('.screen-state[data-state="connected"]').waitFor();
  console.log(`# the view opened again (its VNC server running already) ${Date.now() - opened} ms after the click`);
  await page.click('button.record');
  await page.locator('.record-note', { hasText: 'Recording the screen to /workspace/screen-' }).waitFor();
  const started = await activity();
  const start = started.find((e) => e.action === 'computer_record_start');
  assert.match(start.target, /^\/workspace\/screen-\d+\.mp4$/);
  // A second recording is refused while this one runs.
  const again = await apiCall(service, 'POST', `/v1/sessions/${sessionId}/computer/recording`, {});
  assert.equal(again.status, 409);
  assert.equal(again.json.error.code, 'recording_running');
  // Something happens on the screen, then the recording is stopped.
  await exec('DISPLAY=:0 xdotool search --onlyvisible --class Xfce4-terminal windowmove 200 150');
  await page.locator('button.record', { hasText: 'Stop recording' }).click();
  await page.locator('.record-note', { hasText: 'Recorded /workspace/screen-' }).waitFor();
  const stop = (await activity()).find((e) => e.action === 'computer_record_stop');
  assert.equal(stop.target, start.target);
  assert.ok(stop.bytes > 1000, JSON.stringify(stop));
  // The file is a video of the screen: ffprobe in the sandbox reads its frames.
  const probe = await exec(`ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 ${start.target}`);
  const [codec, width, height, frames] = probe.stdout.trim().split(',');
  assert.deepEqual([codec, width, height], ['h264', '1024', '768'], probe.stdout + probe.stderr);
  assert.ok(Number(frames) >= 1, probe.stdout);
  console.log(`# a recording of ${frames} frames, ${stop.bytes} bytes; stopping took ${stop.duration_ms} ms`);
  const none = await apiCall(service, 'DELETE', `/v1/sessions/${sessionId}/computer/recording`);
  assert.equal(none.status, 409);
  assert.equal(none.json.error.code, 'no_recording');
  assert.deepEqual(pageErrors, []);
});
