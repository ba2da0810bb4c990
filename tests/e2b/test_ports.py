"""A sandbox's own server through the E2B face, with the official e2b SDK: started with
`commands.run(background=True)`, reached by the headers the SDK sends (`E2b-Sandbox-Id`,
`E2b-Sandbox-Port` and the access token) and by the host `get_host(port)` answers under the
operator's `[e2b] domain`; without the token it is refused."""

import os
import secrets
import time

import httpx
import pytest

from conftest import config, e2b_env

DOMAIN = "sandboxes.e2b.test"
PORT = 8000


@pytest.fixture(scope="module")
def served(start_service):
    """A service with an E2B domain, the SDK pointed at it, and a sandbox serving a page."""
    from e2b import Sandbox

    keys = ["e2b_" + secrets.token_hex(20) for _ in range(3)]
    # The suite's config has an [e2b] table already.
    text = config(*keys).replace("[e2b]\n", f'[e2b]\ndomain = "{DOMAIN}"\n', 1)
    with start_service(text, keys[0], "e2b-ports") as running:
        exports = e2b_env(running.url, keys[0])
        saved = {name: os.environ.get(name) for name in exports}
        os.environ.update(exports)
        box = Sandbox.create()
        try:
            marker = "page-" + secrets.token_hex(8)
            box.files.write("/workspace/index.html", marker)
            box.commands.run(f"python3 -m http.server {PORT} --directory /workspace", background=True)
            yield running, box, marker
        finally:
            box.kill()
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def fetch(url, headers):
    """GET `url` once the server answers (it starts in the background)."""
    for _ in range(100):
        try:
            answer = httpx.get(url, headers=headers, timeout=30)
        except httpx.TransportError:
            answer = None
        if answer is not None and answer.status_code != 502:
            return answer
        time.sleep(0.1)
    return answer


def test_the_sdk_headers_reach_the_sandbox_port(served):
    running, box, marker = served
    headers = dict(box.connection_config.sandbox_headers)
    assert headers["E2b-Sandbox-Port"] == "49983" and "X-Access-Token" in headers
    headers["E2b-Sandbox-Port"] = str(PORT)
    page = fetch(f"{running.url}/index.html", headers)
    assert page.status_code == 200, page.text
    assert page.text == marker

    # Without the sandbox's token, nothing reaches the port.
    bare = {k: v for k, v in headers.items() if k != "X-Access-Token"}
    refused = httpx.get(f"{running.url}/index.html", headers=bare, timeout=30)
    assert refused.status_code == 401, refused.text
    assert f"port {PORT}" in refused.json()["message"]


def test_get_host_names_a_host_the_face_serves(served):
    running, box, marker = served
    host = box.get_host(PORT)
    assert host == f"{PORT}-{box.sandbox_id}.{DOMAIN}"
    # As a client that resolves the wildcard name to the service would send it.
    token = box.connection_config.sandbox_headers["X-Access-Token"]
    page = fetch(f"{running.url}/index.html", {"Host": host, "E2b-Traffic-Access-Token": token})
    assert page.status_code == 200, page.text
    assert page.text == marker
    # envd's own port on the same form is still envd.
    health = httpx.get(
        f"{running.url}/health",
        headers={"Host": box.get_host(49983), "X-Access-Token": token},
        timeout=30,
    )
    assert health.status_code == 204


@pytest.mark.parametrize("path", ["/healthz", "/v1/runtimes", "/mcp", "/metrics", "/p/00ff/", "/assets/app.js"])
def test_every_path_of_a_sandbox_port_is_the_sandboxs_own(served, path):
    running, box, marker = served
    token = box.connection_config.sandbox_headers["X-Access-Token"]
    by_header = {"E2b-Sandbox-Id": box.sandbox_id, "E2b-Sandbox-Port": str(PORT), "X-Access-Token": token}
    by_host = {"Host": box.get_host(PORT), "X-Access-Token": token}
    for headers in [by_header, by_host]:
        root = fetch(f"{running.url}/", headers)
        assert (root.status_code, root.text) == (200, marker), "/ is the sandbox's index.html"
        # Python's http.server has none of these: its own 404, not the service's route.
        answer = fetch(f"{running.url}{path}", headers)
        assert answer.status_code == 404, answer.text
        assert "File not found" in answer.text, answer.text
