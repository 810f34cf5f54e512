"""`puffertank doctor` on this machine's real Docker engine: no crash, honest statuses, fixes, exit code."""

from __future__ import annotations

import json
import subprocess
import sys

import docker
import pytest

from pufferlib.tank import doctor, variant
from pufferlib.tank.build.debian import ensure_debian_base
from pufferlib.tank.build.resolve import torch_version
from pufferlib.tank.containers import RunSpec, run_captured
from pufferlib.tank.cuda import facts
from pufferlib.tank.names import image_ref

pytestmark = pytest.mark.docker

STATUSES = {"pass", "warn", "fail", "skip"}
GPU_CHECKS = ("nvidia-driver", "nvidia-runtime", "gpu-in-container", "driver-vs-cuda")


def _doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pufferlib.tank.cli", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_doctor_json_here() -> None:
    res = _doctor("--json")
    report = json.loads(res.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert set(checks) >= {"docker", "buildkit", *GPU_CHECKS, "shm", "disk", "images", "tailscale"}
    for check in checks.values():
        assert check["status"] in STATUSES and check["detail"], check
        if check["status"] in ("warn", "fail") and check["name"] not in GPU_CHECKS:
            assert check["fix"], f"{check['name']} says {check['status']} without a fix"
    assert checks["docker"]["status"] == "pass", checks["docker"]
    failed = [c for c in checks.values() if c["status"] == "fail"]
    assert res.returncode == (1 if failed else 0) == report["exit_code"], res.stderr
    if not variant.nvidia_gpus():  # no GPU: warnings, never failures
        for name in GPU_CHECKS:
            assert checks[name]["status"] in ("warn", "skip"), checks[name]


def test_doctor_text_names_each_check_and_its_fix() -> None:
    res = _doctor("--no-probe")
    assert res.stdout.startswith("puffertank doctor"), res.stdout
    for name in ("docker", "buildkit", "nvidia-runtime", "shm", "disk", "images", "tailscale"):
        assert f"  {name} " in res.stdout, res.stdout
    assert "passed," in res.stdout.splitlines()[-1]


def test_unreachable_engine_fails_with_fix(tmp_path) -> None:
    env = {"PATH": "/usr/bin:/bin", "DOCKER_HOST": f"unix://{tmp_path}/no-such.sock"}
    res = _doctor("--json", env=env)
    assert res.returncode == 1, res.stdout + res.stderr
    checks = {c["name"]: c for c in json.loads(res.stdout)["checks"]}
    assert checks["docker"]["status"] == "fail"
    assert "no-such.sock" in checks["docker"]["detail"] and checks["docker"]["fix"], checks["docker"]
    for name in ("nvidia-runtime", "disk", "images"):
        assert checks[name]["status"] == "skip", checks[name]


def test_short_lived_containers_are_removed() -> None:
    """The one runner for probes and listings: output back, a hang becomes exit 124, nothing left."""
    client = docker.from_env()
    image = ensure_debian_base(client)
    labels = {"puffertank.purpose": "doctor-test"}
    ok = run_captured(client, RunSpec(image, ["sh", "-c", "echo probe-ok"], entrypoint=[], labels=labels))
    assert (ok.exit_code, ok.stdout, ok.timed_out) == (0, "probe-ok\n", False)
    hung = run_captured(client, RunSpec(image, ["sleep", "300"], entrypoint=[], labels=labels, timeout=2))
    assert hung.exit_code == 124 and hung.timed_out and hung.seconds < 60
    left = client.containers.list(all=True, filters={"label": "puffertank.purpose=doctor-test"})
    assert left == [], f"containers left behind: {[c.name for c in left]}"


def test_gpu_host_facts_turn_warnings_into_failures() -> None:
    """The same engine, seen as a GPU box (a GPU on the PCI bus): the missing pieces become failures."""
    client = docker.from_env()
    info = client.info()
    if "nvidia" in (info.get("Runtimes") or {}):
        pytest.skip("this engine has the NVIDIA runtime: the failure paths below do not apply")
    bare = doctor.Host(client=client, info=info, gpus=["0000:01:00.0"], driver=None, probe=False)
    driver = doctor.check_driver(bare)
    assert driver.status == "fail" and "--only nvidia-driver" in driver.fix, driver
    runtime = doctor.check_runtime(bare)
    assert runtime.status == "fail" and "nvidia-ctk runtime configure --runtime=docker" in runtime.fix, (
        runtime
    )
    # Debian 12's 535 driver against the cuda image's CUDA (its label), or PyPI's CUDA 13 before it is built.
    old = doctor.Host(client=client, info=info, gpus=["0000:01:00.0"], driver="535.309.01", probe=False)
    verdict = doctor.check_driver_vs_cuda(old)
    built = doctor.local_image(client, image_ref("lib", "cuda")) or doctor.local_image(
        client, image_ref("base", "cuda")
    )
    if built is None:  # nothing built yet: a warning about the build to come
        pypi = facts().pypi_cuda(torch_version(facts().path.parents[1]))
        assert verdict.status == "warn" and f"CUDA {pypi}" in verdict.detail, verdict
    else:
        cuda = built.labels["puffertank.cuda-version"]
        assert verdict.status == doctor.driver_vs_cuda("535.309.01", cuda, facts())[0], verdict
        assert f"CUDA {cuda}" in verdict.detail, verdict
    if verdict.status != "pass":
        assert "--torch-index https://download.pytorch.org/whl/cu126" in verdict.fix, verdict
    client.close()
