"""Serial: every env in this process, one after another. The reference the other backends match.

With batch_size < num_envs the envs are split into equal blocks and recv() returns them in turn
(block 0, 1, ..., 0, ...): the same EnvPool-shaped API as Multiprocessing, deterministically.
"""

from __future__ import annotations

import numpy as np

from pufferlib import APIUsageError
from pufferlib.vector.base import Batch, VectorEnv
from pufferlib.vector.creators import Creators, env_seeds
from pufferlib.vector.envs import Envs, allocate
from pufferlib.vector.layout import Layout, check_layout


class Serial(VectorEnv):
    def _check_layout(
        self, num_envs: int, num_workers: int | None, batch_size: int | None, zero_copy: bool, overwork: bool
    ) -> Layout:
        # num_workers, zero_copy and overwork are checked like Multiprocessing's (so a config can switch
        # backend by name) but do not change how Serial runs; batch_size sets the block size.
        workers = num_workers if num_workers is not None else num_envs
        layout = check_layout(num_envs, workers, batch_size, zero_copy, overwork)
        if num_envs % layout.batch_size:
            good = [b for b in range(1, num_envs + 1) if num_envs % b == 0]
            raise APIUsageError(
                f"Serial returns equal blocks of envs in turn: num_envs={num_envs} must be divisible by "
                f"batch_size={layout.batch_size}; use batch_size in {good}"
            )
        return layout

    def _start(self, creators: Creators, seed: int | None, spec: tuple) -> None:
        num_envs, n = self.num_envs, spec[2]
        self.buf = allocate(num_envs * n, spec[0], spec[1])
        self.envs = Envs(creators, env_seeds(seed, num_envs), self.buf, spec)
        self._adopt_driver(self.envs.envs[0])  # no extra env: env 0 is the driver
        self.agent_ids = np.arange(self.num_agents)
        self._blocks = self.layout.num_batches
        rows = self.batch_size * n
        self._views = [
            Batch.of(self.buf, self.agent_ids, b * rows, (b + 1) * rows) for b in range(self._blocks)
        ]
        self._infos: list[list] = [[] for _ in range(self._blocks)]
        self._block = 0

    def _async_reset(self, seeds: list[int | None]) -> None:
        self._infos = [[] for _ in range(self._blocks)]
        per = self.batch_size
        for b in range(self._blocks):
            self._infos[b] = self.envs.reset(seeds[b * per : (b + 1) * per], b * per, (b + 1) * per)
        self._block = -1

    def _send(self, actions: np.ndarray, ints: list[int] | None) -> None:
        b, envs = self._block, self.envs
        lo = b * self.batch_size
        if ints is None or envs.discrete is None:
            self._views[b].actions[...] = actions
            ints = None
        self._infos[b] = envs.step(lo, lo + self.batch_size, ints)

    def _recv(self):
        self._block = b = (self._block + 1) % self._blocks
        infos, self._infos[b] = self._infos[b], []
        obs, rewards, terminals, truncations, agent_ids, masks, _ = self._views[b]
        return obs, rewards, terminals, truncations, infos, agent_ids, masks

    def _close(self) -> None:
        envs = getattr(self, "envs", None)
        if envs is not None:
            envs.close()
