"""Vectorization: many environments behind one batched API.

    import pufferlib.vector
    vecenv = pufferlib.vector.make(creator, backend=pufferlib.vector.Multiprocessing,
                                   num_envs=8, num_workers=2, batch_size=4, seed=42)
    obs, infos = vecenv.reset()
    obs, rewards, terminals, truncations, infos = vecenv.step(actions)       # synchronous
    vecenv.send(actions)                                                      # asynchronous
    obs, rewards, terminals, truncations, infos, agent_ids, masks = vecenv.recv()
    vecenv.close()

Backends: `pufferlib.PufferEnv` (one native env that runs many agents itself: make returns the
env, num_envs must be 1), `Serial` (every env in this process), `Multiprocessing` (shared-memory
workers, EnvPool-style batches) and `Ray` (actors on a Ray cluster; `pip install 'pufferlib[ray]'`).
`autotune(creator, batch_size)` measures them on this machine and returns the fastest as make()'s
keyword arguments.

Rows: every env has `num_agents` agent rows (`driver_env.num_agents`); a batch has
`agents_per_batch` rows, which is batch_size * agents per env, not num_envs. `masks` is False
for padded rows (agents absent from a multi-agent env). Seeds: env i is built with, and first
reset with, seed + i; reset(seed=s) reseeds env i with s + i; reset() continues each env's
generator. Episode ends: an emulated env that is done is reset by the next send instead of
stepped (the action for its rows is ignored; its rows then hold the first observation, reward 0
and no terminal or truncation).
"""

from __future__ import annotations

from typing import Any

from pufferlib import APIUsageError, PufferEnv
from pufferlib.vector.autotune import autotune, physical_cores
from pufferlib.vector.base import VectorEnv, WorkerError, WorkerHung
from pufferlib.vector.creators import build_env, normalize_creators
from pufferlib.vector.layout import LAYOUT_KWARGS, Layout
from pufferlib.vector.multiprocessing import Multiprocessing
from pufferlib.vector.ray import Ray
from pufferlib.vector.serial import Serial

BACKENDS = {"pufferenv": PufferEnv, "serial": Serial, "multiprocessing": Multiprocessing, "ray": Ray}


def make(
    env_creator_or_creators: Any,
    env_args: Any = None,
    env_kwargs: Any = None,
    backend: Any = PufferEnv,
    num_envs: int = 1,
    seed: int | None = 0,
    **kwargs: Any,
):
    """Build a vector env. kwargs (not for PufferEnv): num_workers, batch_size, zero_copy, overwork;
    Multiprocessing also takes worker_timeout (seconds a worker may take to answer one command).

    `backend` is a class above or its name ("serial", "multiprocessing", "ray", "pufferenv").
    Multiprocessing defaults to as many workers as physical cores that divide num_envs.
    """
    if isinstance(backend, str):
        if backend.lower() not in BACKENDS:
            raise APIUsageError(f"Unknown backend {backend!r}; one of {', '.join(BACKENDS)}")
        backend = BACKENDS[backend.lower()]
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise APIUsageError(f"num_envs must be a positive integer, got {num_envs!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise APIUsageError(f"seed must be an int (env i gets seed + i) or None, got {seed!r}")

    if backend is PufferEnv:
        if num_envs != 1:
            raise APIUsageError(
                f"backend=PufferEnv runs one native env, which simulates its agents itself, so num_envs "
                f"must be 1 (got {num_envs}). For {num_envs} copies of the env use backend=Serial or "
                "backend=Multiprocessing"
            )
        if kwargs:
            raise APIUsageError(
                f"backend=PufferEnv takes no {', '.join(sorted(kwargs))}: they configure Serial, "
                "Multiprocessing and Ray"
            )
        if isinstance(env_creator_or_creators, list | tuple):
            raise APIUsageError("backend=PufferEnv takes one env creator, not a list")
        creators, args, kws = normalize_creators(env_creator_or_creators, env_args, env_kwargs, 1)
        return build_env(creators[0], args[0], kws[0], None, seed)  # a PufferEnv is its own vector env

    if backend not in (Serial, Multiprocessing, Ray):
        raise APIUsageError(
            f"backend must be pufferlib.PufferEnv, Serial, Multiprocessing or Ray, got {backend!r}"
        )
    options = (*LAYOUT_KWARGS, *getattr(backend, "OPTIONS", ()))
    unknown = sorted(set(kwargs) - set(options))
    if unknown:
        raise APIUsageError(
            f"Unknown argument(s) {', '.join(unknown)} for pufferlib.vector.make with {backend.__name__}; "
            f"its options are {', '.join(options)}"
        )
    creators = normalize_creators(env_creator_or_creators, env_args, env_kwargs, num_envs)
    return backend(*creators, num_envs, seed=seed, **kwargs)


__all__ = [
    "BACKENDS",
    "Layout",
    "Multiprocessing",
    "PufferEnv",
    "Ray",
    "Serial",
    "VectorEnv",
    "WorkerError",
    "WorkerHung",
    "autotune",
    "make",
    "physical_cores",
]
