"""Every shell in the image finds the tank: `python`, `python3`, `pip` and `puffer` are the venv's in
login and non-login shells, `docker run IMAGE bash -lc`, `docker exec ... bash -l`, `su - puffer`, and
`puffertank run -- bash -lc`. Login shells start from /etc/profile, which resets PATH
(and `su -` or an SSH login start from an empty environment); /etc/profile.d/puffertank.sh puts the image's
environment back. An SSH login takes the same /etc/profile path as `su -` (the image has no sshd)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.docker

VENV_BIN = "/opt/venv/bin"
PROBE = "for c in python python3 pip puffer; do command -v $c || echo missing-$c; done"
EXPECTED = [f"{VENV_BIN}/{c}" for c in ("python", "python3", "pip", "puffer")]


def _paths(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("/") or line.startswith("missing-")]


@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-lc", PROBE],  # a login shell
        ["bash", "-c", PROBE],  # a plain one
        ["sh", "-lc", PROBE],  # dash as a login shell reads /etc/profile too
        ["bash", "-lic", PROBE],  # login + interactive: what the Dev Containers CLI probes
    ],
    ids=["bash-l", "bash", "sh-l", "bash-li"],
)
def test_docker_run_shells_find_the_venv(lib_container, argv) -> None:
    result = lib_container.run_and_wait(argv)
    assert _paths(result.stdout) == EXPECTED, result


def test_login_shell_imports_torch(lib_container) -> None:
    """The report in the issue, as typed: `docker run IMAGE bash -lc 'python -c "import torch"'`."""
    result = lib_container.run_and_wait(["bash", "-lc", "python -c 'import sys, torch; print(sys.prefix)'"])
    assert result.stdout.strip() == "/opt/venv", result


def test_docker_exec_login_shells(lib_container) -> None:
    running = lib_container.run_detached(["sleep", "300"])
    for user, argv in [
        ("puffer", ["bash", "-l", "-c", PROBE]),  # docker exec -it C bash -l
        ("root", ["bash", "-l", "-c", PROBE]),  # root's /etc/profile PATH is another one
        ("root", ["su", "-", "puffer", "-c", PROBE]),  # su - puffer: an empty environment first
        ("root", ["su", "-", "-c", PROBE]),  # su - (root)
    ]:
        code, out = running.exec_run(argv, user=user)
        assert code == 0 and _paths(out.decode()) == EXPECTED, (user, argv, out.decode())


def test_su_login_gets_the_image_environment(docker_client, lib_image, lib_container) -> None:
    """`su -` and SSH logins clear the environment: every variable the image sets comes back."""
    image_env = docker_client.images.get(lib_image).attrs["Config"]["Env"]
    running = lib_container.run_detached(["sleep", "300"])
    code, out = running.exec_run(["su", "-", "puffer", "-c", "env"], user="root")
    assert code == 0, out
    login_env = dict(line.split("=", 1) for line in out.decode().splitlines() if "=" in line)
    for name, value in (entry.split("=", 1) for entry in image_env):
        if name == "PATH":  # the image's PATH first; /etc/profile's other entries may follow
            assert (login_env[name] + ":").startswith(value + ":"), (login_env[name], value)
        else:
            assert login_env.get(name) == value, f"`su - puffer` lost the image's {name}={value}"


def test_puffertank_run_login_shell(lib_image, tmp_path) -> None:
    """`puffertank run -- bash -lc ...` runs as the host's UID, which the image may not know."""
    res = subprocess.run(
        [sys.executable, "-m", "pufferlib.tank.cli", "run", "--image", lib_image, "--", "bash", "-lc", PROBE],
        cwd=tmp_path,
        env=os.environ,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert res.returncode == 0, res.stderr
    assert _paths(res.stdout) == EXPECTED, res.stdout + res.stderr
