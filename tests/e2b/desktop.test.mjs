// The official E2B Desktop SDK for JavaScript (@e2b/desktop), unchanged, against sandboxd's
// embedded default config: Sandbox.create() opens the template `desktop`. Run by
// test_desktop.py, which starts the service, builds the desktop runtime and sets E2B_API_URL,
// E2B_SANDBOX_URL and E2B_API_KEY as `sandboxd e2b env` prints them.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Sandbox } from '@e2b/desktop';

let desktop;

before(async () => {
  desktop = await Sandbox.create({ timeoutMs: 600_000 });
});

after(async () => {
  await desktop?.kill();
});

async function eventually(probe, what) {
  for (let i = 0; i < 100; i++) {
    const value = await probe().catch(() => null);
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not happen`);
}

test('screen, screenshot and mouse', async () => {
  assert.deepEqual(await desktop.getScreenSize(), { width: 1024, height: 768 });
  const png = Buffer.from(await desktop.screenshot());
  assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1024, 768]);
  await desktop.moveMouse(120, 240);
  assert.deepEqual(await desktop.getCursorPosition(), { x: 120, y: 240 });
});

test('an application launched, typed into, a key pressed', async () => {
  await desktop.launch('xfce4-terminal');
  await eventually(async () => (await desktop.getApplicationWindows('Xfce4-terminal')).filter(Boolean).length, 'a terminal window');
  // Keys go to the terminal once its shell runs: a process whose parent is the terminal.
  await eventually(
    async () => (await desktop.commands.run('pgrep -P "$(pgrep -d, -x xfce4-terminal)" || true')).stdout.trim(),
    "the terminal's shell",
  );
  await desktop.leftClick(512, 384);
  await desktop.write('echo node-$((6 * 7)) > /tmp/node-typed.txt');
  await desktop.press('enter');
  const typed = await eventually(async () => (await desktop.files.read('/tmp/node-typed.txt')).trim(), 'the typed command');
  assert.equal(typed, 'node-42');
});

test('the noVNC stream through the port proxy', async () => {
  await desktop.stream.start();
  assert.match(desktop.stream.getUrl(), new RegExp(`6080-${desktop.sandboxId}\\..*/vnc\\.html`));
  const page = await fetch(`${process.env.E2B_API_URL}/v1/sessions/${desktop.sandboxId}/ports/6080/vnc.html`, {
    headers: { Authorization: `Bearer ${process.env.E2B_API_KEY}` },
  });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /noVNC/);
  await desktop.stream.stop();
});
