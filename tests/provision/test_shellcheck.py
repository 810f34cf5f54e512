"""The provisioning scripts, the dev container's helpers and the image's shell files pass shellcheck."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from _repo import REPO


def test_scripts_are_shellcheck_clean() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail("shellcheck is not installed: apt-get install shellcheck")
    scripts = [
        *sorted((REPO / "provision").glob("*.sh")),
        *sorted((REPO / ".devcontainer").glob("*.sh")),
        REPO / "docker" / "entrypoint.sh",
        REPO / "docker" / "bashrc",
    ]
    res = subprocess.run(
        [shellcheck, "-x", "--severity=style", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert res.returncode == 0, res.stdout + res.stderr
