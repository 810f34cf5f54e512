"""Pokémon Red (pokemon_red/<task>): the Game Boy game on PyBoy, with a reward read from the game's RAM.

The ROM cannot ship. `pokemon_red/PokemonRed-v0` takes yours from `rom=PATH` (`puffer train ...
--env.rom PATH`) or from `PUFFERTANK_ROMS`, a folder holding `pokemon_red.gb` (or any .gb whose
header title is POKEMON RED; the variable may also name the file itself). Without one, making it
fails with an error naming both, and `puffer envs --all` lists it as missing its ROM.

Why not pokegym: pokegym 0.2.0 (the index's newest) requires pyboy<2 (no Python 3.11 wheel; its
API is gone from PyBoy 2), gym==0.23, torch, wandb and mediapy, and opens save-state files at
import that its wheel does not ship. This binding is ours, on PyBoy 2.8.1, with pokegym's reward
ingredients (the RAM addresses of its ram_map):

- observations: the screen, every 2nd pixel, 72x80x3 uint8;
- actions: 7 buttons (down, left, right, up, A, B, Start); each is held for 8 frames and the game
  runs `frame_skip` frames per step (default 24, as pokegym);
- reward: 0.01 per map tile visited for the first time in the episode, 0.1 per party level gained,
  1.0 per badge; no terminal, truncation after `max_steps` (default 20,480).
- `state=PATH`: a PyBoy save state to start every episode from (e.g. one past the intro); without
  it episodes start at power-on (after PyBoy's boot ROM).

Seeding: full. PyBoy is deterministic; `reset(seed)` draws 1-30 idle frames from the seed before the
first observation, so the same seed gives the same episode and different seeds different starts.

`pokemon_red/testrom` runs the same binding on a ROM of our own that the binding writes
(pufferlib.environments.support.gbrom: a valid cartridge that draws a scrolling checkerboard, scrolled
further by A/B/Start). It is what the tests and the matrix run: it proves the binding (PyBoy, the
ROM lookup, buttons, frames, RAM reads, seeding), not the game; its RAM rewards stay 0.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from pufferlib import EnvironmentSetupError, PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.environments.support import gbrom

Policy = "pufferlib.models:Convolutional"
ROMS_ENV = "PUFFERTANK_ROMS"
ROM_FILE = "pokemon_red.gb"
ROM_TITLE = "POKEMON RED"
ROM_HINT = (
    f"put your Pokémon Red ROM in a folder as {ROM_FILE} and export {ROMS_ENV}=FOLDER "
    "(or pass --env.rom PATH); the ROM cannot ship with PufferTank"
)
BUTTONS = ("down", "left", "right", "up", "a", "b", "start")
PRESS_FRAMES = 8
SCREEN = (144, 160)
DOWNSAMPLE = 2
PIXELS = (SCREEN[0] // DOWNSAMPLE, SCREEN[1] // DOWNSAMPLE, 3)
BOOT_FRAMES = 120  # PyBoy's boot ROM hands over to the cartridge after ~70 frames
MAX_NOOPS = 30  # reset(seed) runs 0..MAX_NOOPS-1 idle frames
# Pokémon Red's RAM (pokegym's ram_map): the player's map and tile, badges, the party's levels.
MAP_N, Y_POS, X_POS, BADGES = 0xD35E, 0xD361, 0xD362, 0xD356
PARTY_SIZE, PARTY_LEVELS = 0xD163, (0xD18C, 0xD1B8, 0xD1E4, 0xD210, 0xD23C, 0xD268)
TASKS = ("PokemonRed-v0", "testrom")


def _pyboy_class() -> type:
    # PyBoy warns on import that it uses pysdl2-dll's SDL2; with window="null" no window opens.
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        from pyboy import PyBoy
    return PyBoy


def find_rom(rom: str | os.PathLike | None = None) -> Path:
    """The Pokémon Red ROM: `rom`, else PUFFERTANK_ROMS (a folder or the file); EnvironmentSetupError naming
    both when there is none."""
    if rom is not None:
        path = Path(rom)
        if not path.is_file():
            raise EnvironmentSetupError(f"pokemon_red: no ROM file at {path} (rom=...): {ROM_HINT}")
        return path
    where = os.environ.get(ROMS_ENV, "")
    if not where:
        raise EnvironmentSetupError(
            f"pokemon_red/PokemonRed-v0 needs its ROM, and {ROMS_ENV} is not set: {ROM_HINT}"
        )
    root = Path(where)
    if root.is_file():
        return root
    if (root / ROM_FILE).is_file():
        return root / ROM_FILE
    if root.is_dir():
        for path in sorted(root.glob("*.gb")):
            if gbrom.title(path.read_bytes()[:0x150]) == ROM_TITLE:
                return path
    raise EnvironmentSetupError(f"pokemon_red: {ROMS_ENV}={where} holds no {ROM_FILE}: {ROM_HINT}")


def has_rom() -> bool:
    try:
        find_rom()
    except EnvironmentSetupError:
        return False
    return True


def test_rom() -> Path:
    """Our generated cartridge (gbrom), written once per user into the temp folder."""
    path = Path(tempfile.gettempdir()) / f"puffertank-{os.getuid()}" / "gbrom" / "puffertank-test.gb"
    if not path.is_file() or path.read_bytes() != gbrom.build():
        gbrom.write(path.with_suffix(".tmp")).replace(path)
    return path


class GameBoy(gymnasium.Env):
    """One Game Boy cartridge on PyBoy (no window, no sound), with Pokémon Red's RAM reward."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self, rom: str | os.PathLike, state: str | None = None, frame_skip: int = 24, max_steps: int = 20_480
    ) -> None:
        if frame_skip < PRESS_FRAMES or max_steps < 1:
            raise ValueError(
                f"frame_skip must be >= {PRESS_FRAMES} and max_steps >= 1, got {frame_skip}, {max_steps}"
            )
        data = Path(rom).read_bytes()
        bad = gbrom.problems(data)
        if bad:
            raise EnvironmentSetupError(
                f"pokemon_red: {rom} is not a Game Boy ROM ({'; '.join(bad)}): {ROM_HINT}"
            )
        if state is not None and not Path(state).is_file():
            raise EnvironmentSetupError(f"pokemon_red: no save state file at {state} (state=...)")
        self.title = gbrom.title(data)
        self.frame_skip, self.max_steps = frame_skip, max_steps
        self.pyboy = _pyboy_class()(str(rom), window="null", sound_emulated=False, no_input=False)
        self.pyboy.set_emulation_speed(0)
        if state is None:
            self.pyboy.tick(BOOT_FRAMES, False)
        else:
            with open(state, "rb") as f:
                self.pyboy.load_state(f)
        self._start = io.BytesIO()
        self.pyboy.save_state(self._start)
        self.observation_space = gymnasium.spaces.Box(0, 255, PIXELS, np.uint8)
        self.action_space = gymnasium.spaces.Discrete(len(BUTTONS))
        self._steps = 0
        self._seen: set[tuple[int, int, int]] = set()
        self._levels = self._badges = 0

    def _ram(self, address: int) -> int:
        return int(self.pyboy.memory[address])

    def _progress(self) -> tuple[tuple[int, int, int], int, int]:
        where = (self._ram(MAP_N), self._ram(Y_POS), self._ram(X_POS))
        party = min(self._ram(PARTY_SIZE), len(PARTY_LEVELS))
        levels = sum(self._ram(a) for a in PARTY_LEVELS[:party])
        return where, levels, self._ram(BADGES).bit_count()

    def _obs(self) -> np.ndarray:
        return np.ascontiguousarray(self.pyboy.screen.ndarray[::DOWNSAMPLE, ::DOWNSAMPLE, :3])

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._start.seek(0)
        self.pyboy.load_state(self._start)
        self.pyboy.tick(1 + int(self.np_random.integers(MAX_NOOPS)), True)
        self._steps = 0
        where, self._levels, self._badges = self._progress()
        self._seen = {where}
        return self._obs(), {}

    def step(self, action):
        button = BUTTONS[int(action)]
        self.pyboy.button(button, PRESS_FRAMES)  # pressed now, released after PRESS_FRAMES frames
        self.pyboy.tick(self.frame_skip, True)
        self._steps += 1
        where, levels, badges = self._progress()
        reward = 0.0
        if where not in self._seen:
            self._seen.add(where)
            reward += 0.01
        reward += 0.1 * max(levels - self._levels, 0) + 1.0 * max(badges - self._badges, 0)
        self._levels, self._badges = max(levels, self._levels), max(badges, self._badges)
        info = {"map": where[0], "y": where[1], "x": where[2], "tiles_seen": len(self._seen)}
        info.update(levels=levels, badges=badges)
        return self._obs(), reward, False, self._steps >= self.max_steps, info

    def render(self) -> np.ndarray:
        return self._obs()

    def close(self) -> None:
        self.pyboy.stop(save=False)


