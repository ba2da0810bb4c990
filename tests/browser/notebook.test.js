// The session's Notebook pane in the dashboard: Debian's Chromium against a real sandboxd and
// Docker, in a session of the catalogue's `python-interpreter` recipe (built through the
// service on first use, minutes cold; kept like any recipe build). A matplotlib plot shows as a
// rendered image; HTML a cell displays runs no script; a DataFrame shows as a table; state persists from cell to cell; a
// runtime without a kernel shows a note naming the recipe. Code is highlighted as it is typed, in
// each language of the code-interpreter recipe's kernels (a runtime naming them, none run).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startService, launchBrowser, apiCall, screenshot, TOKEN } from './harness.js';

let service;
let browserHandle;
let page;
let sessionId;
const pageErrors = [];
const consoleLines = [];

before(async () => {
  service = await startService({
    extraConfig: `
[runtimes.interpreter]
runtime = "python-interpreter"
mem_limit = "1g"
pids_limit = 256

# The code-interpreter recipe's kernel languages, for highlighting only: no kernel is started.
[runtimes.polyglot]
image = "${process.env.SANDBOXD_TEST_BUSYBOX_IMAGE || 'sandboxd/busybox:local'}"
${['python', 'javascript', 'typescript', 'r', 'bash', 'java'].map((language) => `kernels.${language} = ["${language}-kernel", "{connection_file}"]`).join('\n')}

[build]
extra_ca_certificates = ["/etc/ssl/certs/ca-certificates.crt"]
`,
  });
  browserHandle = await launchBrowser();
  const context = await browserHandle.browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(60_000);
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // The frames' policy violations reach the console (a frame runs no script to report them).
  page.on('console', (message) => consoleLines.push(message.text()));
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  // The first session of the recipe builds its image (about two minutes when nothing is cached).
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'interpreter' });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  sessionId = opened.json.id;
  await page.goto(`${service.url}/`);
  await page.fill('#signin-token', TOKEN);
  await page.click('#signin-submit');
  await page.locator('#app:not([hidden])').waitFor();
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

/** Types `code` into cell `n` (1-based), runs it with Shift+Enter and waits for its end. */
async function runCell(n, code) {
  const cell = page.locator(`.notebook-cell[data-cell="${n}"]`);
  await cell.locator('textarea').fill(code);
  await cell.locator('textarea').press('Shift+Enter');
  await page.locator(`.notebook-cell[data-cell="${n}"][data-outcome]`).waitFor({ timeout: 120_000 });
  return cell;
}

