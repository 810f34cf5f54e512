"""The fleet's registry in provisioning: `--registry` serves Debian's docker-registry on the Tailscale address
(never every interface), `--registry-url` writes puffertank's settings file and Docker's insecure-registries
for that one name, and the image step pulls instead of building (or pushes what it built, on the serving box).
Dry runs show it and change nothing; a real run of the step (no apt: the settings and daemon.json) is
idempotent and leaves a box whose `puffertank pull` needs no flag."""

from __future__ import annotations

import json

import pytest
from test_dry_run import _dry_run

pytestmark = pytest.mark.docker

URL = "box1.tail1234.ts.net:5000"
SETTINGS = "python3 /src/pufferlib/tank/settings.py"


def test_serving_plans_the_registry_on_the_tailscale_address_only(box) -> None:
    changed, rc, plan = _dry_run(box, "--registry --only registry,image --variant cpu --user nobody")
    assert rc == 0, plan
    assert changed == [], f"a dry run changed files: {changed}\n{plan}"
    for text in (
        "would write /etc/puffertank/registry.yml:",
        "rootdirectory: /var/lib/docker-registry",
        "addr: TAILSCALE-IP:",  # tailscale is not up in this box: the plan names what it will bind to
        "ExecStart=/usr/bin/docker-registry serve /etc/puffertank/registry.yml",
        "After=tailscaled.service",
        "--no-install-recommends docker-registry",
        "set registry THIS-BOX.TAILNET.ts.net:",
        "to insecure-registries in /etc/docker/daemon.json",
        "puffertank build --variant cpu",
        "puffertank push --registry THIS-BOX.TAILNET.ts.net:",
    ):
        assert text in plan, f"{text!r} not in the plan:\n{plan}"
    addr = [line.strip() for line in plan.splitlines() if line.strip().startswith("addr:")]
    assert addr and all(":" in a.split("addr:", 1)[1].strip()[:-1] for a in addr), addr
    assert "0.0.0.0" not in plan and "addr: :" not in plan
    # the drop-in is written before the package is installed, so its first start uses our config
    assert plan.index("docker-registry.service.d/puffertank.conf") < plan.index("install -y")


def test_another_box_plans_to_pull_and_trust_that_one_name(box) -> None:
    args = f"--registry-url {URL} --only registry,image --variant cpu --user nobody"
    changed, rc, plan = _dry_run(box, args)
    assert rc == 0 and changed == [], plan
    assert "note: --registry-url is checked once python3 is installed" in plan  # a bare Debian: no python3
    assert f"settings.py set registry {URL}" in plan
    assert f"would add {URL} to insecure-registries in /etc/docker/daemon.json" in plan
    assert f"puffertank pull --registry {URL} --variant cpu" in plan
    assert "puffertank build" not in plan and "docker-registry" not in plan


def test_a_bad_registry_url_is_refused_before_anything(tooled_host) -> None:
    res = tooled_host.setup("--dry-run", "--registry-url", "http://box1", "--only", "registry", timeout=120)
    assert res.rc == 2, res
    assert "--registry-url: registry 'http://box1' is not HOST:PORT" in res.out and "Fix: " in res.out, res
    assert "==>" not in res.out


def test_the_image_can_come_from_a_tarball_or_the_fleet_not_both(box) -> None:
    res = box.setup("--dry-run", "--registry-url", URL, "--image-load", "/etc/hostname", timeout=120)
    assert res.rc == 1 and "do not go together" in res.out, res


def test_a_real_run_writes_the_settings_and_daemon_json_once(tooled_host) -> None:
    """On a provisioned host's stand-in: daemon.json already holds the nvidia runtime (kept); the registry
    is on this container's loopback, where nothing listens, so `puffertank pull` names it: no flag needed."""
    url = "127.0.0.1:5999"
    runtime = {"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}}}
    made = tooled_host.sh(f"mkdir -p /etc/docker && echo '{json.dumps(runtime)}' > /etc/docker/daemon.json")
    assert made.rc == 0, made
    first = tooled_host.setup("--registry-url", url, "--only", "registry", timeout=120)
    assert first.rc == 0 and "registry        changed (2 actions)" in first.out, first
    again = tooled_host.setup("--registry-url", url, "--only", "registry", timeout=120)
    assert again.rc == 0 and "Nothing changed" in again.out, again
    daemon = json.loads(tooled_host.sh("cat /etc/docker/daemon.json").out)
    assert daemon == {**runtime, "insecure-registries": [url]}, daemon
    assert tooled_host.sh(f"{SETTINGS} get registry").out.strip() == url
    pulled = tooled_host.sh("/opt/puffertank/venv/bin/puffertank pull --variant cpu 2>&1")
    assert pulled.rc == 1 and f"registry {url} is not reachable" in pulled.out, pulled
    assert "Traceback" not in pulled.out
