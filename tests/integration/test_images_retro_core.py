"""The image leaves out stable-retro's arcade core (FinalBurn Neo, 74 MB for one game: docker/slim_site.py).
That game then says what it lacks and how to get it back, in `puffer envs` and when made; the other cores
stay."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker

ARCADE = "MortalKombat2-Arcade-v0"  # stable-retro 1.0.1's one FinalBurn Neo integration

SCRIPT = f"""
from pufferlib import EnvironmentSetupError
from pufferlib.environments import retro
print("genesis core:", retro.core_missing("Airstriker-Genesis-v0"))
try:
    retro.make_env("{ARCADE}")
except EnvironmentSetupError as exc:
    print("make:", exc)
"""


def test_the_arcade_game_names_its_missing_core(lib_container):
    out = lib_container.run_and_wait(["python", "-c", SCRIPT]).stdout
    assert "genesis core: None" in out, out
    assert f"make: retro/{ARCADE} needs its emulator core (fbneo_libretro.so, left out of this image)" in out
    assert "pip install --force-reinstall --no-deps stable-retro" in out, out
    listing = lib_container.run_and_wait(["puffer", "envs", "--all", "--family", "retro"], timeout=180).stdout
    line = next(row for row in listing.splitlines() if ARCADE in row)
    assert "fbneo_libretro.so" in line, line
