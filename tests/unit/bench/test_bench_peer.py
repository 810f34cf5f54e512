"""`puffer bench` runs a peer interpreter only when asked, and only one that nobody else can change."""

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from _strict import skip_or_fail

from pufferlib.bench.interpreter import UntrustedInterpreter, trusted_python

PLANTED = Path("/tmp/puffer202")  # the fixed path an earlier `puffer bench` ran whenever it existed
BENCH = [
    sys.executable,
    "-m",
    "pufferlib.cli",
    "bench",
    "--quick",
    "--workloads",
    "perf-0",
    "--num-envs",
    "2",
]


@pytest.fixture
def private_dir():
    """A directory only this user can write, outside /tmp (which anyone can write)."""
    path = Path.home() / ".cache" / f"pufferlib-bench-test-{uuid.uuid4().hex[:8]}"
    path.mkdir(mode=0o700, parents=True)
    os.chmod(path, 0o700)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def fake_python(path: Path, marker: Path) -> Path:
    """An 'interpreter' that only records that it was run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    path.chmod(0o755)
    return path


def test_a_planted_interpreter_under_tmp_is_not_run(tmp_path):
    if PLANTED.exists():
        skip_or_fail(f"{PLANTED} exists on this machine; the test plants its own there")
    marker = tmp_path / "ran"
    try:
        fake_python(PLANTED / "bin" / "python", marker)
        out = subprocess.run([*BENCH, "--peers", "pl202-mp"], capture_output=True, text=True, timeout=300)
    finally:
        shutil.rmtree(PLANTED, ignore_errors=True)
    assert not marker.exists(), "puffer bench ran an interpreter it was not asked to run"
    assert "runs only when asked" in out.stdout + out.stderr


def test_an_interpreter_in_a_world_writable_directory_is_refused(tmp_path):
    marker = tmp_path / "ran"
    python = fake_python(tmp_path / "venv" / "bin" / "python", marker)
    out = subprocess.run(
        [*BENCH, "--peers", "pl202-mp", "--puffer202", str(python)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2
    assert not marker.exists()
    assert "refusing to run" in out.stderr and "writable by everyone" in out.stderr


def test_group_writable_directories_and_files_are_refused(private_dir):
    python = fake_python(private_dir / "venv" / "bin" / "python", private_dir / "ran")
    assert trusted_python(python) == python
    os.chmod(private_dir / "venv", 0o775)
    with pytest.raises(UntrustedInterpreter, match=r"venv is writable by its group"):
        trusted_python(python)
    os.chmod(private_dir / "venv", 0o755)
    os.chmod(python, 0o757)
    with pytest.raises(UntrustedInterpreter, match=r"python is writable by everyone"):
        trusted_python(python)


def test_a_symlink_to_an_interpreter_others_can_change_is_refused(private_dir, tmp_path):
    target = fake_python(tmp_path / "python", tmp_path / "ran")  # under /tmp
    link = private_dir / "python"
    link.symlink_to(target)
    with pytest.raises(UntrustedInterpreter, match=r"/tmp is writable by everyone"):
        trusted_python(link)


def test_an_interpreter_owned_by_another_user_is_refused(private_dir):
    if os.geteuid() != 0:
        skip_or_fail("giving a file to another user needs root")
    python = fake_python(private_dir / "python", private_dir / "ran")
    os.chown(python, 12345, 12345)
    with pytest.raises(UntrustedInterpreter, match=r"belongs to uid 12345"):
        trusted_python(python)


def test_a_missing_default_peer_says_how_to_make_it(private_dir):
    env = {**os.environ, "XDG_CACHE_HOME": str(private_dir)}
    out = subprocess.run(
        [*BENCH, "--peers", "pl202-mp", "--puffer202"], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 2
    venv = private_dir / "pufferlib" / "peers" / "puffer202"
    assert f"no Python at {venv}/bin/python" in out.stderr
    assert "pip install --no-deps pufferlib==2.0.2" in out.stderr
