"""The API fuzzed with schemathesis from the OpenAPI document the service serves, against a real
service and real Docker: no 5xx, no crash, no answer that violates the document (status codes,
content types, bodies, headers), over a bounded number of cases with a fixed seed."""

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "response_headers_conformance",
    ]
)
EXAMPLES_PER_OPERATION = 10
SEED = 20261129
# The reverse proxy to a sandbox's ports and its share links answer whatever the sandbox's
# server answers (and 502 `port_closed` when nothing listens), which no document can describe:
# they are tested against real servers in crates/sandboxd/tests/ports.rs and the browser suite.
PROXIED = r"^/v1/sessions/\{id\}/ports/\{port\}/|^/p/\{capability\}"
# The archive upload's body is a tar, which schemathesis cannot make: it is tested in
# crates/sandboxd/tests/archive.rs.
UNFUZZABLE = ["PUT /v1/sessions/{id}/archive"]


# Closing the live session would leave the rest of the second run nothing to reach.
CLOSES_THE_LIVE_SESSION = "DELETE /v1/sessions/{id}"
# Operations on a session the second run must have reached with the live id: the activity
# log names each operation once per call (reads that log nothing are not counted).
REACHED_AT_LEAST = 15


def openapi_document(service, tmp_path):
    request = urllib.request.Request(
        f"{service.url}/v1/openapi.json",
        headers={"Authorization": f"Bearer {service.token}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        document = json.load(response)
    assert document["openapi"].startswith("3.1")
    schema = tmp_path / "openapi.json"
    schema.write_text(json.dumps(document))
    return schema


def api(service, method, path, body=None):
    request = urllib.request.Request(
        f"{service.url}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {service.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = response.read()
    return json.loads(answer) if answer else None


def schemathesis(service, schema, *options, config=None):
    """Runs schemathesis against the service; fails the test on any failure it finds."""
    st = Path(sys.executable).parent / "st"
    head = [str(st)] if config is None else [str(st), "--config-file", str(config)]
    run = subprocess.run(
        [
            *head,
            "run",
            str(schema),
            "--url",
            service.url,
            "--header",
            f"Authorization: Bearer {service.token}",
            "--checks",
            CHECKS,
            "--max-examples",
            str(EXAMPLES_PER_OPERATION),
            "--seed",
            str(SEED),
            "--no-color",
            "--exclude-path-regex",
            PROXIED,
            *(arg for name in UNFUZZABLE for arg in ("--exclude-name", name)),
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(run.stdout[-6000:])
    assert run.returncode == 0, f"schemathesis found failures:\n{run.stdout[-20000:]}\n{run.stderr}"
    assert "generated" in run.stdout and " passed" in run.stdout


def test_the_api_holds_up_under_fuzzing(service, tmp_path):
    schemathesis(service, openapi_document(service, tmp_path))


def test_a_live_sessions_operations_hold_up_under_fuzzing(service, tmp_path):
    """The same checks with every `{id}` a live session's, so the cases reach the operations'
    own logic rather than the lookup's 404."""
    schema = openapi_document(service, tmp_path)
    # The sessions the first run's cases opened hold the service's places: closed first.
    for session in api(service, "GET", "/v1/sessions")["sessions"]:
        try:
            api(service, "DELETE", f"/v1/sessions/{session['id']}")
        except urllib.error.HTTPError as refused:
            # Ended already, or ending: its place is free or soon will be.
            assert refused.code in (404, 409), refused
    live = api(service, "POST", "/v1/sessions", {"runtime": "sh"})["id"]
    config = tmp_path / "schemathesis.toml"
    config.write_text(f'[parameters]\n"path.id" = "{live}"\n')
    try:
        schemathesis(
            service,
            schema,
            "--include-path-regex",
            r"^/v1/sessions/\{id\}",
            "--exclude-name",
            CLOSES_THE_LIVE_SESSION,
            config=config,
        )
        entries = api(service, "GET", f"/v1/sessions/{live}/activity?limit=1000")["entries"]
        reached = {entry["action"] for entry in entries}
        print(f"the live session's log names {len(reached)} operations: {sorted(reached)}")
        assert len(reached) >= REACHED_AT_LEAST, sorted(reached)
    finally:
        api(service, "DELETE", f"/v1/sessions/{live}")
