"""Box2D (box2d/<id>): gymnasium's LunarLander, BipedalWalker and CarRacing.

The physics comes from the `Box2D` 2.3.10 wheel, not gymnasium's `box2d` extra (which builds the
box2d-py sdist with swig and pulls plain `pygame`, which would clash with our pygame-ce: both own the
`pygame` module). CarRacing draws its 96x96 pixel observations with pygame(-ce) on a software surface,
so it needs no display: SDL_VIDEODRIVER=dummy is set unless the caller set it.

Names are gymnasium ids, plus `CarRacingDiscrete-v3` (CarRacing-v3 with `continuous=False`: 5
actions, do nothing/left/right/gas/brake), which gymnasium has no id for. Solved scores are the ids'
own `reward_threshold` (LunarLander 200, BipedalWalker 300, CarRacing 900).
Seeding: full (gymnasium's `reset(seed=...)`: terrain, track, wind and initial pushes).
"""

from __future__ import annotations

import os
from typing import Any

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.models:Default"
PixelPolicy = "pufferlib.models:Convolutional"
CAR_RACING_FRAME = (96, 96, 3)
# name -> (gymnasium id, its kwargs, description). Every name is registered (the family is small).
ENVS: dict[str, tuple[str, dict[str, Any], str]] = {
    "LunarLander-v3": ("LunarLander-v3", {}, "land between the flags: 8 floats, 4 discrete actions"),
    "LunarLanderContinuous-v3": (
        "LunarLanderContinuous-v3",
        {},
        "LunarLander with continuous thrust: 8 floats, Box(-1, 1, (2,)) actions",
    ),
    "BipedalWalker-v3": (
        "BipedalWalker-v3",
        {},
        "walk over rough terrain: 24 floats (hull, joints, lidar), 4 torques",
    ),
    "BipedalWalkerHardcore-v3": (
        "BipedalWalkerHardcore-v3",
        {},
        "BipedalWalker with ladders, stumps and pits",
    ),
    "CarRacing-v3": (
        "CarRacing-v3",
        {},
        "race a random track from 96x96x3 pixels; Box actions (steer, gas, brake)",
    ),
    "CarRacingDiscrete-v3": (
        "CarRacing-v3",
        {"continuous": False},
        "CarRacing with 5 discrete actions (nothing, left, right, gas, brake); 96x96x3 pixels",
    ),
}


def render_backend() -> str:
    """What draws CarRacing's frames: pygame(-ce) on a software surface."""
    import importlib.metadata

    return (
        f"pygame-ce {importlib.metadata.version('pygame-ce')} software surface "
        f"(SDL_VIDEODRIVER={os.environ.get('SDL_VIDEODRIVER', '')})"
    )


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A Box2D env by gymnasium id (or CarRacingDiscrete-v3); kwargs go to gymnasium.make."""
    import gymnasium

    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env_id, defaults = ENVS[name][:2] if name in ENVS else (name, {})
    env = GymnasiumPufferEnv(env=gymnasium.make(env_id, **{**defaults, **kwargs}), buf=buf, seed=seed)
    if env_id.startswith("CarRacing"):
        env.render_backend = render_backend
    return env


members = Members("box2d", make_env)
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    import gymnasium

    env_id, _, description = ENVS[name]
    pixels = CAR_RACING_FRAME if env_id.startswith("CarRacing") else ()
    return members.bind(
        name,
        policy=PixelPolicy if pixels else Policy,
        requires=("Box2D", "pygame") if pixels else ("Box2D",),
        # CarRacing renders every step in Python (~100 steps/s on one core), the others are fast.
        smoke=SmokeSpec(steps=16 if pixels else 256, seconds=120.0),
        solved=gymnasium.spec(env_id).reward_threshold,
        pixels=pixels,
        description=description,
    )


register_catalog(members.family, tuple(ENVS), _binding, registered=ENVS)
