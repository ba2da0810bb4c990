"""A real sandboxd service for the Python suites (MCP, API fuzzing, E2B SDK): the built binary, the real Docker engine, its own
state directory and instance id. On teardown the service is killed and every container it
made is removed by label, also when a test failed. With SANDBOXD_TEST_IN_CLUSTER set, the
service is the one the Helm chart installs in the test cluster instead (service_in_cluster)."""

import json
import os
import queue
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SANDBOXD = Path(os.environ.get("SANDBOXD_BIN", REPO / "target/debug/sandboxd"))
AGENT = Path(
    os.environ.get(
        "SANDBOXD_AGENT",
        REPO / "target/x86_64-unknown-linux-gnu/debug/sandboxd-agent",
    )
)
BUSYBOX_IMAGE = os.environ.get("SANDBOXD_TEST_BUSYBOX_IMAGE", "sandboxd/busybox:local")
PYTHON_IMAGE = os.environ.get("SANDBOXD_TEST_PYTHON_IMAGE", "sandboxd/python:3.11-bookworm")
# scripts/test.sh's gvisor-faces step runs these suites with every runtime on gVisor.
ISOLATION = os.environ.get("SANDBOXD_TEST_ISOLATION", "runc")
LISTENING = "sandboxd listening on "
MAX_SESSIONS = 4
UPLOAD_CAP = 5 << 20
INSPECTOR_ORIGIN = "http://localhost:6274"


@dataclass
class Service:
    url: str
    token: str
    instance_id: str


def config(token: str) -> str:
    return f"""
token = "{token}"
default_runtime = "sh"
max_sessions = {MAX_SESSIONS}
mem_limit = "128m"
# A browser tool (the MCP Inspector) on this origin may call /mcp, nothing else.
extra_allowed_origins = ["{INSPECTOR_ORIGIN}"]
cpus = 0.5
pids_limit = 64
tmpfs_size = "16m"
isolation = "{ISOLATION}"

[runtimes.sh]
image = "{BUSYBOX_IMAGE}"

[runtimes.python]
image = "{PYTHON_IMAGE}"
mem_limit = "256m"
interpreter = ["python3"]

[policy]
default_timeout_secs = 20
max_timeout_secs = 60
max_upload_bytes = {UPLOAD_CAP}
# The fuzzer sends many requests without a token on purpose: they must not lock it out.
auth_failures_per_minute = 1000000
"""


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=False).stdout


# The test cluster the suites run on instead of Docker, when scripts/test.sh's kubernetes step
# names it (as the Rust suites do): every service's sandboxes are pods in TEST_NAMESPACE.
KUBECONFIG = os.environ.get("SANDBOXD_TEST_KUBECONFIG")
KUBECTL = os.environ.get("SANDBOXD_TEST_KUBECTL", "kubectl")
TEST_NAMESPACE = "sandboxd-test"
# The StorageClass the test cluster provisions volumes of (scripts/k8s-up.sh makes it).
TEST_STORAGE_CLASS = "sandboxd-test"
AGENT_IMAGE = os.environ.get("SANDBOXD_TEST_AGENT_IMAGE", "sandboxd/agent:local")


def on_kubernetes() -> bool:
    return bool(KUBECONFIG)


def backend_table() -> str:
    """What a service's config gets to run on the test cluster; nothing on Docker."""
    if not on_kubernetes():
        return ""
    return f"""
[backend]
kind = "kubernetes"
kubeconfig = "{KUBECONFIG}"
namespace = "{TEST_NAMESPACE}"
agent_image = "{AGENT_IMAGE}"
volume_storage_class = "{TEST_STORAGE_CLASS}"
"""


def unmount_volumes(state_dir: Path) -> None:
    """The host mounts of the service's volumes under its state directory (Docker keeps each
    volume's filesystem there), which a killed service leaves, so the directory can go."""
    prefix = f"{state_dir.resolve()}/"
    with open("/proc/self/mountinfo") as table:
        points = [line.split(" ")[4] for line in table]
    for point in points:
        if point.startswith(prefix):
            subprocess.run(["umount", "-l", point], capture_output=True, check=False)


