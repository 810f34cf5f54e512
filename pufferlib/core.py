"""What every other module stands on: the native `PufferEnv` base class with its preallocated buffers,
the batched spaces, episode statistics and the Namespace helper.

Imports numpy and gymnasium only (never torch). `pufferlib/__init__.py` re-exports every name here
lazily (`pufferlib.PufferEnv` is this module's PufferEnv), so `import pufferlib` alone stays light.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import gymnasium
import numpy as np

from pufferlib.exceptions import APIUsageError, EnvironmentSetupError, InvalidAgentError

__all__ = [
    "BUFFER_NAMES",
    "APIUsageError",
    "EnvironmentSetupError",
    "EpisodeStats",
    "InvalidAgentError",
    "Namespace",
    "PufferEnv",
    "action_buffer_spec",
    "allocate_buffers",
    "joint_space",
    "namespace",
    "resets_on_send",
    "set_buffers",
]

BUFFER_NAMES = ("observations", "rewards", "terminals", "truncations", "masks", "actions")


class Namespace(SimpleNamespace, Mapping):
    """A SimpleNamespace that is also a read-only mapping: `ns.x`, `ns["x"]`, `dict(ns)`, `**ns`."""

    def __getitem__(self, key: str) -> Any:
        return self.__dict__[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dict__)

    def __len__(self) -> int:
        return len(self.__dict__)


def namespace(self: Any = None, **kwargs: Any) -> Any:
    """PufferLib's helper: `namespace(a=1)` makes a Namespace; `namespace(obj, a=1)` sets attributes."""
    if self is None:
        return Namespace(**kwargs)
    self.__dict__.update(kwargs)
    return self


