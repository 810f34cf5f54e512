"""A failing or hanging build names the stage and the step, shows the step's last log lines, keeps the full
log, and tags nothing. Uses a copy of the source in a throwaway namespace; only the lib stage runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture
def broken_source(source_copy: Path, image_chain) -> Path:
    return source_copy  # the tests break its Dockerfile.lib; the chain below it is built first


def build(source: Path, namespace: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pufferlib.tank.cli",
            "build",
            "--source",
            str(source),
            "--namespace",
            namespace,
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_failing_step_is_named_with_its_log(docker_client, broken_source, namespace):
    script = broken_source / "docker" / "install-pufferlib.sh"
    script.write_text(script.read_text() + '\necho "pufferlib install went wrong" >&2\nexit 3\n')

    res = build(broken_source, namespace)

    assert res.returncode == 1
    assert "puffertank build: error: stage lib failed at step [" in res.stderr
    assert "install-pufferlib.sh" in res.stderr and "exit code: 3" in res.stderr
    assert "--- last log lines ---" in res.stderr and "pufferlib install went wrong" in res.stderr
    log = Path(re.search(r"--- full log: (\S+)", res.stderr).group(1))
    assert "pufferlib install went wrong" in log.read_text()
    assert not [t for i in docker_client.images.list() for t in i.tags if t.startswith(f"{namespace}/lib")]


def test_a_hanging_step_becomes_a_timeout(docker_client, broken_source, namespace):
    script = broken_source / "docker" / "install-pufferlib.sh"
    script.write_text(script.read_text() + "\nsleep 600\n")

    res = build(broken_source, namespace, "--timeout", "20")

    assert res.returncode == 1
    assert "stage lib: the build did not finish within 20 s and was stopped" in res.stderr
    assert not [t for i in docker_client.images.list() for t in i.tags if t.startswith(f"{namespace}/lib")]
