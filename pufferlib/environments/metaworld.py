"""Meta-World (metaworld/<task>-v3): single-task MT1 manipulation with a Sawyer arm, goal observable.

MT1 as Meta-World defines it: one task (e.g. reach-v3) with 50 goal variations (object and goal
positions), `metaworld.MT1(task, seed=task_seed)`; each reset picks one of the 50. Observations are
39 floats (hand, gripper, object poses, the previous frame's, then the goal position: observable) as
float64; actions Box(-1, 1, (4,)) (hand displacement, gripper). Episodes are 500 steps and end in a
truncation; success does not end them (as in Meta-World's training setting).

Success: the env's `success` info (0/1) is true while the task is solved; the binding adds
`episode_success`, 1 once the task was solved at any step of the episode, which is what Meta-World's
success rate counts. Both arrive in the episode infos (last value of the episode), so the mean of
`episode_success` over episodes is the success rate.

Versions: metaworld 3.1.1 pins mujoco==3.3.0 (3.0.0 breaks on newer mujoco; docs/environments.md).
Building the 50 goals takes a few seconds (50 resets of a fresh env): it is done once per process
and task. Seeding: full. `reset(seed)` seeds the generator that picks the goal variation; the
positions come from the variation, so one seed gives one episode.
"""

from __future__ import annotations

import functools
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
# Every task of metaworld 3.1.1 (ALL_V3_ENVIRONMENTS; a unit test keeps it in step).
TASKS = (
    "assembly-v3",
    "basketball-v3",
    "bin-picking-v3",
    "box-close-v3",
    "button-press-topdown-v3",
    "button-press-topdown-wall-v3",
    "button-press-v3",
    "button-press-wall-v3",
    "coffee-button-v3",
    "coffee-pull-v3",
    "coffee-push-v3",
    "dial-turn-v3",
    "disassemble-v3",
    "door-close-v3",
    "door-lock-v3",
    "door-open-v3",
    "door-unlock-v3",
    "hand-insert-v3",
    "drawer-close-v3",
    "drawer-open-v3",
    "faucet-open-v3",
    "faucet-close-v3",
    "hammer-v3",
    "handle-press-side-v3",
    "handle-press-v3",
    "handle-pull-side-v3",
    "handle-pull-v3",
    "lever-pull-v3",
    "pick-place-wall-v3",
    "pick-out-of-hole-v3",
    "pick-place-v3",
    "plate-slide-v3",
    "plate-slide-side-v3",
    "plate-slide-back-v3",
    "plate-slide-back-side-v3",
    "peg-insert-side-v3",
    "peg-unplug-side-v3",
    "soccer-v3",
    "stick-push-v3",
    "stick-pull-v3",
    "push-v3",
    "push-wall-v3",
    "push-back-v3",
    "reach-v3",
    "reach-wall-v3",
    "shelf-place-v3",
    "sweep-into-v3",
    "sweep-v3",
    "window-open-v3",
    "window-close-v3",
)
# The registered set (exercised by the integration matrix): the tasks of the issue, one per skill.
REGISTERED = ("button-press-v3", "door-open-v3", "drawer-close-v3", "pick-place-v3", "push-v3", "reach-v3")


@functools.cache
def mt1(task: str, task_seed: int) -> Any:
    """The MT1 benchmark of one task (its env class and 50 goal variations), built once per process."""
    import metaworld

    return metaworld.MT1(task, seed=task_seed)


class MT1Task(gymnasium.Wrapper):
    """One Meta-World task whose every reset picks one of the benchmark's goal variations."""

    def __init__(self, task: str, task_seed: int = 0, render_mode: str | None = None) -> None:
        benchmark = mt1(task, task_seed)
        env = benchmark.train_classes[task](render_mode=render_mode)
        self.tasks = [t for t in benchmark.train_tasks if t.env_name == task]
        env.set_task(self.tasks[0])  # makes the goal observable and the observation space say so
        super().__init__(env)
        self.observation_space = env.sawyer_observation_space
        self._rng = np.random.default_rng()
        self._solved = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self.env.unwrapped.seed(seed)
        self.env.unwrapped.set_task(self.tasks[self._rng.integers(len(self.tasks))])
        self._solved = False
        return self.env.reset(options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._solved = self._solved or bool(info.get("success"))
        info["episode_success"] = float(self._solved)
        return obs, reward, terminated, truncated, info


def make_env(
    name: str, buf: Any = None, seed: int = 0, task_seed: int = 0, render_mode: str | None = None
) -> PufferEnv:
    """An MT1 task by name (e.g. 'reach-v3'); task_seed fixes the 50 goal variations (MT1's seed)."""
    if name not in TASKS:
        raise ValueError(f"Unknown Meta-World task {name!r}; MT1 tasks: {', '.join(TASKS)}")
    return GymnasiumPufferEnv(env=MT1Task(name, task_seed, render_mode), buf=buf, seed=seed)


members = Members(
    "metaworld",
    make_env,
    policy=Policy,
    requires=("metaworld",),
    smoke=SmokeSpec(steps=32, seconds=120.0),  # building the 50 goal variations dominates anyway
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    return members.bind(
        name,
        description=f"Meta-World MT1 {name}: 39 floats (goal observable), 4 actions, success in infos",
    )


register_catalog(members.family, TASKS, _binding, registered=REGISTERED)
