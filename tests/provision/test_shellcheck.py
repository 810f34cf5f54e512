"""The provisioning script (and the dev container's helper scripts) pass shellcheck with no findings."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_scripts_are_shellcheck_clean() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail("shellcheck is not installed: apt-get install shellcheck")
    scripts = [REPO / "provision" / "setup-host.sh", *sorted((REPO / ".devcontainer").glob("*.sh"))]
    res = subprocess.run(
        [shellcheck, "-x", "--severity=style", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert res.returncode == 0, res.stdout + res.stderr
