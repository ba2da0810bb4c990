// The official E2B JavaScript SDK, unchanged, against sandboxd: the main flows of the Python
// suite. Run by test_node_sdk.py, which starts the service and sets E2B_API_URL,
// E2B_SANDBOX_URL, E2B_VOLUME_API_URL and E2B_API_KEY as `sandboxd e2b env` prints them (and E2B_TENANT_A/B), and
// E2B_JS_PACKAGE to the release to run: the name of package.json's dependency ('e2b', the newest,
// when unset, or an alias of an older release such as 'e2b-2.50').

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';

const {
  ALL_TRAFFIC,
  CommandExitError,
  FileType,
  FilesystemEventType,
  NotFoundError,
  Sandbox,
  Volume,
  VolumeError,
  VolumeNotFoundError,
  VolumePathNotFoundError,
} = await import(process.env.E2B_JS_PACKAGE || 'e2b');

let sandbox;

before(async () => {
  sandbox = await Sandbox.create({ metadata: { suite: 'node' }, envs: { GREETING: 'hi' }, timeoutMs: 300_000 });
});

after(async () => {
  await sandbox?.kill();
});

test('sandbox info, list, timeout and connect', async () => {
  const info = await sandbox.getInfo();
  assert.equal(info.sandboxId, sandbox.sandboxId);
  assert.deepEqual(info.metadata, { suite: 'node' });
  const listed = await Sandbox.list({ query: { metadata: { suite: 'node' } } }).nextItems();
  assert.deepEqual(listed.map((s) => s.sandboxId), [sandbox.sandboxId]);
  await sandbox.setTimeout(600_000);
  const remaining = (new Date((await sandbox.getInfo()).endAt) - Date.now()) / 1000;
  assert.ok(Math.abs(remaining - 600) < 15, `ends in ${remaining} s`);
  const again = await Sandbox.connect(sandbox.sandboxId);
  assert.equal((await again.commands.run('echo $GREETING')).stdout, 'hi\n');
});

test('commands: output, exit codes, background, stdin, reconnect', async () => {
  const result = await sandbox.commands.run('echo out; echo err >&2');
  assert.deepEqual([result.stdout, result.stderr, result.exitCode], ['out\n', 'err\n', 0]);
  await assert.rejects(sandbox.commands.run('exit 7'), (e) => e instanceof CommandExitError && e.exitCode === 7);

  const seen = [];
  await sandbox.commands.run('echo a; sleep 0.2; echo b >&2', {
    onStdout: (d) => seen.push(['out', d]),
    onStderr: (d) => seen.push(['err', d]),
  });
  assert.deepEqual(seen, [['out', 'a\n'], ['err', 'b\n']]);

  const reader = await sandbox.commands.run('read x; echo got $x', { background: true, stdin: true });
  await sandbox.commands.sendStdin(reader.pid, 'line\n');
  assert.equal((await reader.wait()).stdout, 'got line\n');

  const slow = await sandbox.commands.run('for i in 1 2 3 4; do echo n$i; sleep 0.4; done', { background: true });
  assert.ok((await sandbox.commands.list()).some((p) => p.pid === slow.pid));
  await slow.disconnect();
  const rejoined = await sandbox.commands.connect(slow.pid);
  assert.match((await rejoined.wait()).stdout, /n4\n/);

  const sleeper = await sandbox.commands.run('sleep 60', { background: true });
  assert.equal(await sandbox.commands.kill(sleeper.pid), true);
  await assert.rejects(sleeper.wait(), CommandExitError);
});

test('pty: input, resize, kill', async () => {
  const chunks = [];
  const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: (d) => chunks.push(Buffer.from(d)) });
  await sandbox.pty.resize(terminal.pid, { cols: 120, rows: 40 });
  await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('stty size; exit\n'));
  await terminal.wait();
  assert.match(Buffer.concat(chunks).toString(), /40 120/);
  const other = await sandbox.pty.create({ cols: 80, rows: 24, onData: () => {} });
  assert.equal(await sandbox.pty.kill(other.pid), true);
});

