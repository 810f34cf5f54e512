"""MiniHack (minihack/<MiniHack id>): small NetHack levels on NLE, e.g. MiniHack-Room-5x5-v0.

MiniHack 1.0.2 runs on nle 1.3.0 (nle 1.3 pins gymnasium==1.2.0) as long as `pkg_resources`
exists: minihack imports it, and setuptools removed it in 81, hence setuptools<81 beside it.
Observations, policy and seeding are NetHack's (see pufferlib.environments.nethack): glyphs,
blstats and message by default, seeded through NLE's core/disp RNGs.

Not seeded by reset(seed=...): levels with a fixed list of level seeds (the `seeds=` option),
which MiniHack picks from with Python's global `random` on every reset.
"""

from __future__ import annotations

import warnings
from typing import Any

from pufferlib import PufferEnv
from pufferlib.environments.nethack import make_nle
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.environments.support.policies:NetHack"
# A cross-section of the suite: navigation, skills, the MiniGrid ports, and a quest.
ENVS = (
    "MiniHack-Room-5x5-v0",
    "MiniHack-Room-15x15-v0",
    "MiniHack-Room-Random-5x5-v0",
    "MiniHack-Room-Dark-5x5-v0",
    "MiniHack-Room-Monster-5x5-v0",
    "MiniHack-Room-Trap-5x5-v0",
    "MiniHack-Room-Ultimate-5x5-v0",
    "MiniHack-Corridor-R2-v0",
    "MiniHack-Corridor-R3-v0",
    "MiniHack-KeyRoom-S5-v0",
    "MiniHack-MazeWalk-9x9-v0",
    "MiniHack-MazeWalk-15x15-v0",
    "MiniHack-MultiRoom-N2-v0",
    "MiniHack-MultiRoom-N4-v0",
    "MiniHack-CorridorBattle-v0",
    "MiniHack-River-v0",
    "MiniHack-HideNSeek-v0",
    "MiniHack-Memento-F2-v0",
    "MiniHack-ExploreMaze-Easy-v0",
    "MiniHack-Eat-v0",
    "MiniHack-Pray-v0",
    "MiniHack-Wield-v0",
    "MiniHack-Wear-v0",
    "MiniHack-PutOn-v0",
    "MiniHack-Zap-v0",
    "MiniHack-Read-v0",
    "MiniHack-LockedDoor-v0",
    "MiniHack-WoD-Easy-Full-v0",
    "MiniHack-Levitate-Potion-Restricted-v0",
    "MiniHack-Freeze-Wand-Restricted-v0",
    "MiniHack-LavaCross-Full-v0",
    "MiniHack-Quest-Easy-v0",
    "MiniHack-Sokoban1a-v1",
)


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A MiniHack level; kwargs go to it (e.g. max_episode_steps=..., observation_keys=(...))."""
    with warnings.catch_warnings():
        # minihack 1.0.2 imports pkg_resources, which warns that it is deprecated (known, pinned).
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
        import minihack  # noqa: F401  (registers the MiniHack ids with gymnasium)
    return make_nle(name, buf=buf, seed=seed, **kwargs)


members = Members(
    "minihack",
    make_env,
    policy=Policy,
    requires=("minihack", "nle", "pkg_resources"),
    smoke=SmokeSpec(steps=512, seconds=60.0),
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix); the rest of ENVS is made the same way
# on demand (`puffer envs --all` lists them).
REGISTERED = (
    "MiniHack-Corridor-R2-v0",
    "MiniHack-Eat-v0",
    "MiniHack-KeyRoom-S5-v0",
    "MiniHack-MazeWalk-9x9-v0",
    "MiniHack-MultiRoom-N2-v0",
    "MiniHack-Quest-Easy-v0",
    "MiniHack-River-v0",
    "MiniHack-Room-5x5-v0",
    "MiniHack-Room-15x15-v0",
    "MiniHack-Room-Dark-5x5-v0",
    "MiniHack-Room-Monster-5x5-v0",
    "MiniHack-Room-Random-5x5-v0",
)


def _binding(name: str) -> Binding:
    return members.bind(
        name,
        description=f"MiniHack {name} (glyphs, blstats, message)",
    )


register_catalog(members.family, ENVS, _binding, registered=REGISTERED)
