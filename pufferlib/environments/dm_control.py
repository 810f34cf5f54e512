"""DeepMind Control Suite (dm_control/<domain>-<task>[-pixels]) through Farama's shimmy adapter.

State observations are the suite's own Dict of float64 arrays (e.g. cartpole: position (3,), velocity
(2,)), written into one flat row by the emulation; the default policy reads them back by name.
`<domain>-<task>-pixels` observes an 84x84x3 uint8 frame instead, rendered headless each step by
MuJoCo through MUJOCO_GL (EGL in the image: Mesa's llvmpipe on the CPU, the NVIDIA driver on a GPU
host), from camera 0 (quadruped: camera 2, as in the pixel-based DMC literature). Actions are the
suite's Box (mostly [-1, 1]). Episodes are 1000 steps and end in a truncation (the suite never
terminates early, except for a few tasks, which report discount 0: a termination).

Adapter: shimmy 2.0.1's DmControlCompatibilityV0 (it installs cleanly beside our pins).
Versions: dm-control 1.0.28, the newest that accepts mujoco 3.3.0 (which metaworld 3.1.1 pins).
Seeding: full. `reset(seed)` gives the task a new RandomState(seed) (shimmy), from which the suite
draws every initial state; resets without a seed continue it.
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
from pufferlib.environments.support import rendering

# MUJOCO_GL=egl, LP_NUM_THREADS=0 unless set, before anything imports mujoco or dm_control (which read
# them when they load): pufferlib/environments/support/rendering.py says why.
rendering.headless()

Policy = "pufferlib.models:Default"
PixelPolicy = "pufferlib.models:Convolutional"
FRAME = (84, 84, 3)
# Every (domain, task) of dm_control 1.0.28's suite.ALL_TASKS (a unit test keeps it in step).
TASKS = (
    ("acrobot", "swingup"),
    ("acrobot", "swingup_sparse"),
    ("ball_in_cup", "catch"),
    ("cartpole", "balance"),
    ("cartpole", "balance_sparse"),
    ("cartpole", "swingup"),
    ("cartpole", "swingup_sparse"),
    ("cartpole", "two_poles"),
    ("cartpole", "three_poles"),
    ("cheetah", "run"),
    ("dog", "stand"),
    ("dog", "walk"),
    ("dog", "trot"),
    ("dog", "run"),
    ("dog", "fetch"),
    ("finger", "spin"),
    ("finger", "turn_easy"),
    ("finger", "turn_hard"),
    ("fish", "upright"),
    ("fish", "swim"),
    ("hopper", "stand"),
    ("hopper", "hop"),
    ("humanoid", "stand"),
    ("humanoid", "walk"),
    ("humanoid", "run"),
    ("humanoid", "run_pure_state"),
    ("humanoid_CMU", "stand"),
    ("humanoid_CMU", "walk"),
    ("humanoid_CMU", "run"),
    ("lqr", "lqr_2_1"),
    ("lqr", "lqr_6_2"),
    ("manipulator", "bring_ball"),
    ("manipulator", "bring_peg"),
    ("manipulator", "insert_ball"),
    ("manipulator", "insert_peg"),
    ("pendulum", "swingup"),
    ("point_mass", "easy"),
    ("point_mass", "hard"),
    ("quadruped", "walk"),
    ("quadruped", "run"),
    ("quadruped", "escape"),
    ("quadruped", "fetch"),
    ("reacher", "easy"),
    ("reacher", "hard"),
    ("stacker", "stack_2"),
    ("stacker", "stack_4"),
    ("swimmer", "swimmer6"),
    ("swimmer", "swimmer15"),
    ("walker", "stand"),
    ("walker", "walk"),
    ("walker", "run"),
)
NAMES = tuple(f"{domain}-{task}" for domain, task in TASKS)
# The registered set (exercised by the integration matrix, whose time budget it shares with every other
# family): the usual DMC benchmark tasks with state observations, one per domain, and one with pixels.
# Every other task (and the pixels variant of each) is made on demand.
REGISTERED = (
    "ball_in_cup-catch",
    "cartpole-swingup",
    "cheetah-run",
    "finger-spin",
    "humanoid-walk",
    "quadruped-run",
    "reacher-easy",
    "walker-walk",
    "cartpole-swingup-pixels",
)


class Pixels(gymnasium.ObservationWrapper):
    """Replaces the state observation with a rendered frame (height, width, 3) uint8."""

    def __init__(self, env: gymnasium.Env, shape: tuple[int, int, int] = FRAME) -> None:
        super().__init__(env)
        self.observation_space = gymnasium.spaces.Box(0, 255, shape, np.uint8)
        self._renderer = ""

    def observation(self, observation: Any) -> np.ndarray:
        return self.env.render()

    def render_backend(self) -> str:
        """MUJOCO_GL and the OpenGL renderer that drew the frames (e.g. llvmpipe, or the GPU's name)."""
        if not self._renderer:
            from OpenGL import GL

            with self.env.unwrapped.physics.contexts.gl.make_current() as ctx:
                renderer = ctx.call(GL.glGetString, GL.GL_RENDERER).decode()
                version = ctx.call(GL.glGetString, GL.GL_VERSION).decode()
            self._renderer = f"MUJOCO_GL={os.environ.get('MUJOCO_GL', '')}: {renderer}, OpenGL {version}"
        return self._renderer


def _shimmy_adapter() -> type:
    # `import shimmy` imports all of its adapters, among them gym 0.26's, and gym prints a notice telling
    # users to switch to gymnasium: noise here, so it is swallowed.
    with contextlib.redirect_stderr(io.StringIO()):
        from shimmy.dm_control_compatibility import DmControlCompatibilityV0
    return DmControlCompatibilityV0


def split(name: str) -> tuple[str, str, bool]:
    """'cartpole-swingup-pixels' -> ('cartpole', 'swingup', True)."""
    pixels = name.endswith("-pixels")
    domain, sep, task = name.removesuffix("-pixels").partition("-")
    if not sep or (domain, task) not in TASKS:
        raise ValueError(
            f"Unknown dm_control task {name!r}: names are <domain>-<task>[-pixels], e.g. cartpole-swingup "
            f"or walker-walk-pixels; the suite has {', '.join(NAMES)}"
        )
    return domain, task, pixels


def make_env(
    name: str,
    buf: Any = None,
    seed: int = 0,
    frame_size: int = FRAME[0],
    camera_id: int | None = None,
    environment_kwargs: dict | None = None,
    **task_kwargs: Any,
) -> PufferEnv:
    """A suite task by '<domain>-<task>[-pixels]'. task_kwargs go to suite.load (e.g. time_limit=...);
    environment_kwargs to the control.Environment (e.g. {'flat_observation': True})."""
    from dm_control import suite

    DmControlCompatibilityV0 = _shimmy_adapter()

    domain, task, pixels = split(name)
    env = suite.load(domain, task, task_kwargs=task_kwargs or None, environment_kwargs=environment_kwargs)
    if not pixels:
        return GymnasiumPufferEnv(env=DmControlCompatibilityV0(env), buf=buf, seed=seed)
    if camera_id is None:
        camera_id = 2 if domain == "quadruped" else 0
    size = {"height": frame_size, "width": frame_size, "camera_id": camera_id}
    wrapped = Pixels(
        DmControlCompatibilityV0(env, render_mode="rgb_array", render_kwargs=size), (*(frame_size,) * 2, 3)
    )
    puffer_env = GymnasiumPufferEnv(env=wrapped, buf=buf, seed=seed)
    puffer_env.render_backend = wrapped.render_backend
    return puffer_env


members = Members("dm_control", make_env, requires=("dm_control", "shimmy"))
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    domain, task, pixels = split(name)
    heavy = domain in ("dog", "humanoid_CMU", "quadruped", "humanoid", "stacker", "manipulator")
    camera = 2 if domain == "quadruped" else 0
    observes = f"84x84x3 frames rendered headless (camera {camera})" if pixels else "the suite's state Dict"
    return members.bind(
        name,
        policy=PixelPolicy if pixels else Policy,
        # Pixels render every step in software on the CPU (~100 frames/s on one core): a few steps suffice.
        smoke=SmokeSpec(steps=16 if pixels else 32 if heavy else 128, seconds=120.0),
        pixels=FRAME if pixels else (),
        description=f"DMC {domain} {task}: {observes}",
    )


register_catalog(members.family, NAMES + tuple(f"{n}-pixels" for n in NAMES), _binding, registered=REGISTERED)
