"""E2B's network options with the official e2b SDK, on the egress template `net`: allow_out
narrows its allow-list (what our own GET /v1/sessions/{id}/network answers), deny_out takes
names out or denies all, update_network changes it at run time, and what a name list cannot
express is refused with a message naming it. A name narrowed away is refused by the proxy
inside the sandbox; nothing needs an answer from outside the machine."""

import time

import pytest
from e2b import ALL_TRAFFIC, Sandbox, SandboxException

from conftest import EGRESS

# A program in the sandbox fetching a URL through the proxy the environment names.
FETCH = """python3 -c "
import urllib.request, urllib.error
try:
    print(urllib.request.urlopen('http://{host}/', timeout=15).status)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
except Exception as e:
    print('failed', repr(e))
\""""


@pytest.fixture(scope="module")
def boxes(e2b):
    """Sandboxes the tests make, killed when the module ends: the proxy knows a sandbox by its
    address, and a new sandbox given the address of one ended is not recognised (its
    connections are reset), so none ends before the others are done."""
    made = []
    yield made
    for box in made:
        box.kill()


def fetch(box, host):
    """What FETCH prints for `host`, run in `box`."""
    return box.commands.run(FETCH.format(host=host)).stdout.strip()


def egress_entry(e2b, sandbox_id, target):
    """The latest egress entry for `target` (host:port), waiting a little for it."""
    for _ in range(50):
        found = [
            e
            for e in e2b.activity(sandbox_id)
            if e["action"].startswith("egress.") and e["target"] == target
        ]
        if found:
            return found[-1]
        time.sleep(0.1)
    raise AssertionError(f"no egress entry for {target}")


def test_allow_out_narrows_the_template_list_and_the_proxy_holds_to_it(e2b, boxes):
    box = Sandbox.create("net", network={"allow_out": ["allowed.test"], "deny_out": [ALL_TRAFFIC]})
    boxes.append(box)
    assert e2b.network(box.sandbox_id) == ["allowed.test"]
    network = Sandbox.get_info(box.sandbox_id).network
    assert network["allow_out"] == ["allowed.test"]
    assert network["deny_out"] == [ALL_TRAFFIC]
    # On the template's list, but narrowed away: refused by the proxy, and logged.
    answer = fetch(box, "files.allowed.test")
    assert answer.startswith("403 refused by policy"), answer
    assert "not on this sandbox's egress allow-list" in answer, answer
    entry = egress_entry(e2b, box.sandbox_id, "files.allowed.test:80")
    assert entry["status"] == "refused", entry
    # Without network options the sandbox has the template's whole list.
    plain = Sandbox.create("net")
    boxes.append(plain)
    assert e2b.network(plain.sandbox_id) == EGRESS


def test_deny_out_takes_names_out_or_denies_all(e2b, boxes):
    box = Sandbox.create("net", network={"deny_out": ["files.allowed.test"]})
    boxes.append(box)
    assert e2b.network(box.sandbox_id) == [r for r in EGRESS if r != "files.allowed.test"]
    closed = Sandbox.create("net", allow_internet_access=False)
    boxes.append(closed)
    assert e2b.network(closed.sandbox_id) == []
    answer = fetch(closed, "allowed.test")
    assert answer.startswith("403 refused by policy"), answer


def test_update_network_narrows_at_run_time_never_beyond_the_template(e2b, boxes):
    box = Sandbox.create("net")
    boxes.append(box)
    box.update_network({"allow_out": ["api.allowed.test:8443", "x.pkg.test"], "deny_out": [ALL_TRAFFIC]})
    assert e2b.network(box.sandbox_id) == ["api.allowed.test:8443", "x.pkg.test"]
    answer = fetch(box, "allowed.test")
    assert answer.startswith("403 refused by policy"), answer
    with pytest.raises(SandboxException, match='"evil.test" is not on the egress list of template "net"'):
        box.update_network({"allow_out": ["evil.test"]})
    assert e2b.network(box.sandbox_id) == ["api.allowed.test:8443", "x.pkg.test"]
    box.update_network({"allow_internet_access": False})
    assert e2b.network(box.sandbox_id) == []
    # E2B replaces the whole configuration: an empty update is the template's list again.
    box.update_network({})
    assert e2b.network(box.sandbox_id) == EGRESS
    assert any(e["action"] == "set_network" and e["interface"] == "e2b" for e in e2b.activity(box.sandbox_id))


@pytest.mark.parametrize(
    "template, network, says",
    [
        ("net", {"allow_out": ["evil.test"]}, '"evil.test" is not on the egress list of template "net"'),
        ("net", {"allow_out": ["allowed.test:22"]}, '"allowed.test:22" is not on the egress list'),
        ("net", {"allow_out": ["1.1.1.1"]}, "never addresses"),
        ("net", {"deny_out": ["8.8.8.0/24"]}, r'denyOut "8\.8\.8\.0/24" cannot be expressed'),
        ("net", {"deny_out": ["a.pkg.test"]}, r'"a\.pkg\.test" falls under "\*\.pkg\.test"'),
        ("net", {"egress_proxy": {"address": "127.0.0.1:1080"}}, "egressProxy.* not offered"),
        ("python", {"allow_out": ["allowed.test"]}, 'template "python" has network mode "none", not "egress"'),
    ],
)
def test_what_a_name_list_cannot_express_is_refused_naming_it(e2b, template, network, says):
    before = len(Sandbox.list().next_items())
    with pytest.raises(SandboxException, match=says):
        Sandbox.create(template, network=network)
    assert len(Sandbox.list().next_items()) == before
