"""Griddly (griddly/<game>): grid games written in GDY (Griddly's YAML), single player.

Names are the GDY files griddly 1.6.7 ships under Single-Player/ (GVGAI ports and MiniGrid-style
games), e.g. `griddly/sokoban`, `griddly/zelda`, `griddly/clusters`, `griddly/labyrinth`.

Observers: `observer="vector"` (default, the registered bindings) gives one uint8 channel per
object type, channels first (C, W, H): sokoban (4, 13, 9), zelda (7, 13, 9). It is computed on the
CPU with no graphics. `observer="sprite"` / `"block"` render images (3, H, W) through Vulkan: on a
CPU machine Mesa's lavapipe (Debian `mesa-vulkan-drivers` + `libvulkan1`), on a GPU host the
NVIDIA Vulkan ICD (the container needs the `graphics` driver capability). Without a Vulkan driver
the sprite observer fails when the env is made; the vector observer never needs one.

Actions: the game's action space (Discrete(5) for sokoban: no-op and four moves; games with
several action types are MultiDiscrete). Griddly games do not tell a loss from a time-out and many
never end for a random agent, so every Griddly end is a terminal and the env adds a time limit:
`max_steps` (default 1000) ends the episode as a truncation. `level` picks one of the GDY's levels.

griddly 1.6.7 is built on the old `gym` API (gym 0.26 is in the image for procgen); this adapter
turns it into gymnasium and swallows gym's "unmaintained" import notice. Seeding: full (the game's
`seed()`, e.g. zelda's and spider-nest's random monsters, set by `reset(seed)`).
"""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.models:Default"
# The GDY files of griddly 1.6.7's single-player games (under griddly/resources/games/).
_GVGAI = (
    "bait",
    "bait_keys",
    "bait_partially_observable",
    "butterflies",
    "clusters",
    "clusters_partially_observable",
    "cookmepasta",
    "cookmepasta_partially_observable",
    "labyrinth",
    "labyrinth_partially_observable",
    "random_butterflies",
    "sokoban",
    "sokoban2",
    "sokoban2_partially_observable",
    "spider-nest",
    "zelda",
    "zelda_partially_observable",
    "zelda_sequential",
    "zenpuzzle",
    "zenpuzzle_partially_observable",
)
_MINIGRID = ("doggo", "drunkdwarf", "eyeball", "spiders")
# name -> GDY file
GAMES = {stem.replace("-", "_"): f"Single-Player/GVGAI/{stem}.yaml" for stem in _GVGAI} | {
    f"minigrid_{stem}": f"Single-Player/Mini-Grid/minigrid-{stem}.yaml" for stem in _MINIGRID
}
OBSERVERS = ("vector", "sprite", "block")


def _griddly():
    with contextlib.redirect_stderr(io.StringIO()):  # gym 0.26's "unmaintained" notice
        import griddly
    return griddly


def _space(space: Any) -> gymnasium.Space:
    """A gym space of Griddly's as the gymnasium space it stands for."""
    kind = type(space).__name__
    if kind == "Box":
        return gymnasium.spaces.Box(space.low, space.high, space.shape, space.dtype)
    if kind == "Discrete":
        return gymnasium.spaces.Discrete(int(space.n))
    if kind == "MultiDiscrete":
        return gymnasium.spaces.MultiDiscrete(np.asarray(space.nvec))
    raise ValueError(f"Griddly space {space} is not supported (single-player games only)")


class Griddly(gymnasium.Env):
    """One single-player Griddly game as a gymnasium env (see the module docstring)."""

    def __init__(self, game: str, observer: str = "vector", level: int = 0, max_steps: int = 1000) -> None:
        if game not in GAMES:
            raise ValueError(f"Unknown Griddly game {game!r}; one of {', '.join(GAMES)}")
        if observer not in OBSERVERS:
            raise ValueError(f"observer must be one of {', '.join(OBSERVERS)}, got {observer!r}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        griddly = _griddly()
        kind = {"vector": "VECTOR", "sprite": "SPRITE_2D", "block": "BLOCK_2D"}[observer]
        observer_type = getattr(griddly.gd.ObserverType, kind)
        self.game = game
        self.env = griddly.GymWrapper(
            GAMES[game],
            player_observer_type=observer_type,
            global_observer_type=griddly.gd.ObserverType.VECTOR,
            level=level,
        )
        if self.env.player_count != 1:
            raise ValueError(f"griddly/{game} has {self.env.player_count} players; single-player games only")
        self.env.reset()  # Griddly builds its spaces on the first reset
        self.observation_space = _space(self.env.observation_space)
        self.action_space = _space(self.env.action_space)
        self.max_steps = max_steps
        self._steps = 0

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.env.seed(int(seed) % 2**31)
        self._steps = 0
        return np.asarray(self.env.reset(), dtype=np.uint8), {}

    def step(self, action):
        obs, reward, done, _ = self.env.step(action)
        self._steps += 1
        truncated = not done and self._steps >= self.max_steps
        return np.asarray(obs, dtype=np.uint8), float(reward), bool(done), truncated, {}

    def render(self):
        return self.env.render(mode="rgb_array")

    def close(self) -> None:
        self.env.close()


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A Griddly game; kwargs: observer="vector" | "sprite" | "block", level=0, max_steps=1000."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    return GymnasiumPufferEnv(env=Griddly(name, **kwargs), buf=buf, seed=seed)


members = Members(
    "griddly", make_env, policy=Policy, requires=("griddly",), smoke=SmokeSpec(steps=256, seconds=90.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix), with vector observations.
REGISTERED = ("sokoban", "zelda", "clusters")


def _binding(game: str) -> Binding:
    return members.bind(
        game,
        description=f"Griddly {GAMES[game]} (vector observer: one channel per object, channels first)",
    )


register_catalog(members.family, tuple(GAMES), _binding, registered=REGISTERED)
