"""Crafter (crafter/<name>): the open-world survival benchmark (Hafner, 2021), pure Python.

One game per env: a 64x64x3 uint8 image of the local view and inventory, 17 discrete actions.
The reward is +1 for each achievement unlocked for the first time in the episode and +-0.1 per
point of health gained or lost (`crafter/reward` is the benchmark's setting; `crafter/noreward`
gives reward 0 for unsupervised agents, with the same episodes). Episodes end when the player dies
(terminal) or after `length` steps (10,000; a truncation).

Infos: at episode end the emulation reports `achievements/<name>`: 1.0 if the achievement was
unlocked in that episode, else 0.0, for all 22 (their mean over episodes is the success rate that
Crafter's score is built from), next to `episode_return` and `episode_length`.

Seeding: Crafter draws world i of an env from (seed, i); `reset(seed)` restarts that count with the
new seed, `reset()` goes on to the next world. Crafter 1.8.3 alone is not reproducible across
processes (a set of creatures iterated in memory-address order decides which one despawns); the
adapter keeps those sets in insertion order, so one seed gives one episode in any process.
crafter imports gym 0.26 (present for procgen),
which prints an "unmaintained" notice; it is swallowed.
"""

from __future__ import annotations

import collections
import contextlib
import io
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.models:Convolutional"
ENVS = {"reward": True, "noreward": False}  # name -> crafter.Env(reward=...)


class _OrderedSet(dict):
    """The objects of one world chunk, iterated in insertion order (a set's order follows id())."""

    def add(self, obj: Any) -> None:
        self[obj] = None

    def remove(self, obj: Any) -> None:
        del self[obj]


def _ordered_world(world: Any) -> None:
    """Make crafter's world keep its chunks in insertion order, across resets.

    Crafter keeps each chunk's creatures in a set and despawns `creatures[random index]` of it: a
    set's order follows the objects' memory addresses, so the same seed played differently in
    another process (the smoke check's Serial-vs-Multiprocessing trace caught it at step 11).
    """

    class OrderedWorld(type(world)):
        def reset(self, seed: int | None = None) -> None:
            super().reset(seed)
            self._chunks = collections.defaultdict(_OrderedSet)

    world.__class__ = OrderedWorld
    world._chunks = collections.defaultdict(_OrderedSet)


def _crafter_env(**kwargs: Any) -> Any:
    with contextlib.redirect_stderr(io.StringIO()):
        import crafter
    env = crafter.Env(**kwargs)
    _ordered_world(env._world)
    return env


class Crafter(gymnasium.Env):
    """crafter.Env (the old gym API) as a gymnasium env with seeding through reset(seed)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, reward: bool = True, size: int = 64, length: int = 10_000, **kwargs: Any) -> None:
        if size < 9 or length < 1:
            raise ValueError(f"size must be >= 9 and length >= 1, got {size}, {length}")
        self.env = _crafter_env(reward=reward, size=(size, size), length=length, seed=0, **kwargs)
        self.observation_space = gymnasium.spaces.Box(0, 255, (size, size, 3), np.uint8)
        self.action_space = gymnasium.spaces.Discrete(len(self.env.action_names))
        self._last = None

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.env._seed = int(seed)  # crafter's world i comes from hash((seed, i)); restart the count
            self.env._episode = 0
        self._last = self.env.reset()
        return self._last, {}

    def step(self, action):
        obs, reward, done, info = self.env.step(int(action))
        self._last = obs
        dead = info["discount"] == 0
        unlocked = {name: float(count > 0) for name, count in info["achievements"].items()}
        return obs, float(reward), dead, done and not dead, {"achievements": unlocked}

    def render(self):
        return self._last


def make_env(name: str = "reward", buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """Crafter with its reward ("reward") or without ("noreward").

    kwargs: size=64, length=10000, and crafter.Env's area and view."""
    if name not in ENVS:
        raise ValueError(f"Unknown Crafter env {name!r}; one of {', '.join(ENVS)}")
    env = GymnasiumPufferEnv(env=Crafter(reward=ENVS[name], **kwargs), buf=buf, seed=seed)
    env.render_backend = "Crafter's own drawing (numpy and Pillow, on the CPU)"
    return env


members = Members(
    "crafter", make_env, policy=Policy, requires=("crafter",), smoke=SmokeSpec(steps=64, seconds=180.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    return members.bind(
        name,
        pixels=(64, 64, 3),
        description="Crafter 64x64x3 image, 17 actions, achievements in infos"
        + ("" if ENVS[name] else "; reward 0 (unsupervised)"),
    )


# the matrix runs "reward"; noreward is the same game, made on demand
register_catalog(members.family, tuple(ENVS), _binding, registered=("reward",))
