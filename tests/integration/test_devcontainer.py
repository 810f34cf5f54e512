"""The VS Code dev container, started by the real Dev Containers CLI on a fresh copy of this repository.

`devcontainer up` (initializeCommand, UID sync, postCreateCommand smoke check), then `devcontainer exec`:
pufferlib comes from the workspace, a registry environment passes its smoke checks, an edit made on the host
is seen inside without a rebuild, files made inside belong to the host user, and the terminal's shells (the
CLI probes the environment with a login shell, as VS Code does) find the venv first. Run as root (CI), the CLI
runs as a throwaway host user in the docker group, so the UID really has to be changed in the container.
Everything it starts is removed afterwards: the container (by its id label), the CLI's -uid image, the user.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest
from _repo import REPO

from pufferlib.tank.containers import SHM_SIZE

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CLI = ["npx", "-y", "@devcontainers/cli@0.89.0"]
UP_TIMEOUT_S = 600  # the first run downloads the CLI and builds the -uid image
EXEC_TIMEOUT_S = 180
PIN_REPO = "puffertank-test/devcontainer"


@dataclass
class Runner:
    """Who runs the CLI: its UID/GID on the host, and the argv prefix and environment that make it so."""

    uid: int
    gid: int
    prefix: list[str]
    env: dict[str, str]
    cleanup_user: str | None = None


def _copy_repo(dest: Path) -> None:
    """The files git would ship (tracked, plus new files not ignored): what a fresh clone holds."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.split(b"\0")
    for rel in filter(None, (name.decode() for name in listed)):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@contextlib.contextmanager
def _runner(workdir: Path) -> Iterator[Runner]:
    """The current user; or, as root, a throwaway system user in the socket's group (removed afterwards)."""
    home = workdir / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ("PATH", "DOCKER_HOST", "LANG", "http_proxy", "https_proxy")
    }
    env |= {"HOME": str(home), "npm_config_cache": str(home / ".npm"), "npm_config_update_notifier": "false"}
    sock = Path(os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock").removeprefix("unix://"))
    if os.geteuid() != 0 or not sock.exists() or not sock.stat().st_mode & 0o060:
        yield Runner(os.getuid(), os.getgid(), [], env)
        return
    name = f"ptdc{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        timeout=60,
    )
    try:
        user = pwd.getpwnam(name)
        for path in [workdir, *workdir.rglob("*")]:
            os.lchown(path, user.pw_uid, user.pw_gid)
        prefix = [
            "setpriv",
            f"--reuid={user.pw_uid}",
            f"--regid={user.pw_gid}",
            f"--groups={sock.stat().st_gid}",
        ]
        yield Runner(user.pw_uid, user.pw_gid, prefix, env | {"USER": name, "LOGNAME": name}, name)
    finally:
        subprocess.run(["userdel", name], check=False, timeout=60)
        shutil.rmtree(f"/tmp/devcontainercli-{name}", ignore_errors=True)


