"""A host of the tests' own for secrets to go to, for the Python suites (the Rust suites have
crates/sandboxd-egress/tests/support/testnet.rs): a network namespace joined to the host by a
veth pair with public test addresses (the egress proxy reaches no special-purpose address), an
HTTPS server in it under a test CA that answers `hello HOST` and keeps the headers it was sent,
and a DNS server on loopback naming it. Nothing leaves the machine. Needs root, `ip` and
`openssl`.

`secret_host()` yields a `SecretHost`; `config()` is what a service's config needs for an
egress runtime `net` whose sandboxes hold secret `api` (variable API_KEY, sent as a bearer
token to `secret.test` only), with its value a fresh one the test can look for anywhere."""

import json
import os
import secrets
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

# The names the DNS server knows; the secret goes to the first only.
SECRET_HOST = "secret.test"
OTHER_HOST = "allowed.test"
# A /24 of public space past the shared (CGNAT) range, beside the Rust suites' 100.128.0.0/24.
TEST_HOSTS = "100.128.1"

# Answers each request with `hello HOST`, printing its headers as a JSON line first.
SERVER = r"""
import http.server, json, ssl, sys
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print(json.dumps({k.lower(): v for k, v in self.headers.items()}), flush=True)
        body = ("hello " + self.headers.get("host", "")).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer((sys.argv[1], 443), Hello)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = context.wrap_socket(server.socket, server_side=True)
print("ready", flush=True)
server.serve_forever()
"""


@dataclass
class SecretHost:
    """The value of secret `api`, the files behind it, and every request's headers."""

    value: str
    dns: str
    ca_file: Path
    value_file: Path
    received: list = field(default_factory=list)

    def authorizations(self) -> list:
        """The Authorization headers the server was sent, in order."""
        return [headers.get("authorization") for headers in list(self.received)]

    def assert_clean(self, what: str, text: str) -> None:
        assert self.value not in text, f"{what} holds the secret's value"

    def config(self, image: str) -> str:
        """The egress runtime `net` with secret `api`, and the tables it needs."""
        return f"""
[runtimes.net]
image = "{image}"
interpreter = ["python3"]
network_mode = "egress"
egress = ["{SECRET_HOST}", "{OTHER_HOST}"]
secrets = ["api"]

[egress]
upstream_dns = ["{self.dns}"]
upstream_ca_certificates = ["{self.ca_file}"]

[secrets.api]
value_file = "{self.value_file}"
hosts = ["{SECRET_HOST}"]
env = "API_KEY"
"""


# A program for the sandbox: sends `Authorization: Bearer $API_KEY` to https://HOST/ through
# the proxy its environment names, printing the status and body, or the error.
def call_program(host: str) -> str:
    return f"""python3 -c "
import os, urllib.request, urllib.error
try:
    request = urllib.request.Request('https://{host}/', headers={{'Authorization': 'Bearer ' + os.environ['API_KEY']}})
    r = urllib.request.urlopen(request, timeout=15)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
except Exception as e:
    print('failed', repr(e))
\""""


def run(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(args)}: {done.stderr}"


def make_certificates(directory: Path) -> tuple:
    """A test CA and a certificate for both names signed by it: (ca.pem, cert.pem, key.pem)."""
    ca_key, ca, key, csr, cert = (directory / n for n in ("ca.key", "ca.pem", "key.pem", "csr", "cert.pem"))
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out", str(ca),
        "-days", "2", "-subj", "/CN=sandboxd test CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
        "-subj", f"/CN={SECRET_HOST}")
    extensions = directory / "ext"
    extensions.write_text(f"subjectAltName=DNS:{SECRET_HOST},DNS:{OTHER_HOST}\n")
    run("openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
        "-days", "2", "-extfile", str(extensions), "-out", str(cert))
    return ca, cert, key


def dns_answer(query: bytes, names: dict):
    """The answer to one A query for a name in `names`, NXDOMAIN for others; None for what is
    not a plain query (bounded: a name is read label by label within the packet)."""
    if len(query) < 17:
        return None
    at, labels = 12, []
    while at < len(query) and query[at] != 0 and len(labels) < 128:
        length = query[at]
        if length > 63 or at + 1 + length > len(query):
            return None
        labels.append(query[at + 1 : at + 1 + length].decode("ascii", "replace").lower())
        at += 1 + length
    end = at + 5
    if end > len(query):
        return None
    question = query[12:end]
    qtype = struct.unpack("!H", query[at + 1 : at + 3])[0]
    address = names.get(".".join(labels))
    flags = 0x8580 if address else 0x8583
    answers = 1 if address and qtype == 1 else 0
    header = query[:2] + struct.pack("!HHHHH", flags, 1, answers, 0, 0)
    record = b""
    if answers:
        record = struct.pack("!HHHIH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(address)
    return header + question + record


def serve_dns(sock: socket.socket, names: dict) -> None:
    while True:
        try:
            query, peer = sock.recvfrom(1500)
        except OSError:
            return
        answer = dns_answer(query, names)
        if answer:
            sock.sendto(answer, peer)


@contextmanager
def secret_host():
    """The namespace, its HTTPS server and the DNS server, removed when the block ends."""
    block = (os.getpid() % 63) * 4
    name = f"sbxpy{os.getpid() % 100000}"
    host_ip, ns_ip = f"{TEST_HOSTS}.{block + 1}", f"{TEST_HOSTS}.{block + 2}"
    files = Path(tempfile.mkdtemp(prefix="sbxsecret"))
    subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    server = None
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ca, cert, key = make_certificates(files)
        run("ip", "netns", "add", name)
        run("ip", "link", "add", f"{name}h", "type", "veth", "peer", "name", f"{name}n", "netns", name)
        run("ip", "addr", "add", f"{host_ip}/30", "dev", f"{name}h")
        run("ip", "link", "set", f"{name}h", "up")
        run("ip", "-n", name, "addr", "add", f"{ns_ip}/30", "dev", f"{name}n")
        run("ip", "-n", name, "link", "set", f"{name}n", "up")
        run("ip", "-n", name, "link", "set", "lo", "up")
        server = subprocess.Popen(
            ["ip", "netns", "exec", name, sys.executable, "-u", "-c", SERVER, ns_ip, str(cert), str(key)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout.readline().strip() == "ready", "the test host's server did not start"
        dns.bind(("127.0.0.1", 0))
        threading.Thread(target=serve_dns, args=(dns, {SECRET_HOST: ns_ip, OTHER_HOST: ns_ip}), daemon=True).start()
        value = "sk-real-" + secrets.token_hex(16)
        value_file = files / "api"
        value_file.write_text(value + "\n")
        value_file.chmod(0o600)
        host = SecretHost(value, f"127.0.0.1:{dns.getsockname()[1]}", ca, value_file)

        def keep_headers():
            for line in server.stdout:
                host.received.append(json.loads(line))

        threading.Thread(target=keep_headers, daemon=True).start()
        yield host
    finally:
        dns.close()
        if server:
            server.kill()
            server.wait()
        # Deleting the namespace deletes its end of the pair, and with it the host's.
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
        subprocess.run(["rm", "-rf", str(files)], check=False)
