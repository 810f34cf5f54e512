"""run_buildkit reads BuildKit's plain progress: one line per finished step, the cached count that says
whether a build was cold, and a failure that names its stage, step and reason (a stand-in client that
prints what `docker buildx build --progress=plain` prints)."""

from __future__ import annotations

import sys

import pytest

from pufferlib.tank.build.buildkit import BuildCli, BuildFailed, run_buildkit

PLAIN = """#1 [internal] load build definition from Dockerfile
#1 DONE 0.0s
#2 [lib 1/3] FROM docker.io/library/debian:12
#2 CACHED
#3 [lib 2/3] COPY pufferlib /src/pufferlib
#3 CACHED
#4 [lib 3/3] RUN pip install /src
#4 0.512 Processing /src
#4 DONE 4.2s
"""
FAILING = """#4 [lib 3/3] RUN pip install /src
#4 0.512 Processing /src
#4 0.900 ERROR: No matching distribution found for gymnasium
#4 ERROR: process "/bin/sh -c pip install /src" did not complete successfully: exit code: 1
"""


def _cli(output: str, rc: int = 0, sleep: float = 0) -> BuildCli:
    code = (
        f"import sys, time; sys.stdout.write({output!r}); sys.stdout.flush(); time.sleep({sleep}); "
        f"sys.exit({rc})"
    )
    # the build's own arguments come after the prefix: `-c CODE` ignores them
    return BuildCli(sys.executable, (sys.executable, "-c", code), (), "buildx", "test")


def _run(cli: BuildCli, tmp_path, timeout: float = 60) -> tuple[tuple[int, int], list[str]]:
    shown: list[str] = []
    counts = run_buildkit(
        cli, ["."], stage="lib", timeout=timeout, verbose=False, log=shown.append, log_file=tmp_path / "b.log"
    )
    return counts, shown


def test_steps_and_the_cache(tmp_path) -> None:
    counts, shown = _run(_cli(PLAIN), tmp_path)
    assert counts == (2, 1)  # COPY (cached) and RUN; FROM and internal steps are not work
    assert shown[-1].split() == ["lib", "[lib", "3/3]", "RUN", "pip", "install", "/src", "4.2s"]
    assert any(line.endswith("cached") and "COPY" in line for line in shown)
    assert "#4 DONE 4.2s" in (tmp_path / "b.log").read_text()


def test_a_failure_names_stage_step_and_reason(tmp_path) -> None:
    with pytest.raises(BuildFailed) as caught:
        _run(_cli(FAILING, rc=1), tmp_path)
    message = caught.value.message
    assert message.startswith("stage lib failed at step [lib 3/3] RUN pip install /src"), message
    assert 'reason: process "/bin/sh -c pip install /src" did not complete' in message
    assert "No matching distribution found for gymnasium" in message
    assert f"--- full log: {tmp_path / 'b.log'}" in message


def test_a_build_past_its_timeout_is_stopped(tmp_path) -> None:
    with pytest.raises(BuildFailed, match="did not finish within 1 s"):
        _run(_cli(PLAIN, sleep=30), tmp_path, timeout=1)
