"""From what the caller passed to one built env per slot: creators, their arguments, seeds.

An env creator is called as `creator(*env_args, buf=..., seed=..., **env_kwargs)` when it names
`buf` / `seed` parameters (the registry's creators do). A creator that returns a raw Gymnasium
env or a PettingZoo ParallelEnv is wrapped by pufferlib.emulation on the given buffer; a
PufferEnv built without `buf` keeps its own buffers and is copied into the batch after each call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium
import numpy as np

from pufferlib import APIUsageError, PufferEnv


class Creators(NamedTuple):
    """One (creator, args, kwargs) per env of a vector env."""

    creators: list[Callable]
    args: list[tuple]
    kwargs: list[dict]

    def part(self, envs: range) -> Creators:
        """The creators of the envs `envs` (a worker's share)."""
        return Creators(
            self.creators[envs.start : envs.stop],
            self.args[envs.start : envs.stop],
            self.kwargs[envs.start : envs.stop],
        )


def normalize_creators(
    env_creator_or_creators: Any, env_args: Any, env_kwargs: Any, num_envs: int
) -> Creators:
    """One (creator, args, kwargs) per env, from a single creator or a list of num_envs creators."""
    if isinstance(env_creator_or_creators, list | tuple):
        creators = list(env_creator_or_creators)
        if len(creators) != num_envs:
            raise APIUsageError(
                f"got {len(creators)} env creators for num_envs={num_envs}: pass one creator, "
                f"or a list of exactly {num_envs}"
            )
        args = [()] * num_envs if env_args is None else env_args
        kwargs = [{}] * num_envs if env_kwargs is None else env_kwargs
        if not isinstance(args, list | tuple) or len(args) != num_envs:
            raise APIUsageError(f"with a list of creators, env_args must be a list of {num_envs} tuples")
        if not isinstance(kwargs, list | tuple) or len(kwargs) != num_envs:
            raise APIUsageError(f"with a list of creators, env_kwargs must be a list of {num_envs} dicts")
    else:
        creators = [env_creator_or_creators] * num_envs
        args = [() if env_args is None else env_args] * num_envs
        kwargs = [{} if env_kwargs is None else env_kwargs] * num_envs
    for i, (c, a, k) in enumerate(zip(creators, args, kwargs, strict=True)):
        if not callable(c):
            raise APIUsageError(
                f"env creator {i} is not callable ({c!r}); pass a function or class that builds the env "
                "(not an env instance, not a dotted string)"
            )
        if not isinstance(a, list | tuple):
            raise APIUsageError(f"env_args must be a tuple or list of positional arguments, got {a!r}")
        if not isinstance(k, dict):
            raise APIUsageError(f"env_kwargs must be a dict of keyword arguments, got {k!r}")
    return Creators(creators, [tuple(a) for a in args], [dict(k) for k in kwargs])


def env_seeds(seed: int | None, n: int, offset: int = 0) -> list[int | None]:
    """Env i of the vector env gets seed + i (None leaves every env to its own generator)."""
    if seed is None:
        return [None] * n
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise APIUsageError(f"seed must be an int or None, got {seed!r}")
    return [int(seed) + offset + i for i in range(n)]


def _takes(creator: Callable, name: str) -> bool:
    try:
        params = inspect.signature(creator).parameters
    except (TypeError, ValueError):
        return False
    return name in params  # named only: a **kwargs creator may forward to gymnasium.make


class _CopyThrough(PufferEnv):
    """A PufferEnv whose creator takes no `buf`: it keeps its own buffers and we copy after each call."""

    def __init__(self, env: PufferEnv, buf: Any) -> None:
        self.env = env
        self.single_observation_space = env.single_observation_space
        self.single_action_space = env.single_action_space
        self.num_agents = env.num_agents
        self.emulated = env.emulated
        super().__init__(buf)

    @property
    def done(self) -> bool:  # type: ignore[override]
        return self.env.done

    def _copy(self) -> None:
        for name in ("observations", "rewards", "terminals", "truncations", "masks"):
            getattr(self, name)[:] = getattr(self.env, name)

    def reset(self, seed: int | None = None):
        infos = self.env.reset(seed)[1]
        self._copy()
        return self.observations, infos

    def step(self, actions):
        infos = self.env.step(actions)[4]
        self._copy()
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def close(self) -> None:
        self.env.close()


def build_env(creator: Callable, args: tuple, kwargs: dict, buf: Any, seed: int | None) -> PufferEnv:
    """Call the creator so that the env writes into `buf` (None: its own buffers)."""
    kw = dict(kwargs)
    takes_buf = _takes(creator, "buf")
    if takes_buf:
        kw.setdefault("buf", buf)
    if seed is not None and _takes(creator, "seed"):
        kw.setdefault("seed", seed)
    env = creator(*args, **kw)
    if isinstance(env, PufferEnv):
        if buf is not None and not takes_buf:
            env = _CopyThrough(env, buf)
        return env
    from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv

    if isinstance(env, gymnasium.Env):
        return GymnasiumPufferEnv(env=env, buf=buf, seed=seed or 0)
    if hasattr(env, "possible_agents") and hasattr(env, "observation_space"):
        return PettingZooPufferEnv(env=env, buf=buf, seed=seed or 0)
    raise APIUsageError(
        f"env creator {creator!r} returned {type(env).__name__}; it must return a PufferEnv, a Gymnasium "
        "env or a PettingZoo ParallelEnv"
    )


def env_spec(env: PufferEnv) -> tuple:
    return (env.single_observation_space, env.single_action_space, int(env.num_agents))


def check_spec(env: PufferEnv, spec: tuple, env_id: int) -> None:
    obs, atn, n = spec
    if env_spec(env) != spec:
        raise APIUsageError(
            f"env {env_id} differs from env 0: observation space {env.single_observation_space} vs {obs}, "
            f"action space {env.single_action_space} vs {atn}, num_agents {env.num_agents} vs {n}. "
            "Every env of a vector env needs the same spaces and number of agents"
        )
