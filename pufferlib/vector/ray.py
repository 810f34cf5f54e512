"""Ray: each worker is a Ray actor stepping its envs; for simulation spread over a cluster.

Needs the ray extra (`pip install 'pufferlib[ray]'`). Connects to the running Ray instance if
`ray.init()` was called (e.g. `ray.init(address="auto")` for a cluster), else starts a local
one and shuts it down on close(). Results travel through Ray's object store, so every batch is a
copy (zero_copy does not apply). With batch_size < num_envs, recv() returns the first workers
to finish (ray.wait). num_workers beyond the cluster's CPUs needs overwork=True (actors then
get fractional CPUs).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from pufferlib import EnvironmentSetupError
from pufferlib.vector.base import VectorEnv, WorkerError
from pufferlib.vector.creators import Creators, env_seeds
from pufferlib.vector.envs import Envs, allocate
from pufferlib.vector.layout import Layout, check_layout


class RayWorker:
    """The actor: one process with its envs on private buffers."""

    def __init__(self, first_env: int, creators: Creators, seeds: list, spec: tuple) -> None:
        self.buf = allocate(len(creators.creators) * spec[2], spec[0], spec[1])
        self.envs = Envs(creators, seeds, self.buf, spec, first_env)

    def ready(self) -> bool:
        return True

    def _out(self, infos: list):
        b = self.buf
        return b.observations, b.rewards, b.terminals, b.truncations, b.masks, infos

    def reset(self, seeds: list):
        return self._out(self.envs.reset(seeds))

    def step(self, actions: np.ndarray):
        np.copyto(self.buf.actions, actions, casting="unsafe")
        return self._out(self.envs.step())

    def close(self) -> None:
        self.envs.close()


class Ray(VectorEnv):
    _ray: Any = None
    _owns_ray = False
    _actors: list | tuple = ()

    def _check_layout(
        self, num_envs: int, num_workers: int | None, batch_size: int | None, zero_copy: bool, overwork: bool
    ) -> Layout:
        try:
            import ray
        except ImportError as e:
            raise EnvironmentSetupError(
                "backend=Ray needs ray, which is not installed: pip install 'pufferlib[ray]'"
            ) from e
        self._ray = ray
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            import logging

            ray.init(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
        self._cpus = int(ray.cluster_resources().get("CPU", 1))
        what = "CPUs in the Ray cluster"
        return check_layout(num_envs, num_workers, batch_size, False, overwork, cores=self._cpus, what=what)

    def _start(self, creators: Creators, seed: int | None, spec: tuple) -> None:
        ray, layout = self._ray, self.layout
        self.envs_per_worker = layout.envs_per_worker
        self.workers_per_batch = layout.workers_per_batch
        self.agents_per_worker = layout.envs_per_worker * spec[2]
        self.agent_ids = np.arange(self.num_agents).reshape(layout.num_workers, self.agents_per_worker)
        self._pending: dict[Any, int] = {}  # object ref -> worker
        self._sel: list[int] = []
        self._actors = []
        actor = ray.remote(num_cpus=min(1.0, self._cpus / layout.num_workers))(RayWorker)
        for w in range(layout.num_workers):
            envs = layout.worker_envs(w)
            seeds = env_seeds(seed, len(envs), envs.start)
            self._actors.append(actor.remote(envs.start, creators.part(envs), seeds, spec))
        self._get([a.ready.remote() for a in self._actors])  # envs built (or their error raised)

    def _get(self, refs: list) -> list:
        try:
            return self._ray.get(refs)
        except self._ray.exceptions.RayError as e:
            cause = getattr(e, "cause", None)
            w = self._pending.get(refs[0]) if len(refs) == 1 else None
            self.close()
            raise WorkerError(
                f"Ray worker failed: {e}", worker=w, env_id=getattr(cause, "env_id", None), remote=str(e)
            ) from e

    def _async_reset(self, seeds: list[int | None]) -> None:
        if self._pending:
            self._get(list(self._pending))
        epw = self.envs_per_worker
        self._pending = {
            a.reset.remote(seeds[w * epw : (w + 1) * epw]): w for w, a in enumerate(self._actors)
        }

    def _send(self, actions: np.ndarray, ints: list[int] | None) -> None:
        apw = self.agents_per_worker
        for i, w in enumerate(self._sel):
            self._pending[self._actors[w].step.remote(actions[i * apw : (i + 1) * apw])] = w

    def _recv(self):
        refs = list(self._pending)
        if self.workers_per_batch < len(refs):
            refs, _ = self._ray.wait(refs, num_returns=self.workers_per_batch)
        results = self._get(refs)
        self._sel = [self._pending.pop(r) for r in refs]
        obs, rewards, terminals, truncations, masks, infos = zip(*results, strict=True)
        return (
            np.concatenate(obs),
            np.concatenate(rewards),
            np.concatenate(terminals),
            np.concatenate(truncations),
            [i for batch in infos for i in batch],
            self.agent_ids[self._sel].ravel(),
            np.concatenate(masks),
        )

    def _close(self) -> None:
        ray = self._ray
        if ray is None:
            return
        if self._actors:
            with contextlib.suppress(Exception):  # a dead actor cannot close its envs; killed below
                ray.get([a.close.remote() for a in self._actors], timeout=10)
            for a in self._actors:
                ray.kill(a)
            self._actors = []
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