test('files: write, read, list, stat, make_dir, rename, remove, watch', async () => {
  await sandbox.files.write('node/hello.txt', 'hello');
  assert.equal(await sandbox.files.read('node/hello.txt'), 'hello');
  const bytes = new Uint8Array([0, 1, 2, 255]);
  await sandbox.files.write('node/b.bin', bytes.buffer);
  assert.deepEqual(new Uint8Array(await sandbox.files.read('node/b.bin', { format: 'bytes' })), bytes);
  await sandbox.files.write([
    { path: 'node/m1.txt', data: 'one' },
    { path: 'node/m2.txt', data: 'two' },
  ]);
  const names = (await sandbox.files.list('node')).map((e) => e.name).sort();
  assert.deepEqual(names, ['b.bin', 'hello.txt', 'm1.txt', 'm2.txt']);
  assert.equal(await sandbox.files.exists('node/nothing'), false);
  assert.equal(await sandbox.files.makeDir('node/dir'), true);
  assert.equal((await sandbox.files.getInfo('node/dir')).type, FileType.DIR);
  await sandbox.files.rename('node/m1.txt', 'node/dir/moved.txt');
  assert.equal(await sandbox.files.read('node/dir/moved.txt'), 'one');
  await sandbox.files.remove('node/dir');
  assert.equal(await sandbox.files.exists('node/dir'), false);

  const events = [];
  const watch = await sandbox.files.watchDir('node', (e) => events.push(e));
  await sandbox.files.write('node/watched.txt', 'x');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !events.some((e) => e.name === 'watched.txt')) {
    await new Promise((r) => setTimeout(r, 200));
  }
  await watch.stop();
  assert.ok(events.some((e) => e.name === 'watched.txt' && e.type === FilesystemEventType.CREATE), JSON.stringify(events));
});

test("a tenant cannot see another tenant's sandbox", async () => {
  const mine = await Sandbox.create({ apiKey: process.env.E2B_TENANT_A });
  try {
    await assert.rejects(Sandbox.getInfo(mine.sandboxId, { apiKey: process.env.E2B_TENANT_B }), NotFoundError);
    assert.equal(await Sandbox.kill(mine.sandboxId, { apiKey: process.env.E2B_TENANT_B }), false);
  } finally {
    await mine.kill();
  }
});

test('pause, then connect: files and a background process are still there', async () => {
  const box = await Sandbox.create({ metadata: { suite: 'node-pause' } });
  try {
    await box.files.write('kept.txt', 'before the pause');
    const counter = await box.commands.run('while true; do date +%s%N > /tmp/tick; sleep 0.2; done', { background: true });
    assert.equal(await box.pause(), true);
    const listed = await Sandbox.list({ query: { metadata: { suite: 'node-pause' }, state: ['paused'] } }).nextItems();
    assert.deepEqual(listed.map((s) => [s.sandboxId, s.state]), [[box.sandboxId, 'paused']]);
    const again = await Sandbox.connect(box.sandboxId);
    assert.equal((await again.getInfo()).state, 'running');
    assert.equal(await again.files.read('kept.txt'), 'before the pause');
    assert.ok((await again.commands.list()).some((p) => p.pid === counter.pid), 'the background process survived');
  } finally {
    await box.kill();
  }
});

test("network: allowOut narrows the egress template's list, updateNetwork changes it, a widening is refused", async () => {
  const box = await Sandbox.create('net', { network: { allowOut: ['allowed.test'], denyOut: [ALL_TRAFFIC] } });
  try {
    assert.deepEqual((await box.getInfo()).network?.allowOut, ['allowed.test']);
    await box.updateNetwork({ allowOut: ['x.pkg.test'], denyOut: [ALL_TRAFFIC] });
    assert.deepEqual((await box.getInfo()).network?.allowOut, ['x.pkg.test']);
    await assert.rejects(box.updateNetwork({ allowOut: ['evil.test'] }), /"evil\.test" is not on the egress list of template "net"/);
    await assert.rejects(Sandbox.create('net', { network: { allowOut: ['1.1.1.1'] } }), /never addresses/);
  } finally {
    await box.kill();
  }
});

test('volumes: mounted at create, files without a sandbox, no destroy while mounted', async () => {
  const volume = await Volume.create(`node-${randomBytes(4).toString('hex')}`);
  try {
    const box = await Sandbox.create({ volumeMounts: { '/home/user/data': volume }, metadata: { suite: 'node-volume' } });
    try {
      await box.commands.run('echo kept > /home/user/data/notes.txt');
      await assert.rejects(Volume.destroy(volume.volumeId), (e) => e instanceof VolumeError && /mounted by open sessions/.test(e.message));
    } finally {
      await box.kill();
    }
    assert.equal(await volume.readFile('notes.txt'), 'kept\n');
    assert.equal((await volume.writeFile('host.txt', 'from the host')).size, 13);
    assert.deepEqual((await volume.list('/')).map((e) => e.name).sort(), ['host.txt', 'notes.txt']);
    await assert.rejects(volume.readFile('nothing'), VolumePathNotFoundError);
  } finally {
    assert.equal(await Volume.destroy(volume.volumeId), true);
  }
  await assert.rejects(Volume.getInfo(volume.volumeId), VolumeNotFoundError);
});