test('notebook cells plot, keep state and show HTML without running its scripts', async () => {
  await page.goto(`${service.url}/#session/${sessionId}/notebook`);
  await page.locator('.subpanel-notebook .notebook-body:not([hidden])').waitFor();
  assert.ok(await page.locator('a.subtab[data-subtab="notebook"]').isVisible(), 'a runtime with a kernel is offered the Notebook tab');

  const plot = await runCell(1, 'import matplotlib.pyplot as plt; plt.plot([1,2,3])');
  assert.equal(await plot.getAttribute('data-outcome'), 'ok', await plot.innerText());
  const image = plot.locator('img.notebook-image');
  await image.waitFor();
  assert.match(await image.getAttribute('src'), /^data:image\/png;base64,/);
  await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await image.elementHandle());
  const size = await image.evaluate((el) => [el.naturalWidth, el.naturalHeight]);
  assert.ok(size[0] > 100 && size[1] > 100, `the plot is ${size}`);

  const state = await runCell(2, 'answer = 6 * 7');
  assert.equal(await state.getAttribute('data-outcome'), 'ok');
  const used = await runCell(3, 'print(answer)');
  assert.equal((await used.locator('.notebook-stdout').innerText()).trim(), '42');
  // A cell's code area grows with its lines.
  const code = page.locator('.notebook-cell[data-cell="4"] textarea');
  await code.fill('a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6');
  assert.equal(await code.getAttribute('rows'), '6');

  const hostile = await runCell(
    4,
    'from IPython.display import HTML, display\ndisplay(HTML(\'<style>td { background-image: url(/styled-leak) } #t { color: rgb(1, 2, 3) }</style><table id="t"><tr><td>cell</td></tr></table><img src=x onerror="window.parent.__pwned=1">\'))',
  );
  assert.equal(await hostile.getAttribute('data-outcome'), 'ok', await hostile.innerText());
  const frame = hostile.locator('iframe.notebook-html');
  await frame.waitFor();
  assert.equal(await frame.getAttribute('sandbox'), '', 'the frame allows nothing (no allow-scripts)');
  // The HTML is shown: its table is in the frame's document.
  const inner = page.frameLocator(`.notebook-cell[data-cell="4"] iframe.notebook-html`);
  assert.equal(await inner.locator('#t td').innerText(), 'cell');
  // Give the broken image's error event every chance to run its handler.
  await page.waitForTimeout(500);
  assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined');
  // Its own <style> styles it, and fetches nothing: the frame's policy blocks the style's URL
  // (the page's alone would let it reach this service).
  assert.equal(await inner.locator('#t').evaluate((table) => getComputedStyle(table).color), 'rgb(1, 2, 3)');
  const blocked = (line) => line.includes('/styled-leak') && line.includes('has been blocked');
  for (let i = 0; i < 50 && !consoleLines.some(blocked); i += 1) await page.waitForTimeout(100);
  assert.ok(consoleLines.some(blocked), `the style's fetch was blocked: ${consoleLines.join('\n')}`);

  // A DataFrame shows as its HTML table.
  const table = await runCell(5, 'import pandas as pd\npd.DataFrame({"x": [1, 2], "y": ["a", "b"]})');
  assert.equal(await table.getAttribute('data-outcome'), 'ok', await table.innerText());
  const frameTable = page.frameLocator(`.notebook-cell[data-cell="5"] iframe.notebook-html`);
  assert.equal(await frameTable.locator('table.dataframe tbody tr').count(), 2);
  // pandas' stylesheet applies (its header cells align right), and the frame fits the table.
  assert.equal(await frameTable.locator('table.dataframe thead th').last().evaluate((th) => getComputedStyle(th).textAlign), 'right');
  const frameHeight = await table.locator('iframe.notebook-html').evaluate((frame) => frame.getBoundingClientRect().height);
  assert.ok(frameHeight < 200, `a three-row table gets a short frame (${frameHeight}px)`);

  const failed = await runCell(6, '1/0');
  assert.equal(await failed.getAttribute('data-outcome'), 'error');
  const error = await failed.locator('.notebook-error').innerText();
  assert.match(error, /ZeroDivisionError/);
  assert.ok(!error.includes('\u001b'), 'the traceback has no colour codes');
  await screenshot(page, 'notebook-01-cells', { fullPage: true });
  // On a phone the cells, the plot and the frames fit the width.
  await page.setViewportSize({ width: 390, height: 844 });
  const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(over <= 0, `too wide by ${over} px at 390 px`);
  await screenshot(page, 'notebook-01-cells-390', { fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });

  // Restarting the kernel forgets the cells' state.
  await page.click('.subpanel-notebook button.notebook-restart');
  await page.locator('.subpanel-notebook .alert-info:not([hidden])').waitFor();
  assert.match(await page.locator('.subpanel-notebook .alert-info').first().innerText(), /restarted/);
  const forgotten = await runCell(7, 'print(answer)');
  assert.equal(await forgotten.getAttribute('data-outcome'), 'error');
  assert.match(await forgotten.locator('.notebook-error').innerText(), /NameError/);
  assert.deepEqual(pageErrors, []);
});

test('a runtime without a kernel shows a note naming the recipe', async () => {
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'sh' });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  await page.goto(`${service.url}/#session/${opened.json.id}/notebook`);
  const note = page.locator('.subpanel-notebook .notebook-note:not([hidden])');
  await note.waitFor();
  assert.match(await note.innerText(), /python-interpreter/);
  assert.ok(await page.locator('.subpanel-notebook .notebook-body').isHidden());
  assert.ok(await page.locator('a.subtab[data-subtab="notebook"]').isHidden(), 'no Notebook tab offered without a kernel');
});