def make_env(
    name: str, buf: Any = None, seed: int = 0, rom: str | os.PathLike | None = None, **kwargs: Any
) -> PufferEnv:
    """A Pokémon Red env (PokemonRed-v0: your ROM; testrom: our generated cartridge); kwargs: state=None
    (a PyBoy save state), frame_skip=24, max_steps=20480."""
    if name not in TASKS:
        raise ValueError(f"Unknown pokemon_red task {name!r}; one of {', '.join(TASKS)}")
    path = test_rom() if name == "testrom" else find_rom(rom)
    env = GymnasiumPufferEnv(env=GameBoy(path, **kwargs), buf=buf, seed=seed)
    env.render_backend = "PyBoy's software PPU (no window)"
    return env


members = Members(
    "pokemon_red", make_env, policy=Policy, requires=("pyboy",), smoke=SmokeSpec(steps=128, seconds=120.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


@dataclasses.dataclass(frozen=True)
class RomBinding(Binding):
    """PokemonRed-v0 also needs its ROM: `puffer envs --all` shows it missing, with ROM_HINT."""

    def missing(self) -> list[str]:
        missing = super().missing()
        return missing if missing or has_rom() else ["its ROM"]

    def make_env(self, **kwargs: Any) -> PufferEnv:
        if not super().missing():  # installed: make_env itself names PUFFERTANK_ROMS and --env.rom
            return self.make(**{**self.kwargs, **kwargs})
        return super().make_env(**kwargs)

    @property
    def install_hint(self) -> str:
        return ROM_HINT if not super().missing() else super().install_hint


def _binding(name: str) -> Binding:
    test = name == "testrom"
    return members.bind(
        name,
        Binding if test else RomBinding,
        pixels=PIXELS,
        description=(
            "the Pokémon Red binding on a generated test cartridge (proves the binding, not the game)"
            if test
            else f"Pokémon Red on PyBoy: 72x80x3 frames, 7 buttons, RAM reward; needs its ROM: {ROM_HINT}"
        ),
    )


register_catalog(members.family, TASKS, _binding, registered=("testrom",))
