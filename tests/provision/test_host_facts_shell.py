"""setup-host.sh reads the host facts from pufferlib/tank/hostfacts.py (the module doctor uses), and where
python3 is missing it says so instead of guessing; only --variant auto keeps the rule's PCI test for a
python-less Debian (checked against variant.py below). verify is doctor's report or one
failure with its fix. Runs the script's functions in bash here, no container needed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _repo import REPO

from pufferlib.tank import hostfacts, variant

SCRIPT = REPO / "provision" / "setup-host.sh"


def _bash(body: str, path: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path or os.environ["PATH"]}
    return subprocess.run(
        [shutil.which("bash") or "/bin/bash", "-c", f"source {SCRIPT}; {body}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def _path_without_python(tmp_path: Path, extra: tuple[str, ...] = ()) -> str:
    """A PATH holding only the tools the sourced script and these functions use: no python3."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "cat", "tr", "cut", *extra):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    return str(bin_dir)


def test_the_script_asks_hostfacts() -> None:
    gpus = _bash("host_fact gpus")
    assert gpus.returncode == 0, gpus.stderr
    assert gpus.stdout.split() == hostfacts.nvidia_gpus()
    assert _bash("host_fact driver").stdout.strip() == (hostfacts.loaded_driver() or "")
    assert _bash("host_fact secure-boot").stdout.strip() == hostfacts.secure_boot()
    assert _bash("host_fact mok-advice").stdout.strip() == hostfacts.MOK_ADVICE


def test_the_facts_are_not_kept_in_bash() -> None:
    text = SCRIPT.read_text()
    assert "efivars" not in text and "Kernel Module" not in text, "a host fact read in bash again"
    assert text.count("mokutil --import") == 0, "the MOK advice belongs to hostfacts.MOK_ADVICE"


def test_without_python_the_facts_fail_and_auto_still_picks(tmp_path) -> None:
    path = _path_without_python(tmp_path)
    facts = _bash("host_fact gpus || echo rc=$?", path=path)
    assert facts.stdout.strip() == "rc=1", facts
    auto = _bash("auto_variant", path=path)
    assert auto.returncode == 0 and auto.stdout.strip() == variant.auto_variant(), auto


def test_verify_without_python_is_one_failure_with_its_fix(tmp_path) -> None:
    if Path("/opt/puffertank/venv/bin/puffertank").exists():
        pytest.skip("this host has the host tooling: verify would run its doctor")
    body = f"LOG_FILE={tmp_path}/log; VARIANT=cpu; step_verify"
    res = _bash(body, path=_path_without_python(tmp_path, extra=("uname", "sed", "head")))
    rows = [line.split()[:2] for line in res.stdout.splitlines() if line.strip()]
    assert rows[:2] == [["PASS", "os"], ["FAIL", "host-tooling"]], res
    assert "--only base-tools,verify" in res.stdout, res


def test_a_doctor_without_a_report_is_one_failure(tmp_path) -> None:
    doctor = tmp_path / "puffertank"
    doctor.write_text("#!/bin/sh\necho Traceback >&2\nexit 1\n")
    doctor.chmod(0o755)
    res = _bash(
        f"LOG_FILE={tmp_path}/log; verify_with_doctor {doctor}; printf '%s\\n' \"${{VERIFY_LINES[@]}}\""
    )
    assert res.returncode == 0, res
    assert res.stdout.split()[:2] == ["FAIL", "doctor"], res
    assert "gave no report (exit 1" in res.stdout and "reinstall the host tooling" in res.stdout, res