/** Per kernel language: code typed key by key, and [class, text] of tokens it must show. */
const SAMPLES = {
  python: ['def area(r):\n    # a circle\n    return 3.14 * r ** 2', [['hljs-keyword', 'def'], ['hljs-title function_', 'area'], ['hljs-comment', '# a circle'], ['hljs-number', '3.14']]],
  javascript: ['const xs = [1, 2].map((x) => x * 2); // doubled', [['hljs-keyword', 'const'], ['hljs-number', '1'], ['hljs-comment', '// doubled']]],
  typescript: ['interface Point { x: number }\nlet p: Point = { x: 1 };', [['hljs-keyword', 'interface'], ['hljs-built_in', 'number'], ['hljs-keyword', 'let']]],
  r: ['xs <- c(1, 2, 3)\nif (length(xs) > 2) print("many")', [['hljs-keyword', 'if'], ['hljs-string', '"many"'], ['hljs-number', '3']]],
  bash: ['for f in *.txt; do echo "$f"; done', [['hljs-keyword', 'for'], ['hljs-built_in', 'echo'], ['hljs-variable', '$f']]],
  java: ['public class Hi { static int n = 42; }', [['hljs-keyword', 'public'], ['hljs-title class_', 'Hi'], ['hljs-number', '42']]],
};

test('code is highlighted as it is typed, in each kernel language, under the page policy', async () => {
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'polyglot' });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  await page.goto(`${service.url}/#session/${opened.json.id}/notebook`);
  await page.locator('.subpanel-notebook .notebook-body:not([hidden])').waitFor();
  const picker = page.locator('.subpanel-notebook select.notebook-language');
  assert.deepEqual(await picker.locator('option').allInnerTexts(), ['bash', 'java', 'javascript', 'python', 'r', 'typescript']);
  assert.equal(await picker.inputValue(), 'python', 'python first, as the service chooses');
  const cell = page.locator('.subpanel-notebook .notebook-cell').first();
  const code = cell.locator('textarea');
  const shown = cell.locator('pre.notebook-highlight');
  for (const [language, [text, expected]] of Object.entries(SAMPLES)) {
    await picker.selectOption(language);
    await code.fill('');
    await code.pressSequentially(text);
    const tokens = await shown.locator('span').evaluateAll((spans) => spans.map((span) => [span.className, span.textContent]));
    for (const token of expected) assert.ok(tokens.some(([name, said]) => name === token[0] && said === token[1]), `${language}: ${token} in ${JSON.stringify(tokens)}`);
    // The highlighted copy holds exactly what was typed, drawn where the code area's text is.
    assert.equal(await shown.textContent(), `${text}\n`, language);
    const boxes = await cell.evaluate((element) => ['textarea', 'pre'].map((tag) => element.querySelector(tag).getBoundingClientRect()).map((r) => [r.x, r.y, r.width, r.height]));
    assert.deepEqual(boxes[1], boxes[0], `${language}: the highlighted text lies under the code area`);
  }
  await screenshot(page, 'notebook-02-highlighted');
  // Past its 30 rows the code area scrolls, and the highlighted text scrolls with it.
  await code.fill(Array.from({ length: 60 }, (_, i) => `int x${i} = ${i};`).join('\n'));
  await code.evaluate((area) => { area.scrollTop = area.scrollHeight; });
  await page.waitForFunction(() => {
    const area = document.querySelector('.subpanel-notebook .notebook-cell textarea');
    const copy = document.querySelector('.subpanel-notebook .notebook-cell pre.notebook-highlight');
    return area.scrollTop > 0 && copy.scrollTop === area.scrollTop;
  });
  await code.fill(SAMPLES.java[0]);
  // The text a kernel would get is the text typed; the highlighting made no markup of it.
  assert.equal(await code.inputValue(), SAMPLES.java[0]);
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(pageErrors, []);
});