def action_buffer_spec(space: gymnasium.Space) -> tuple[tuple[int, ...], np.dtype]:
    """Per-agent shape and dtype of the action buffer for a (flat) action space."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return (), np.dtype(np.int32)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return tuple(space.shape), np.dtype(np.int32)
    if isinstance(space, gymnasium.spaces.Box):
        return tuple(space.shape), np.dtype(np.float32)
    raise APIUsageError(
        f"Native PufferEnv action spaces must be Discrete, MultiDiscrete or Box, got {space}. "
        "Wrap structured envs with pufferlib.emulation instead."
    )


def allocate_buffers(
    num_agents: int, observation_space: gymnasium.Space, action_space: gymnasium.Space
) -> SimpleNamespace:
    """Zeroed buffers for `num_agents` rows (what a vector backend would place in shared memory)."""
    atn_shape, atn_dtype = action_buffer_spec(action_space)
    return SimpleNamespace(
        observations=np.zeros((num_agents, *observation_space.shape), dtype=observation_space.dtype),
        rewards=np.zeros(num_agents, dtype=np.float32),
        terminals=np.zeros(num_agents, dtype=bool),
        truncations=np.zeros(num_agents, dtype=bool),
        masks=np.ones(num_agents, dtype=bool),
        actions=np.zeros((num_agents, *atn_shape), dtype=atn_dtype),
    )


def set_buffers(env: Any, buf: Any = None) -> None:
    """Attach `buf` (an object or dict with the six buffers) to `env`, or allocate fresh ones.

    Shapes and dtypes are checked here, once, so that step() can write in place without checks.
    """
    n = env.num_agents
    expected = allocate_buffers(n, env.single_observation_space, env.single_action_space)
    if buf is None:
        for name in BUFFER_NAMES:
            setattr(env, name, getattr(expected, name))
        return
    for name in BUFFER_NAMES:
        arr = buf[name] if isinstance(buf, dict) else getattr(buf, name, None)
        want = getattr(expected, name)
        if arr is None or arr.shape != want.shape or arr.dtype != want.dtype:
            got = None if arr is None else f"{arr.shape} {arr.dtype}"
            raise APIUsageError(
                f"{type(env).__name__}: buffer '{name}' must be {want.shape} {want.dtype}, got {got}"
            )
        setattr(env, name, arr)


def joint_space(space: gymnasium.Space, n: int) -> gymnasium.Space:
    """The batched space of `n` agents that share `space`."""
    if isinstance(space, gymnasium.spaces.Discrete):
        return gymnasium.spaces.MultiDiscrete([space.n] * n, start=[space.start] * n)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return gymnasium.spaces.MultiDiscrete(np.stack([space.nvec] * n), start=np.stack([space.start] * n))
    if isinstance(space, gymnasium.spaces.Box):
        low = np.broadcast_to(space.low, (n, *space.shape))
        high = np.broadcast_to(space.high, (n, *space.shape))
        return gymnasium.spaces.Box(low=low, high=high, dtype=space.dtype)
    raise APIUsageError(f"Cannot batch space {space}")


class EpisodeStats:
    """Episode return and length per agent row, for native multi-envs that reset rows themselves."""

    def __init__(self, num_agents: int) -> None:
        self.returns = np.zeros(num_agents, dtype=np.float64)
        self.lengths = np.zeros(num_agents, dtype=np.int64)

    def reset(self) -> None:
        self.returns[:] = 0
        self.lengths[:] = 0

    def step(self, rewards: np.ndarray, ended: np.ndarray, extra=None) -> list[dict]:
        """Add one step; return the infos of the rows whose episode `ended` (and restart them).

        `extra(row)` may add the env's own numbers to a finished row's info.
        """
        self.returns += rewards
        self.lengths += 1
        if not ended.any():
            return []
        rows = np.flatnonzero(ended)
        infos = [
            {
                "episode_return": float(self.returns[i]),
                "episode_length": int(self.lengths[i]),
                **(extra(i) if extra else {}),
            }
            for i in rows
        ]
        self.returns[rows] = 0
        self.lengths[rows] = 0
        return infos


def resets_on_send(env: Any) -> bool:
    """Whether `env` (a PufferEnv, or a vector env's driver) delivers an episode's final observation
    with its terminal/truncation and resets on the next send (pufferlib.emulation), rather than in
    the step that ends the episode (native envs). A native env whose observation has named fields
    carries an `emulated` structure too, marked `"resets_on_send": False`."""
    emulated = env.emulated
    return emulated is not None and bool(emulated.get("resets_on_send", True))


class PufferEnv:
    """Base class of every environment PufferLib vectorizes.

    A native env sets `single_observation_space` (a Box), `single_action_space` (Discrete,
    MultiDiscrete or Box) and `num_agents` before calling `super().__init__(buf)`, then writes
    observations, rewards, terminals and truncations in place on every step. Native envs reset
    themselves; emulated envs (pufferlib.emulation) set `done` and expect a reset instead of a step.
    """

    emulated: dict | None = None
    done: bool = False

    def __init__(self, buf: Any = None) -> None:
        for attr in ("single_observation_space", "single_action_space", "num_agents"):
            if not hasattr(self, attr):
                raise APIUsageError(f"{type(self).__name__} must set {attr} before PufferEnv.__init__")
        if not isinstance(self.single_observation_space, gymnasium.spaces.Box):
            raise APIUsageError(
                f"{type(self).__name__}: native observation space must be a Box, "
                f"got {self.single_observation_space}"
            )
        action_buffer_spec(self.single_action_space)  # raises on unsupported spaces
        if int(self.num_agents) < 1:
            raise APIUsageError(f"{type(self).__name__}: num_agents must be >= 1, got {self.num_agents}")
        self.observation_space = joint_space(self.single_observation_space, self.num_agents)
        self.action_space = joint_space(self.single_action_space, self.num_agents)
        self.agent_ids = np.arange(self.num_agents)
        set_buffers(self, buf)

    @property
    def agents_per_batch(self) -> int:
        return self.num_agents

    @property
    def driver_env(self) -> PufferEnv:
        return self

    # Native envs implement these two and keep the buffers up to date.
    def reset(self, seed: int | None = None):
        raise NotImplementedError

    def step(self, actions):
        raise NotImplementedError

    def close(self) -> None:
        pass

    def render(self):
        return None

    # The asynchronous API, so that a single PufferEnv is also a valid vector env (backend=PufferEnv).
    def async_reset(self, seed: int | None = None) -> None:
        self._infos = self.reset(seed)[1]

    def send(self, actions) -> None:
        if self.done:
            self._infos = self.reset()[1]
        else:
            self._infos = self.step(actions)[4]

    def recv(self):
        return (
            self.observations,
            self.rewards,
            self.terminals,
            self.truncations,
            self._infos,
            self.agent_ids,
            self.masks,
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
