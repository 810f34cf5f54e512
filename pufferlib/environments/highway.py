"""highway-env (highway/<id>): autonomous-driving decision tasks with kinematics observations.

Ids are highway-env's gymnasium ids, e.g. `highway/highway-v0`, `highway/merge-v0`,
`highway/roundabout-v0`, `highway/intersection-v0`, `highway/parking-v0`. Observations are
kinematics tables: one row per nearby vehicle (the ego vehicle first) of presence, x, y, vx, vy
(and heading features for intersection), float32 (highway/merge/roundabout: 5x5, intersection:
15x7). Actions are highway-env's meta-actions (Discrete: lane left, idle, lane right, faster,
slower). parking-v0 is goal-conditioned: a Dict of `observation`, `achieved_goal` and
`desired_goal` (6 floats each: x, y, vx, vy, cos h, sin h), flattened by the emulation, with
continuous actions (Box(-1, 1, (2,)): acceleration, steering; clipped by the emulation), and an
`is_success` info at episode end.

Options: `config={...}` is highway-env's config dict (e.g. {"vehicles_count": 20, "duration": 20,
"simulation_frequency": 5} as highway-fast-v0 uses); other kwargs go to gymnasium.make.
Episodes: a crash (or parking's success) is a terminal, the `duration` time limit a truncation.
Seeding: full (the traffic is drawn from the env's np_random, seeded by `reset(seed)`).
Rendering is not needed for these observations; pygame-ce (headless, SDL_VIDEODRIVER=dummy) is
only used by render(). Not in the catalog: the multi-agent `intersection-multi-agent-*` ids (a
Tuple of per-vehicle observations, which needs a PettingZoo adapter of its own).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import gymnasium

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.models:Default"
# The single-agent ids highway-env 1.12.1 registers.
ENVS = (
    "exit-v0",
    "exit-v1",
    "highway-v0",
    "highway-fast-v0",
    "intersection-v0",
    "intersection-v1",
    "intersection-v2",
    "lane-keeping-v0",
    "merge-v0",
    "merge-v1",
    "merge-generic-v0",
    "merge-generic-v1",
    "parking-v0",
    "parking-ActionRepeat-v0",
    "parking-parked-v0",
    "racetrack-v0",
    "racetrack-v1",
    "racetrack-large-v0",
    "racetrack-large-v1",
    "racetrack-oval-v0",
    "racetrack-oval-v1",
    "roundabout-v0",
    "roundabout-v1",
    "roundabout-generic-v0",
    "roundabout-generic-v1",
    "two-way-v0",
    "u-turn-v0",
    "u-turn-v1",
)


def make_env(
    name: str, buf: Any = None, seed: int = 0, config: dict | None = None, **kwargs: Any
) -> PufferEnv:
    """A highway-env task by gymnasium id; `config` is highway-env's config dict."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    import highway_env  # noqa: F401  (registers the ids with gymnasium)

    if name not in ENVS:
        raise ValueError(f"Unknown highway-env id {name!r}; one of {', '.join(ENVS)}")
    with warnings.catch_warnings():
        # gymnasium warns that some older ids (merge-v0 ...) have newer versions; both are catalogued.
        warnings.filterwarnings("ignore", message=".*is out of date.*")
        env = gymnasium.make(name, config=config, **kwargs) if config else gymnasium.make(name, **kwargs)
    return GymnasiumPufferEnv(env=env, buf=buf, seed=seed)


members = Members("highway", make_env, policy=Policy, requires=("highway_env",))
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix; highway-env steps at tens of steps per
# second, so the smoke budgets are short). Every other id is made the same way on demand.
REGISTERED = ("highway-fast-v0", "intersection-v0", "parking-v0")


def _binding(name: str) -> Binding:
    goal = " (goal-conditioned Dict, continuous actions)" if name.startswith("parking") else ""
    return members.bind(
        name,
        smoke=SmokeSpec(steps=16 if name.startswith("intersection") else 48, seconds=180.0),  # ~5 steps/s
        description=f"highway-env {name}: kinematics observations{goal}",
    )


register_catalog(members.family, ENVS, _binding, registered=REGISTERED)