def remove_sandboxes(instance_id: str) -> None:
    """Every sandbox the instance made, by its label: containers and their work volumes on
    Docker, pods and volume claims on the cluster."""
    label = f"org.sandboxd.instance={instance_id}"
    if on_kubernetes():
        for kind in ("pods", "pvc"):
            subprocess.run(
                [KUBECTL, "--kubeconfig", KUBECONFIG, "delete", kind, "-n", TEST_NAMESPACE, "-l", label, "--wait=false"],
                capture_output=True,
                check=False,
            )
        return
    ids = docker("ps", "-aq", "--filter", f"label={label}").split()
    if ids:
        docker("rm", "-f", *ids)
    # The working directories' volumes outlive containers removed this way.
    volumes = docker("volume", "ls", "-q", "--filter", f"label={label}").split()
    if volumes:
        docker("volume", "rm", "-f", *volumes)


# scripts/test.sh's in-cluster steps: the service itself runs in the test cluster, installed by
# the chart with the helm that scripts/k8s-up.sh built.
IN_CLUSTER = bool(os.environ.get("SANDBOXD_TEST_IN_CLUSTER"))
HELM = os.environ.get("SANDBOXD_TEST_HELM", "helm")
CHART = REPO / "deploy/helm/sandboxd"
# The label of the chart tests' namespaces, by which the kubernetes step removes leftovers.
CHART_TEST_LABEL = "org.sandboxd.test=chart"
SERVICE_IMAGE = {"repository": "sandboxd/sandboxd", "tag": "local", "pullPolicy": "Never"}


def kubectl(*args: str) -> str:
    done = subprocess.run([KUBECTL, "--kubeconfig", KUBECONFIG, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr.strip()}"
    return done.stdout


def helm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HELM, "--kubeconfig", KUBECONFIG, *args], capture_output=True, text=True, check=False)


def chart_values(config_text: str, token: str) -> dict:
    """The chart's values for a service with `config_text` (its token goes to the chart's
    Secret), on the cluster's pod network like any workload."""
    return {
        "image": SERVICE_IMAGE,
        "agentImage": AGENT_IMAGE,
        "persistence": {"storageClass": TEST_STORAGE_CLASS, "size": "1Gi"},
        # The test StorageClass's host-path volumes ignore fsGroup: the state directory is root's.
        "podSecurityContext": {"runAsNonRoot": False, "runAsUser": 0, "runAsGroup": 0, "fsGroup": 0},
        "token": {"value": token},
        "config": "\n".join(line for line in config_text.splitlines() if not line.startswith("token =")),
        "sandboxes": {"volumeStorageClass": TEST_STORAGE_CLASS},
        "logFilter": "warn",
    }


@contextmanager
def service_in_cluster(config_text: str, token: str, name: str):
    """The service installed in the test cluster by the chart (deploy/helm/sandboxd), in a
    namespace of its own where its sessions' pods run too; uninstalled and its namespace removed
    when the block ends, failing or not."""
    suffix = secrets.token_hex(4)
    namespace = f"sandboxd-{name}-{suffix}"
    release = f"{name}-{suffix}"
    values = chart_values(config_text, token)
    kubectl("create", "namespace", namespace)
    try:
        kubectl("label", "namespace", namespace, CHART_TEST_LABEL)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
            json.dump(values, file)  # JSON is YAML
            file.flush()
            installed = helm("install", release, str(CHART), "--namespace", namespace,
                             "--values", file.name, "--wait", "--timeout", "240s")
        assert installed.returncode == 0, f"helm install: {installed.stdout}{installed.stderr}\n" + kubectl(
            "get", "pods", "-n", namespace, "-o", "wide")
        instance_id = kubectl("exec", "-n", namespace, f"deploy/{release}-sandboxd", "--",
                              "cat", "/var/lib/sandboxd/instance-id").strip()
        # Its Service's address, which the node's Service proxy leads to the pod from this host.
        cluster_ip = kubectl("get", "service", "-n", namespace, f"{release}-sandboxd",
                             "-o", "jsonpath={.spec.clusterIP}:{.spec.ports[0].port}").strip()
        print(f"# the service the chart installed in namespace {namespace}: "
              f"http://{cluster_ip} (its Service), instance {instance_id}")
        # The node's Service proxy follows the pod's readiness a moment after helm has seen it.
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://{cluster_ip}/healthz", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"the service at {cluster_ip} never answered"
            time.sleep(0.2)
        yield Service(url=f"http://{cluster_ip}", token=token, instance_id=instance_id)
    finally:
        helm("uninstall", release, "--namespace", namespace, "--wait", "--timeout", "60s")
        subprocess.run([KUBECTL, "--kubeconfig", KUBECONFIG, "delete", "clusterrole,clusterrolebinding",
                        f"-lapp.kubernetes.io/instance={release}"], capture_output=True, check=False)
        subprocess.run([KUBECTL, "--kubeconfig", KUBECONFIG, "delete", "namespace", namespace, "--wait=false"],
                       capture_output=True, check=False)


