"""The envs stage's guards go red on broken input, naming what broke: check_envs.py (a package that raises
or crashes on import) and install-envs.sh's `pip check` filter (a broken requirement that envs.txt does
not accept)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _repo import REPO

DOCKER = REPO / "docker"


def check_envs(tmp_path: Path, broken_body: str) -> subprocess.CompletedProcess:
    """check_envs.py with `crafter` shadowed by a broken module, and `rich` as it is."""
    fake = tmp_path / "shadow" / "crafter"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(broken_body)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")}
    command = [sys.executable, str(DOCKER / "check_envs.py"), "--only", "crafter", "--only", "rich"]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("raise ImportError('libfoo.so.1: cannot open shared object file')", "libfoo.so.1"),
        ("import os\nos.abort()", "crashed (signal 6)"),
    ],
    ids=["raises", "crashes"],
)
def test_check_envs_names_the_broken_package(tmp_path, body, why):
    pytest.importorskip("rich")
    out = check_envs(tmp_path, body)
    assert out.returncode == 1
    assert "FAIL crafter" in out.stderr and why in out.stderr
    assert "1 environment package(s) broken: crafter" in out.stderr
    assert "ok   rich" in out.stdout  # the other checks still ran


def check_requirements(tmp_path: Path, pip_check_output: str) -> subprocess.CompletedProcess:
    """install-envs.sh's check_requirements with a stand-in `pip` printing this `pip check` output."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pip = bin_dir / "pip"
    pip.write_text(f"#!/bin/sh\ncat <<'OUT'\n{pip_check_output}\nOUT\nexit 1\n")
    pip.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    script = f"source {DOCKER / 'install-envs.sh'} && check_requirements"
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)


def test_pip_check_accepts_exactly_the_lines_envs_txt_names(tmp_path):
    accepted = [
        line.removeprefix("# unmet: ")
        for layer in ("envs.txt", "lib.txt")  # the lib stage checks again, with lib.txt's lines
        for line in (DOCKER / "constraints" / layer).read_text().splitlines()
        if line.startswith("# unmet: ")
    ]
    assert any("craftax" in line and "pygame" in line for line in accepted)
    assert any("psutil<6" in line for line in accepted)  # lib.txt's (JupyterLab's psutil beside nmmo's pin)
    ok = check_requirements(tmp_path, "\n".join(accepted))
    assert ok.returncode == 0, ok.stderr
    assert f"less {len(accepted)} accepted line(s)" in ok.stdout


def test_pip_check_fails_on_any_other_broken_requirement(tmp_path):
    broken = "mujoco 3.3.0 has requirement numpy>=2, but you have numpy 1.26.4."
    out = check_requirements(tmp_path, broken)
    assert out.returncode == 1
    assert broken in out.stderr and "docker/constraints/envs.txt" in out.stderr


def test_install_envs_installs_from_the_wheels_folder_only_when_given():
    """--wheels DIR (Dockerfile.envs: the nmmo-wheels stage, nmmo and vec-noise) reaches both installs."""

    def dry(*args: str) -> list[str]:
        out = subprocess.run(
            ["bash", str(DOCKER / "install-envs.sh"), "--dry-run", *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [line for line in out.splitlines() if line.startswith("+ pip install")]

    with_wheels = dry("--wheels", "/tmp/w")
    assert len(with_wheels) == 2 and all("--find-links /tmp/w" in line for line in with_wheels)
    assert "nmmo" in with_wheels[1].split() and "--no-deps" in with_wheels[1]
    assert not any("--find-links" in line for line in dry())
    script = str(DOCKER / "install-envs.sh")
    bad = subprocess.run(["bash", script, "--wheels"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--wheels needs a directory" in bad.stderr
