"""`--host`: bindings spread over two Docker daemons, and the report says which ran what.

The second daemon runs on this machine with its own data root, socket and bridge (and no iptables
changes, so the first daemon's networking is untouched); the lib image is copied into it.
"""

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from _strict import skip_or_fail

docker = pytest.importorskip("docker")

from pufferlib.tank.matrix import LABEL, Host, Plan, registered_bindings, run_matrix, select  # noqa: E402


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def second_daemon(docker_client, lib_image):
    if os.geteuid() != 0 or not shutil.which("dockerd") or not shutil.which("ip"):
        skip_or_fail("a second Docker daemon needs root, dockerd and ip (iproute2)")
    root = Path(tempfile.mkdtemp(prefix="pt-d2-", dir="/tmp"))  # short: unix socket paths are limited
    bridge = f"ptbr{uuid.uuid4().hex[:6]}"
    url = f"unix://{root}/docker.sock"
    # Never --bridge=none: dockerd then deletes the default docker0 bridge of the first daemon.
    _ip("link", "add", bridge, "type", "bridge")
    _ip("addr", "add", "172.31.251.1/24", "dev", bridge)
    _ip("link", "set", bridge, "up")
    log = open(root / "dockerd.log", "w")  # noqa: SIM115 (kept open for the daemon's lifetime)
    proc = subprocess.Popen(
        [
            "dockerd",
            "--data-root",
            str(root / "data"),
            "--exec-root",
            str(root / "exec"),
            "--pidfile",
            str(root / "docker.pid"),
            "-H",
            url,
            f"--bridge={bridge}",
            "--iptables=false",
            "--ip-masq=false",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    client = None
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(docker.errors.DockerException):
                client = docker.DockerClient(base_url=url, timeout=600)
                client.ping()
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail(f"second dockerd did not start:\n{(root / 'dockerd.log').read_text()[-2000:]}")
            time.sleep(0.5)
        start = time.monotonic()
        save = subprocess.Popen(["docker", "save", lib_image], stdout=subprocess.PIPE)
        subprocess.run(
            ["docker", "-H", url, "load", "-q"], stdin=save.stdout, check=True, capture_output=True
        )
        save.wait(timeout=600)
        print(f"\nsecond daemon at {url}; {lib_image} copied in {time.monotonic() - start:.0f}s")
        yield url
    finally:
        if client is not None:
            for c in client.containers.list(all=True):
                with contextlib.suppress(docker.errors.APIError):
                    c.remove(force=True)
            client.close()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        with contextlib.suppress(subprocess.CalledProcessError):
            _ip("link", "del", bridge)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def two_host_report(docker_client, lib_image, second_daemon):
    hosts = [Host("local", docker_client), Host.connect(second_daemon)]
    plan = Plan(image=lib_image, variant="cpu", hosts=hosts, bindings=[], jobs=1)
    plan.bindings = select(registered_bindings(hosts[0], lib_image, plan.run_id, []), ["ocean/*"])
    return plan, run_matrix(plan)


def test_bindings_spread_over_both_hosts(two_host_report, second_daemon):
    _, report = two_host_report
    assert report.hosts == ["local", second_daemon]
    by_env = {}
    for row in report.rows:
        by_env.setdefault(row.env, set()).add(row.host)
    assert all(len(hosts) == 1 for hosts in by_env.values()), "one binding, one host"
    assert set().union(*by_env.values()) == {"local", second_daemon}


def test_every_cell_ran(two_host_report):
    plan, report = two_host_report
    failed = [f"{r.env}/{r.check} on {r.host}: {r.detail[:200]}" for r in report.rows if r.status == "fail"]
    assert not failed, "\n".join(failed)
    assert len(report.rows) == len(plan.bindings) * 10


def test_no_container_left_on_either_host(two_host_report):
    plan, _ = two_host_report
    for host in plan.hosts:
        assert host.client.containers.list(all=True, filters={"label": f"{LABEL}={plan.run_id}"}) == []