class DevContainer:
    def __init__(self, runner: Runner, workspace: Path, id_label: str, image: str) -> None:
        self.runner, self.workspace, self.id_label = runner, workspace, id_label
        self.env = runner.env | {"PUFFERTANK_DEVCONTAINER_IMAGE": image}

    def cli(self, command: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
        # Options before the arguments: for `exec`, everything after the command is the command's.
        argv = [*self.runner.prefix, *CLI, command, "--workspace-folder", str(self.workspace)]
        argv += ["--id-label", self.id_label, *args]
        try:
            return subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout, env=self.env, cwd=self.workspace
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(
                f"devcontainer {command} did not finish within {timeout} s:\n{exc.stdout}\n{exc.stderr}"
            )

    def exec(self, *command: str) -> str:
        res = self.cli("exec", *command, timeout=EXEC_TIMEOUT_S)
        assert res.returncode == 0, f"devcontainer exec {command} failed:\n{res.stdout}\n{res.stderr}"
        return res.stdout


@pytest.fixture(scope="module")
def devcontainer(docker_client: docker.DockerClient, lib_image: str) -> Iterator[tuple]:
    node = shutil.which("node")
    version = (
        subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout if node else ""
    )
    if not shutil.which("npx") or int(version.lstrip("v").split(".")[0] or 0) < 20:
        pytest.fail(
            f"the Dev Containers CLI needs Node.js >= 20 with npx (found: {version.strip() or 'none'}); "
            "Debian 12's nodejs is 18: install Node 20 (e.g. from NodeSource)"
        )
    # Not under pytest's tmp folder: that one is private to the user running pytest.
    workdir = Path(tempfile.mkdtemp(prefix="puffertank-devcontainer-"))
    run_id = uuid.uuid4().hex[:12]
    workspace = workdir / f"puffertank-{run_id}"  # the CLI's -uid image is named after it: unique per run
    _copy_repo(workspace)
    id_label = f"puffertank.test=devcontainer-{run_id}"
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        # A tag of our own: a concurrent `puffertank build` may retire the session's content-hash tag.
        try:
            docker_client.images.get(lib_image).tag(PIN_REPO, run_id)
        except docker.errors.ImageNotFound:
            pytest.fail(
                f"{lib_image} vanished (a concurrent puffertank build retired it?); run the test again"
            )
        pinned = f"{PIN_REPO}:{run_id}"
        stack.callback(docker_client.images.remove, pinned)
        runner = stack.enter_context(_runner(workdir))
        box = DevContainer(runner, workspace, id_label, pinned)
        try:
            up = box.cli("up", timeout=UP_TIMEOUT_S)
            lines = up.stdout.strip().splitlines()
            outcome = json.loads(lines[-1]) if lines else {}
            assert outcome.get("outcome") == "success", f"devcontainer up failed:\n{up.stdout}\n{up.stderr}"
            yield box, outcome, up.stdout + up.stderr
        finally:
            key, value = id_label.split("=", 1)
            for leftover in docker_client.containers.list(all=True, filters={"label": f"{key}={value}"}):
                with contextlib.suppress(docker.errors.APIError):
                    leftover.remove(force=True)
            for image in docker_client.images.list():
                for tag in image.tags:  # only the CLI's -uid image of this run (named after its workspace)
                    if tag.startswith(f"vsc-{workspace.name}-") and tag.endswith("-uid:latest"):
                        with contextlib.suppress(docker.errors.APIError):
                            docker_client.images.remove(tag)


def test_up_runs_the_post_create_smoke_check(devcontainer) -> None:
    _, outcome, log = devcontainer
    assert outcome["remoteUser"] == "puffer" and outcome["remoteWorkspaceFolder"] == "/workspace", outcome
    assert "post-create: the tank is ready" in log, log


def test_pufferlib_comes_from_the_workspace(devcontainer) -> None:
    box, _, _ = devcontainer
    out = box.exec("python", "-c", "import pufferlib; print(pufferlib.__file__)")
    assert out.strip().splitlines()[-1] == "/workspace/pufferlib/__init__.py", out


def test_registry_smoke_check(devcontainer) -> None:
    box, _, _ = devcontainer
    out = box.exec(
        "python",
        "-m",
        "pufferlib.smoke",
        "ocean/squared",
        "--checks",
        "import,make,spaces,reset,step",
        "--json",
    )
    results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [r["check"] for r in results] == ["import", "make", "spaces", "reset", "step"], out
    assert all(r["status"] == "pass" for r in results), out


def test_terminal_shells_find_the_venv(devcontainer) -> None:
    """What a VS Code terminal gets: the environment the CLI probed with `bash -lic`, then bash."""
    box, _, _ = devcontainer
    probe = "for c in python python3 pip puffer; do command -v $c || echo missing-$c; done"
    expected = [f"/opt/venv/bin/{c}" for c in ("python", "python3", "pip", "puffer")]
    for argv in (["bash", "-c", probe], ["bash", "-lc", probe], ["bash", "-ic", probe]):
        out = box.exec(*argv)
        found = [line for line in out.splitlines() if line.startswith(("/", "missing-"))]
        assert found == expected, (argv, out)
    out = box.exec("python3", "-c", "import sys, torch; print(sys.prefix)")
    assert out.strip().splitlines()[-1] == "/opt/venv", out


def test_workspace_edit_is_seen_without_rebuild(devcontainer) -> None:
    box, _, _ = devcontainer
    token = uuid.uuid4().hex
    probe = box.workspace / "pufferlib" / "_devcontainer_probe.py"
    probe.write_text(f"TOKEN = {token!r}\n")
    os.chmod(probe, 0o644)
    out = box.exec("python", "-c", "from pufferlib._devcontainer_probe import TOKEN; print(TOKEN)")
    assert out.strip().splitlines()[-1] == token, out


def test_container_user_is_the_host_user(devcontainer) -> None:
    box, _, _ = devcontainer
    ids = box.exec("sh", "-c", "id -u; id -g; touch /workspace/made-inside").split()
    assert ids[-2:] == [str(box.runner.uid), str(box.runner.gid)], ids
    made = (box.workspace / "made-inside").stat()
    assert (made.st_uid, made.st_gid) == (box.runner.uid, box.runner.gid)


def test_pytorch_friendly_settings(devcontainer, docker_client: docker.DockerClient) -> None:
    _, outcome, _ = devcontainer
    host_config = docker_client.containers.get(outcome["containerId"]).attrs["HostConfig"]
    # /dev/shm of its own, as `puffertank run` gives (not Docker's 64 MB, not the host's IPC namespace)
    assert host_config["IpcMode"] != "host" and host_config["ShmSize"] == docker.utils.parse_bytes(SHM_SIZE)
    assert {"Name": "stack", "Soft": 67108864, "Hard": 67108864} in (host_config["Ulimits"] or [])
    assert host_config["Init"] is True
    gpus = host_config.get("DeviceRequests") or []
    has_runtime = "nvidia" in (docker_client.info().get("Runtimes") or {})
    assert bool(gpus) == has_runtime, f"GPUs requested: {gpus}, NVIDIA runtime present: {has_runtime}"
