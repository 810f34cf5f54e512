"""The base that pufferlib.emulation's Gymnasium and PettingZoo wrappers share: spaces, buffers, the
checks of the env's outputs and of the caller's actions, and the checked-step hook (CheckedStep)
through which vector backends step an env whose actions they have already checked.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium
import numpy as np
from gymnasium import spaces

from pufferlib import APIUsageError, PufferEnv
from pufferlib import spaces as pspaces


class CheckedStep(NamedTuple):
    """How a vector backend steps an emulated env whose actions it has checked itself, for the
    whole batch at once (VectorEnv._check_actions): the env's own per-step checks are skipped.

    `step(actions)` takes the env's rows of the flat action buffer, shape (num_agents, ...), writes
    the step into the env's buffers as step() does, and returns its infos (a list: one dict at an
    episode's end). Where `discrete_start` is an int (one agent, a top-level Discrete action
    space), `step(value)` takes instead one Python int: the flat action plus `discrete_start`.
    """

    step: Callable[[Any], list]
    discrete_start: int | None = None


def make_object(
    obj: Any = None, creator: Callable | None = None, args: tuple = (), kwargs: dict | None = None
) -> Any:
    """Return `obj`, or build it with `creator(*args, **kwargs)`: exactly one of the two."""
    if obj is not None and creator is not None:
        raise APIUsageError("Pass either env or env_creator, not both")
    if obj is None and creator is None:
        raise APIUsageError("Pass an env instance (env=...) or a callable that builds one (env_creator=...)")
    if creator is not None:
        if not callable(creator):
            raise APIUsageError(f"env_creator must be callable, got {creator!r}")
        return creator(*args, **(kwargs or {}))
    if (args or kwargs) and obj is not None:
        raise APIUsageError("env_args/env_kwargs only apply with env_creator")
    return obj


class _Emulated(PufferEnv):
    """What the Gymnasium and PettingZoo wrappers share: the constructor, spaces, buffers, action checks.

    The wrapped env is `env`, or what `env_creator(*env_args, **env_kwargs)` builds; a subclass reads its
    spaces and agents in `_bind(buf, seed)`, which ends in `_setup(...)`.
    """

    def __init__(
        self,
        env: Any = None,
        env_creator: Callable | None = None,
        env_args: tuple = (),
        env_kwargs: dict | None = None,
        buf: Any = None,
        seed: int = 0,
    ) -> None:
        self.env = make_object(env, env_creator, env_args, env_kwargs)
        self._bind(buf, seed)

    def _bind(self, buf: Any, seed: int) -> None:
        raise NotImplementedError

    def _setup(self, obs_space: gymnasium.Space, atn_space: gymnasium.Space, buf: Any, seed: int) -> None:
        self.single_observation_space, self.obs_dtype = pspaces.flat_observation_space(obs_space)
        self.single_action_space = pspaces.flat_action_space(atn_space)
        self.emulated = {
            "observation_dtype": self.obs_dtype,
            "emulated_observation_space": obs_space,
            "emulated_action_space": atn_space,
            "flat_observation_dtype": np.dtype(self.single_observation_space.dtype),
        }
        self._native_obs_space = obs_space
        self._native_atn_space = atn_space
        self._seed = seed
        self._initialized = False
        self._first_step_checked = False  # the first step's observation was checked
        self._cast_warned: set[str] = set()
        self._reset_takes_seed = _takes_seed(self.env.reset)
        self.done = False
        super().__init__(buf)
        if self.obs_dtype is not None:
            self._struct = self.observations.view(self.obs_dtype).reshape(self.num_agents)
        self._nvec = None
        if isinstance(self.single_action_space, spaces.MultiDiscrete):
            self._nvec = self.single_action_space.nvec.astype(np.int64)
            self._bounds = self._nvec.tolist() * self.num_agents  # flat upper bounds of a whole batch
        elif isinstance(self.single_action_space, spaces.Discrete):
            self._nvec = np.int64(self.single_action_space.n)
            self._bounds = [int(self._nvec)] * self.num_agents
        self._atn_shape = self.actions.shape
        self._box_bounds = None
        if isinstance(atn_space, spaces.Box):
            self._box_bounds = (atn_space.low, atn_space.high)
        # A top-level Discrete action is one Python int plus `start` (None for every other space).
        self._atn_start = int(atn_space.start) if isinstance(atn_space, spaces.Discrete) else None
        self._atn_n = int(atn_space.n) if isinstance(atn_space, spaces.Discrete) else 0
        # Per-step writes through memoryviews: an item or a slice assignment costs about half of
        # numpy's (which must first build an index and a view). `_obs_view` is set once the first
        # step's observation was checked and is a 1-D array of the declared dtype; anything else
        # (another dtype, a list, a Dict) goes through numpy, which casts.
        # Row views, built once; `[i, ...]` keeps a scalar space's rows 0-d arrays (writable views),
        # where iterating the 1-D buffer would give numpy scalars (copies).
        self._obs_rows = [self.observations[i, ...] for i in range(len(self.observations))]
        self._obs_view: memoryview | None = None
        self._outcome_views = (
            memoryview(self.rewards),
            memoryview(self.terminals),
            memoryview(self.truncations),
        )

    def _write(self, row: int, ob: Any) -> None:
        if self.obs_dtype is None:
            self._obs_rows[row][...] = ob
        else:
            pspaces.write_observation(self._struct[row], ob, self._native_obs_space)

    def _fast_observation(self, ob: Any) -> memoryview | None:
        """A memoryview of row 0 that `ob`'s kind of array can be copied into as is, or None."""
        row = self._obs_rows[0]
        if (
            self.obs_dtype is None
            and row.ndim == 1
            and row.flags.c_contiguous
            and isinstance(ob, np.ndarray)
            and ob.dtype == row.dtype
            and ob.shape == row.shape
        ):
            return memoryview(row)
        return None

    def _check_observation(self, ob: Any, agent: Any = None) -> None:
        space = self._native_obs_space
        if space.contains(ob):
            return
        who = f" agent {agent!r}" if agent is not None else ""
        try:  # e.g. float64 values for a float32 Box: gymnasium warns, and the buffer casts them anyway
            cast, casts = pspaces.cast_observation(ob, space)
        except ValueError as e:
            raise APIUsageError(f"{self.name}:{who} {e}") from None
        if casts and space.contains(cast):
            for path, got, want in casts:
                if path not in self._cast_warned:
                    self._cast_warned.add(path)
                    warnings.warn(
                        f"{self.name}: {path} is {got} but the observation space declares {want}; "
                        "casting it into the buffer (return the declared dtype to silence this)",
                        stacklevel=4,
                    )
            return
        raise APIUsageError(
            f"{self.name}:{who} observation does not match the declared observation space "
            f"{space}: {_short(ob)}"
        )

    def _reset_env(self, seed: int | None) -> Any:
        """env.reset(seed=...), or for an env whose reset() takes no seed: env.seed(seed) and the action
        space's seed where the env offers them, then reset()."""
        if self._reset_takes_seed:
            return self.env.reset(seed=seed)
        if seed is not None:
            if callable(getattr(self.env, "seed", None)):
                self.env.seed(seed)
            space = getattr(self.env, "action_space", None)
            if isinstance(space, gymnasium.Space):
                space.seed(seed)
        return self.env.reset()

    def _validate_actions(self, actions: Any) -> np.ndarray:
        """Shape and bounds of a batch of flat actions; returns them as (num_agents, ...) array."""
        if not self._initialized:
            raise APIUsageError(f"{self.name}: step() called before reset()")
        if self.done:
            raise APIUsageError(
                f"{self.name}: step() called after the episode ended (terminated or truncated); "
                "call reset() first"
            )
        actions = np.asarray(actions)
        if actions.shape != self._atn_shape:
            if actions.size == int(np.prod(self._atn_shape)) and actions.dtype.kind in "biuf":
                actions = actions.reshape(self._atn_shape)
            else:
                raise APIUsageError(
                    f"{self.name}: action must have shape {self._atn_shape} "
                    f"(num_agents={self.num_agents}, space {self.single_action_space}), "
                    f"got shape {actions.shape}: {_short(actions)}"
                )
        if self._nvec is not None:
            if actions.dtype.kind not in "iubf":
                raise APIUsageError(f"{self.name}: discrete actions must be integers, got {_short(actions)}")
            if actions.size <= 64:  # small batches: plain Python beats numpy's per-call overhead (~1 us)
                values = actions.reshape(-1).tolist()
                valid = all(0 <= x < n and x == int(x) for x, n in zip(values, self._bounds, strict=True))
            else:
                valid = bool(((actions >= 0) & (actions < self._nvec) & (np.mod(actions, 1) == 0)).all())
            if not valid:
                raise APIUsageError(
                    f"{self.name}: action {_short(actions)} out of range for {self.single_action_space}: "
                    f"each entry must be an integer with 0 <= a < {self._nvec.tolist()}"
                )
        return actions

    def _native_action(self, flat: np.ndarray) -> Any:
        if self._box_bounds is not None:  # Gaussian policies sample outside the box; envs expect inside
            return np.clip(flat, *self._box_bounds).astype(self._native_atn_space.dtype, copy=False)
        return pspaces.unflatten_action(flat, self._native_atn_space)

    def _first_seed(self, seed: int | None) -> int | None:
        if seed is None and not self._initialized:
            return self._seed
        return seed

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def _takes_seed(reset: Callable) -> bool:
    try:
        params = inspect.signature(reset).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "seed" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
