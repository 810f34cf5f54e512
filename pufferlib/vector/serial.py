"""Serial: every env in this process, one after another. The reference the other backends match.

With batch_size < num_envs the envs are split into equal blocks and recv() returns them in turn
(block 0, 1, ..., 0, ...): the same EnvPool-shaped API as Multiprocessing, deterministically.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pufferlib import APIUsageError
from pufferlib.vector.base import Envs, VectorEnv, allocate, build_env, check_layout, env_seeds, env_spec


class Serial(VectorEnv):
    def __init__(
        self,
        env_creators: list[Callable],
        env_args: list[tuple],
        env_kwargs: list[dict],
        num_envs: int,
        seed: int | None = 0,
        num_workers: int | None = None,
        batch_size: int | None = None,
        zero_copy: bool = True,
        overwork: bool = False,
    ) -> None:
        # num_workers, zero_copy and overwork are checked like Multiprocessing's (so a config can switch
        # backend by name) but do not change how Serial runs; batch_size sets the block size.
        workers = num_workers if num_workers is not None else num_envs
        _, batch_size = check_layout(num_envs, workers, batch_size, zero_copy, overwork)
        if num_envs % batch_size:
            good = [b for b in range(1, num_envs + 1) if num_envs % b == 0]
            raise APIUsageError(
                f"Serial returns equal blocks of envs in turn: num_envs={num_envs} must be divisible by "
                f"batch_size={batch_size}; use batch_size in {good}"
            )
        probe = build_env(env_creators[0], env_args[0], env_kwargs[0], None, seed)
        spec = env_spec(probe)
        probe.close()
        n = spec[2]
        self.buf = allocate(num_envs * n, spec[0], spec[1])
        self.envs = Envs(env_creators, env_args, env_kwargs, env_seeds(seed, num_envs), self.buf, spec)
        self._init_spaces(self.envs.envs[0], num_envs, batch_size, seed)
        self.agent_ids = np.arange(self.num_agents)
        self._blocks = num_envs // batch_size
        rows = batch_size * n
        self._views = [
            tuple(
                a[b * rows : (b + 1) * rows]
                for a in (
                    self.buf.observations,
                    self.buf.rewards,
                    self.buf.terminals,
                    self.buf.truncations,
                    self.agent_ids,
                    self.buf.masks,
                    self.buf.actions,
                )
            )
            for b in range(self._blocks)
        ]
        self._infos: list[list] = [[] for _ in range(self._blocks)]
        self._block = 0

    def _async_reset(self, seeds: list[int | None]) -> None:
        self._infos = [[] for _ in range(self._blocks)]
        per = self.batch_size
        for b in range(self._blocks):
            self._infos[b] = self.envs.reset(seeds[b * per : (b + 1) * per], b * per, (b + 1) * per)
        self._block = -1

    def _send(self, actions: np.ndarray) -> None:
        b = self._block
        np.copyto(self._views[b][6], actions, casting="unsafe")
        self._infos[b] = self.envs.step(b * self.batch_size, (b + 1) * self.batch_size)

    def _recv(self):
        self._block = b = (self._block + 1) % self._blocks
        obs, rewards, terminals, truncations, ids, masks, _ = self._views[b]
        infos, self._infos[b] = self._infos[b], []
        return obs, rewards, terminals, truncations, infos, ids, masks

    def _close(self) -> None:
        self.envs.close()
