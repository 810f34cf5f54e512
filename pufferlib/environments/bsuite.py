"""bsuite (bsuite/<experiment>/<setting>): DeepMind's Behaviour Suite, its ids as `bsuite/catch/0`.

Each bsuite id (`catch/0`, `deep_sea/7`, `memory_len/12`, ...) is one setting of an experiment
(`bsuite.sweep.SETTINGS`: chain length, noise scale, problem size ...). The envs are `dm_env`
environments; this adapter turns one into a gymnasium env: the observation spec becomes a float32
Box of the same shape (catch: 10x5, deep_sea/0: 10x10, cartpole: 1x6), the discrete action spec
a Discrete. A last step with discount 0 is a terminal; a last step with discount > 0 (a time
limit, e.g. cartpole's 1000 steps at max_time) is a truncation.

Seeding: full. `reset(seed)` rebuilds the env of the id's setting and seeds its generator
(`_rng`: the ball's column in catch, cartpole's start, deep_sea_stochastic's transitions) with
`seed`; `reset()` goes on with it. The setting itself (including any `mapping_seed`, which picks
the problem instance) stays what the id says.

Not in the catalog: the 60 MNIST ids (mnist, mnist_noise, mnist_scale). They install without
TensorFlow, but load the MNIST data by downloading it on first use, which fails without network
(the image has none at run time: "urlopen error ... Name or service not known").
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.models:Default"
# Experiments of bsuite 0.3.6 and their number of settings (bsuite.sweep), without the MNIST three.
EXPERIMENTS = {
    "bandit": 20,
    "bandit_noise": 20,
    "bandit_scale": 20,
    "cartpole": 20,
    "cartpole_noise": 20,
    "cartpole_scale": 20,
    "cartpole_swingup": 20,
    "catch": 20,
    "catch_noise": 20,
    "catch_scale": 20,
    "deep_sea": 21,
    "deep_sea_stochastic": 21,
    "discounting_chain": 20,
    "memory_len": 23,
    "memory_size": 17,
    "mountain_car": 20,
    "mountain_car_noise": 20,
    "mountain_car_scale": 20,
    "umbrella_distract": 23,
    "umbrella_length": 23,
}
IDS = tuple(f"{exp}/{i}" for exp, n in EXPERIMENTS.items() for i in range(n))


def _load(bsuite_id: str) -> Any:
    from bsuite import bsuite as loader
    from bsuite import sweep

    if bsuite_id not in sweep.SETTINGS:
        raise ValueError(
            f"Unknown bsuite id {bsuite_id!r} (e.g. 'catch/0'); `puffer envs --all --family bsuite`"
        )
    experiment, _ = bsuite_id.split("/")
    return loader.load(experiment, sweep.SETTINGS[bsuite_id])  # load_from_id, without its banner


class BSuite(gymnasium.Env):
    """One bsuite id as a gymnasium env (see the module docstring)."""

    def __init__(self, bsuite_id: str) -> None:
        self.bsuite_id = bsuite_id
        self.env = _load(bsuite_id)
        obs_spec, act_spec = self.env.observation_spec(), self.env.action_spec()
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, tuple(obs_spec.shape), np.float32)
        self.action_space = gymnasium.spaces.Discrete(int(act_spec.num_values))
        self.num_episodes = int(getattr(self.env, "bsuite_num_episodes", 0))  # bsuite's recommended run

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.env = _load(self.bsuite_id)
            if isinstance(getattr(self.env, "_rng", None), np.random.RandomState):
                self.env._rng = np.random.RandomState(seed % 2**32)
        timestep = self.env.reset()
        return np.asarray(timestep.observation, dtype=np.float32), {}

    def step(self, action):
        timestep = self.env.step(int(action))
        last = timestep.last()
        terminal = last and float(timestep.discount) == 0.0
        ob = np.asarray(timestep.observation, dtype=np.float32)
        return ob, float(timestep.reward or 0.0), terminal, last and not terminal, {}

    def render(self):
        return None


def make_env(name: str, buf: Any = None, seed: int = 0) -> PufferEnv:
    """A bsuite env by its id, e.g. make_env("catch/0")."""
    return GymnasiumPufferEnv(env=BSuite(name), buf=buf, seed=seed)


members = Members("bsuite", make_env, policy=Policy, requires=("bsuite", "dm_env"))
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix): a basic skill, exploration, memory.
REGISTERED = ("catch/0", "deep_sea/0", "memory_len/0")


def _binding(bsuite_id: str) -> Binding:
    return members.bind(
        bsuite_id,
        smoke=SmokeSpec(steps=256, seconds=90.0, learn=bsuite_id == "catch/0"),
        # catch: +1 for a caught ball, -1 for a miss, one per episode: solved when 95% are caught
        solved=0.9 if bsuite_id.startswith("catch/") else None,
        description=f"bsuite {bsuite_id} (dm_env behind a gymnasium adapter)",
    )


register_catalog(members.family, IDS, _binding, registered=REGISTERED)
