// Share links by host name in Debian's Chromium, against a real sandboxd and Docker: a page on
// one link's host sets a cookie for the whole share domain from its script, and another
// link's server (another tenant's, as far as the browser knows) never receives it, while that
// server's own cookie still reaches it and its page still reads it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startService, launchBrowser, apiCall, SHARE_DOMAIN } from './harness.js';

const ATTACKER_PORT = 8000;
const VICTIM_PORT = 8001;
// The victim's server: /set sets its own cookie (host-only), any other path answers with the
// Cookie header it received.
const VICTIM_SERVER = `
import http.server
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/set":
            body = b"set"
            self.send_response(200)
            self.send_header("Set-Cookie", "sid=good; Path=/")
        else:
            body = (self.headers.get("Cookie") or "(none)").encode()
            self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.HTTPServer(("127.0.0.1", ${VICTIM_PORT}), Handler).serve_forever()
`;
const ATTACKER_PAGE = `<!doctype html><title>attacker</title><script>
document.cookie = "tossed=1; Domain=${SHARE_DOMAIN}; Path=/";
document.cookie = "sid=evil; Domain=${SHARE_DOMAIN}; Path=/";
document.title = "tossed";
</script>`;

let service;
let browserHandle;

/** A session serving `port` with `command` after writing `files`; its share link's host URL. */
async function serve(files, command, port) {
  const opened = await apiCall(service, 'POST', '/v1/sessions', { runtime: 'python' });
  assert.equal(opened.status, 201, JSON.stringify(opened.json));
  const id = opened.json.id;
  for (const [name, body] of Object.entries(files)) {
    const written = await apiCall(service, 'PUT', `/v1/sessions/${id}/files/content?path=${name}`, body);
    assert.equal(written.status, 200, JSON.stringify(written.json));
  }
  const started = await apiCall(service, 'POST', `/v1/sessions/${id}/processes`, { command, timeout_secs: 120 });
  assert.equal(started.status, 201, JSON.stringify(started.json));
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const listed = await apiCall(service, 'GET', `/v1/sessions/${id}/ports`);
    if (listed.json.ports.some((p) => p.port === port)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const shared = await apiCall(service, 'POST', `/v1/sessions/${id}/ports/${port}/share`, { ttl_secs: 600 });
  assert.equal(shared.status, 201, JSON.stringify(shared.json));
  // The link's host, on the service's own port (the operator's proxy would front it).
  const host = new URL(shared.json.url).hostname;
  return `http://${host}:${new URL(service.url).port}`;
}

before(async () => {
  service = await startService({ extraConfig: `\n[ports]\nshare_domain = "${SHARE_DOMAIN}"\n` });
  browserHandle = await launchBrowser();
});

after(async () => {
  await browserHandle?.close();
  await service?.stop();
});

test("a cookie one link's page sets for the share domain never reaches another link's server", async () => {
  const victim = await serve({ 'victim.py': VICTIM_SERVER }, 'python3 victim.py', VICTIM_PORT);
  const attacker = await serve({ 'index.html': ATTACKER_PAGE }, `python3 -m http.server ${ATTACKER_PORT} --bind 127.0.0.1`, ATTACKER_PORT);
  const context = await browserHandle.browser.newContext();
  const page = await context.newPage();

  await page.goto(`${victim}/set`);
  await page.goto(`${attacker}/`);
  await page.waitForFunction(() => document.title === 'tossed');
  // The browser holds the tossed cookies for the whole domain: it will send them to the victim.
  const held = await context.cookies(victim);
  assert.ok(held.some((c) => c.name === 'tossed' && c.domain.endsWith(SHARE_DOMAIN)), JSON.stringify(held));

  await page.goto(`${victim}/echo`);
  const received = await page.locator('body').innerText();
  assert.equal(received, 'sid=good', 'the victim server got only its own cookie');
  // Its page still reads its server's cookie as the server set it.
  const readable = await page.evaluate(() => document.cookie);
  assert.match(readable, /(^|; )sid=good(;|$)/);
  await context.close();
});
