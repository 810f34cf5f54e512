"""MuJoCo (mujoco/<id>): gymnasium's MuJoCo v5 locomotion and manipulation envs on the `mujoco` wheel.

State observations (float64 vectors) and Box actions in [-1, 1] (Humanoid: [-0.4, 0.4]); the
emulation clips a policy's actions to the box. Options go to gymnasium.make (e.g.
`ctrl_cost_weight=...`, `frame_skip=...`, `exclude_current_positions_from_observation=False`).
`render_mode="rgb_array"` (with `width`/`height`) renders headless through MUJOCO_GL (EGL in the
image: Mesa's llvmpipe on the CPU, the NVIDIA driver on a GPU host). Solved scores are the ids' own
`reward_threshold` where gymnasium defines one (InvertedPendulum 950, HalfCheetah 4800, ...).
Versions: mujoco 3.3.0, the one metaworld 3.1.1 pins (docs/environments.md, conflicts).
Seeding: full (gymnasium's `reset(seed=...)` draws the initial-state noise).
"""

from __future__ import annotations

from typing import Any

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.environments.support import rendering

# MUJOCO_GL=egl, LP_NUM_THREADS=0 unless set, before anything imports mujoco or dm_control (which read
# them when they load): pufferlib/environments/support/rendering.py says why.
rendering.headless()

Policy = "pufferlib.models:Default"
# Every MuJoCo v5 id of gymnasium 1.2 -> (observation size, action size), for the descriptions.
ENVS: dict[str, tuple[int, int]] = {
    "Ant-v5": (105, 8),
    "HalfCheetah-v5": (17, 6),
    "Hopper-v5": (11, 3),
    "Humanoid-v5": (348, 17),
    "HumanoidStandup-v5": (348, 17),
    "InvertedDoublePendulum-v5": (9, 1),
    "InvertedPendulum-v5": (4, 1),
    "Pusher-v5": (23, 7),
    "Reacher-v5": (10, 2),
    "Swimmer-v5": (8, 2),
    "Walker2d-v5": (17, 6),
}
# The registered set (exercised by the integration matrix, whose time budget it shares with every other
# family): the classic benchmarks of each kind (locomotion of three sizes, balance, reaching). The others
# are made the same way on demand.
REGISTERED = (
    "Ant-v5",
    "HalfCheetah-v5",
    "Hopper-v5",
    "Humanoid-v5",
    "InvertedPendulum-v5",
    "Reacher-v5",
)


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A gymnasium MuJoCo env by id; kwargs go to gymnasium.make."""
    import gymnasium

    return GymnasiumPufferEnv(env=gymnasium.make(name, **kwargs), buf=buf, seed=seed)


members = Members("mujoco", make_env, policy=Policy, requires=("mujoco",))
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    import gymnasium

    obs, act = ENVS[name]
    return members.bind(
        name,
        # learn: InvertedPendulum solves in ~120k steps (~15 s on 2 cores), the continuous-control cell
        smoke=SmokeSpec(steps=256, seconds=120.0, learn=name == "InvertedPendulum-v5"),
        solved=gymnasium.spec(name).reward_threshold,
        description=f"gymnasium MuJoCo {name}: {obs} floats, {act} continuous actions",
    )


register_catalog(members.family, tuple(ENVS), _binding, registered=REGISTERED)
