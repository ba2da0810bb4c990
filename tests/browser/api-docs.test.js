// The API reference at /docs/api: Swagger UI (vendored, compiled in) over the service's OpenAPI
// document, in Debian's Chromium against a real sandboxd. The page asks for the token (the
// document needs it like the rest of the API), renders every operation under a policy that
// requires Trusted Types with DOMPurify in the way, and "Try it out" calls the API with the token.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startService, launchBrowser, screenshot, TOKEN } from './harness.js';

let service;
let browserHandle;
let page;
const pageErrors = [];
const requestUrls = [];

before(async () => {
  service = await startService();
  browserHandle = await launchBrowser();
  const context = await browserHandle.browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(30_000);
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__violations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample || ''}`);
    });
  });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('request', (request) => requestUrls.push(request.url()));
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

test('the page is served with its own strict policy, and a wrong token is refused in words', async () => {
  const response = await page.goto(`${service.url}/docs/api`);
  assert.equal(response.status(), 200);
  const policy = response.headers()['content-security-policy'];
  assert.match(policy, /script-src 'self';/);
  assert.match(policy, /require-trusted-types-for 'script'/);
  assert.match(policy, /trusted-types default dompurify/);
  assert.doesNotMatch(policy, /unsafe/);
  await page.fill('#docs-token', 'not-the-token');
  await page.click('#docs-signin button[type=submit]');
  await page.locator('#docs-error:not([hidden])').waitFor();
  assert.equal(await page.locator('#docs-error').innerText(), 'The service refused this token.');
});

test('with the token, every operation of the document is listed and one opens', async () => {
  await page.fill('#docs-token', TOKEN);
  await page.click('#docs-signin button[type=submit]');
  await page.locator('.opblock').first().waitFor();
  const document = await (await fetch(`${service.url}/v1/openapi.json`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json();
  const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
  const documented = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).filter((key) => methods.includes(key)).map((method) => `${method} ${path}`));
  // An operation with two tags is shown under each: compare the sets.
  const shown = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) => `${block.querySelector('.opblock-summary-method').textContent.toLowerCase()} ${block.querySelector('[data-path]').getAttribute('data-path')}`));
  assert.deepEqual([...new Set(shown)].sort(), [...new Set(documented)].sort());
  assert.ok(documented.length > 50, `${documented.length} operations`);
  assert.match(await page.locator('.info .title').innerText(), /sandboxd/);
  const exec = page.locator('.opblock', { has: page.locator('[data-path="/v1/sessions/{id}/exec"]') }).first();
  await exec.locator('.opblock-summary').click();
  await exec.locator('.opblock-body').waitFor();
  assert.match(await exec.locator('.opblock-body').innerText(), /command/);
  await screenshot(page, '40-api-reference');
});

test('"Try it out" calls the API with the token, which never appears in a URL', async () => {
  const runtimes = page.locator('.opblock', { has: page.locator('[data-path="/v1/runtimes"]') }).first();
  await runtimes.locator('.opblock-summary').click();
  await runtimes.locator('button.try-out__btn').click();
  await runtimes.locator('button.execute').click();
  await runtimes.locator('.live-responses-table tbody .response-col_status').first().waitFor();
  assert.equal((await runtimes.locator('.live-responses-table tbody .response-col_status').first().innerText()).trim(), '200');
  assert.match(await runtimes.locator('.live-responses-table').innerText(), /"default_runtime"/);
  assert.deepEqual(requestUrls.filter((url) => url.includes(TOKEN)), []);
});

test('no page error and no policy violation happened', async () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
});
