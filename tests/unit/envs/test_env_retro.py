"""stable-retro bindings: the shipped ROM registered, every other game listed as needing its ROM with
the import command, the emulator in a child process (two envs in one process; nothing left running)."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import EnvironmentSetupError
from pufferlib.environments import retro

BINDINGS = environments.bindings("retro")
GAME = "retro/Airstriker-Genesis-v0"


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


def test_shipped_rom_registered_and_the_rest_need_theirs():
    assert [b.name for b in BINDINGS] == [GAME]
    catalog = environments.catalog("retro")
    assert len(catalog) > 1000 and GAME in catalog
    other = environments.get("retro/SonicTheHedgehog-Genesis-v0")
    assert not other.available() and other.missing() == ["its ROM"]
    assert other.install_hint == "python -m retro.import ROMDIR"
    with pytest.raises(
        EnvironmentSetupError, match=r"its ROM is not imported.*python -m retro.import ROMDIR"
    ):
        other.make_env()
    listing = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--all", "--family", "retro"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (
        "retro/SonicTheHedgehog-Genesis-v0" in listing
        and "missing its ROM: python -m retro.import ROMDIR" in listing
    )


def test_two_envs_in_one_process_within_their_spaces():
    first, second = environments.make(GAME), environments.make(GAME)  # stable-retro alone refuses this
    try:
        assert first.single_observation_space.shape == (112, 160, 3) and first.single_action_space.n == 126
        run_contract(first, steps=20)
        run_contract(second, steps=5)
    finally:
        first.close()
        second.close()


def test_close_and_a_killed_parent_leave_no_emulator_running():
    env = environments.make(GAME)
    pid = env.env._child.pid
    env.close()
    assert not _alive(pid)
    code = (
        f"import time, pufferlib.environments as e; env = e.make({GAME!r}); "
        "print(env.env._child.pid, flush=True); time.sleep(60)"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 20
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the emulator outlived its killed parent"


def test_same_seed_same_frames():
    def make():
        return environments.make(GAME)

    np.testing.assert_array_equal(trace(make(), 30, seed=1), trace(make(), 30, seed=1))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="Unknown stable-retro game 'Airstriker'"):
        retro.make_env("Airstriker")
    with pytest.raises(ValueError, match="frame_skip, downsample and max_steps must be >= 1"):
        retro.make_env("Airstriker-Genesis-v0", frame_skip=0)
    with pytest.raises(
        EnvironmentSetupError, match="no save state 'NoSuchState'; Airstriker-Genesis-v0 has Level1"
    ):
        retro.make_env("Airstriker-Genesis-v0", state="NoSuchState")