@pytest.fixture(scope="session")
def anyio_backend():
    return "asyncio"


@contextmanager
def running_service(config_text: str, token: str, name: str):
    """A sandboxd service with `config_text`, its own state directory and instance id
    (test-NAME-...), killed with its sandboxes when the block ends; in the cluster with
    SANDBOXD_TEST_IN_CLUSTER (service_in_cluster)."""
    if IN_CLUSTER:
        with service_in_cluster(config_text, token, name) as running:
            yield running
        return
    assert SANDBOXD.is_file(), f"{SANDBOXD} is missing: build it with scripts/build.sh"
    assert AGENT.is_file(), f"{AGENT} is missing: build it with scripts/build.sh"
    # Short path: the agents' socket paths must fit a unix socket address.
    state_dir = Path(tempfile.mkdtemp(prefix="sbm", dir="/tmp"))
    # Written before the start, so the scripts' sweep of test-* instances finds leftovers.
    instance_id = f"test-{name}-" + secrets.token_hex(6)
    (state_dir / "instance-id").write_text(instance_id)
    (state_dir / "config.toml").write_text(config_text + backend_table())
    env = {k: v for k, v in os.environ.items() if k != "SANDBOXD_TOKEN"}
    env["SANDBOXD_AGENT"] = str(AGENT)
    env.setdefault("SANDBOXD_LOG", "warn")
    process = subprocess.Popen(
        [
            str(SANDBOXD),
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
            str(state_dir / "config.toml"),
            "--state-dir",
            str(state_dir),
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    urls: queue.Queue[str] = queue.Queue()

    def read_stdout():
        # Keeps reading to the end, so the service never blocks on a full pipe; the end of its
        # output (the service exited) is said at once, not after the wait.
        for line in process.stdout:
            if line.startswith(LISTENING):
                urls.put(line[len(LISTENING) :].strip())
        urls.put("")

    threading.Thread(target=read_stdout, daemon=True).start()
    try:
        try:
            url = urls.get(timeout=60)
        except queue.Empty:
            url = ""
        if not url:
            raise RuntimeError(
                f"sandboxd did not print its address (exit status {process.poll()}); its stderr is above"
            )
        yield Service(url=url, token=token, instance_id=instance_id)
    finally:
        process.kill()
        process.wait()
        remove_sandboxes(instance_id)
        # An egress runtime's network and firewall chains, which a killed service leaves.
        subprocess.run([str(REPO / "tests/remove-egress.sh"), instance_id], check=False)
        unmount_volumes(state_dir)
        shutil.rmtree(state_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def service():
    token = "mcp-test-" + secrets.token_hex(16)
    with running_service(config(token), token, "mcp") as running:
        yield running


@pytest.fixture(scope="session")
def start_service():
    """`running_service`, for suites with a config of their own (tests/e2b)."""
    return running_service
