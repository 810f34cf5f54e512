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


def _run(
    cli: BuildCli, tmp_path, timeout: float = 60, stage: str = "lib", **kwargs
) -> tuple[tuple[int, int], list[str]]:
    shown: list[str] = []
    counts = run_buildkit(
        cli,
        ["."],
        stage=stage,
        timeout=timeout,
        verbose=False,
        log=shown.append,
        log_file=tmp_path / "b.log",
        **kwargs,
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


def _slow_step_cli(pause: float) -> BuildCli:
    """A client whose RUN step prints one line, goes quiet for `pause` seconds, then finishes."""
    code = (
        "import sys, time\n"
        "def say(text): sys.stdout.write(text + '\\n'); sys.stdout.flush()\n"
        "say('#4 [envs 3/3] RUN pip install -c envs.txt nle minigrid')\n"
        "say('#4 0.512 Collecting nle==1.3.0')\n"
        f"time.sleep({pause})\n"
        "say('#4 DONE 2.5s')\n"
    )
    return BuildCli(sys.executable, (sys.executable, "-c", code), (), "buildx", "test")


def test_a_long_step_shows_its_elapsed_time_and_latest_line(tmp_path) -> None:
    _, shown = _run(_slow_step_cli(3.6), tmp_path, stage="envs", heartbeat=1)
    beats = [line for line in shown if " running " in line]
    assert len(beats) >= 2, shown  # one a second while the step was quiet (off a TTY: shown is a list)
    assert all("[envs 3/3] RUN pip install" in line and "| Collecting nle==1.3.0" in line for line in beats)
    assert beats[0].split(" running ")[1].startswith(("0m01s", "0m02s")), beats
    assert shown[-1].endswith("2.5s")  # the finished line still comes, after the heartbeats


def test_no_heartbeat_for_a_step_that_finished(tmp_path) -> None:
    _, shown = _run(_cli(PLAIN, sleep=2.2), tmp_path, heartbeat=1)  # every step done at once, then a linger
    assert not [line for line in shown if " running " in line], shown
