"""Corridor, written as a PufferLib 3.0 Ocean env is (a test fixture of the 3.0 contract)."""

import gymnasium
import numpy as np
from pufferlib.ocean.corridor import binding

import pufferlib


class Corridor(pufferlib.PufferEnv):
    def __init__(self, num_envs=1, length=8, report_interval=1, buf=None, seed=0):
        self.single_observation_space = gymnasium.spaces.Box(low=0, high=1, shape=(length,), dtype=np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(2)
        self.num_agents = num_envs
        self.report_interval = report_interval
        self.tick = 0
        super().__init__(buf)
        self.c_envs = binding.vec_init(
            self.observations,
            self.actions,
            self.rewards,
            self.terminals,
            self.truncations,
            num_envs,
            seed,
            length=length,
        )

    def reset(self, seed=None):
        self.tick = 0
        binding.vec_reset(self.c_envs, seed or 0)
        return self.observations, []

    def step(self, actions):
        self.actions[:] = actions
        self.tick += 1
        binding.vec_step(self.c_envs)
        info = []
        if self.tick % self.report_interval == 0:
            log = binding.vec_log(self.c_envs)
            if log:
                info.append(log)
        return self.observations, self.rewards, self.terminals, self.truncations, info

    def render(self):
        binding.vec_render(self.c_envs, 0)

    def close(self):
        binding.vec_close(self.c_envs)
