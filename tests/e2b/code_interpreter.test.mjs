// The official @e2b/code-interpreter JavaScript SDK, unchanged, against sandboxd: a sandbox of
// the `code-interpreter-v1` template (its default), every language it names, E2B's chart data and
// a timeout that interrupts the cell. Run by test_code_interpreter.py, which starts the service
// and sets E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY as `sandboxd e2b env` prints them, and
// E2B_JS_PACKAGE to the release to run: the name of package.json's dependency
// ('@e2b/code-interpreter', the newest, when unset, or an alias such as '@e2b/code-interpreter-2.7').

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

const { Sandbox } = await import(process.env.E2B_JS_PACKAGE || '@e2b/code-interpreter');

let sandbox;

before(async () => {
  sandbox = await Sandbox.create({ timeoutMs: 600_000 });
});

after(async () => {
  await sandbox?.kill();
});

test('every language keeps its state between runs', async () => {
  const languages = [
    ['python', 'n = 6 * 7', 'print(n)'],
    ['javascript', 'var n = 6 * 7;', 'console.log(n)'],
    ['typescript', 'const n: number = 6 * 7;', 'console.log(n)'],
    ['r', 'n <- 6 * 7', 'cat(n, fill = TRUE)'],
    ['java', 'int n = 6 * 7;', 'System.out.println(n);'],
    ['bash', 'n=$((6 * 7))', 'echo $n'],
  ];
  for (const [language, keep, show] of languages) {
    const kept = await sandbox.runCode(keep, { language });
    assert.equal(kept.error, undefined, `${language}: ${JSON.stringify(kept.error)}`);
    const shown = await sandbox.runCode(show, { language });
    assert.equal(shown.error, undefined, `${language}: ${JSON.stringify(shown.error)}`);
    assert.deepEqual(shown.logs.stdout, ['42\n'], language);
  }
});

test('a matplotlib figure comes back as a PNG and its chart data', async () => {
  const plot = await sandbox.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()');
  assert.equal(plot.error, undefined);
  const charted = plot.results.filter((result) => result.chart);
  assert.equal(charted.length, 1);
  assert.ok(charted[0].png.length > 100);
  assert.equal(charted[0].chart.type, 'line');
  assert.deepEqual(charted[0].chart.elements[0].points, [[0, 1], [1, 2], [2, 3]]);
});

test('a timeout interrupts the cell and keeps what it did', async () => {
  await assert.rejects(
    sandbox.runCode('import time\nstep = 1\ntime.sleep(300)\nstep = 2', { timeoutMs: 3_000 }),
    (error) => error.name === 'TimeoutError',
  );
  const after = await sandbox.runCode('print(step)', { timeoutMs: 30_000 });
  assert.equal(after.error, undefined);
  assert.deepEqual(after.logs.stdout, ['1\n']);
});
