"""The API every vector backend exposes, and how every backend is built: the facade.

It keeps the call order (reset, then send and recv alternately, nothing after close), checks a
whole batch's actions once, and builds the driver env. The parts it is built from: the layout rules
(vector/layout.py), creators and env building (vector/creators.py), the envs of one process over one
buffer (vector/envs.py); CPU topology lives with autotune (vector/autotune.py).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from pufferlib import APIUsageError, PufferEnv, joint_space
from pufferlib.vector.creators import Creators, build_env, env_seeds, env_spec
from pufferlib.vector.layout import Layout


class WorkerError(RuntimeError):
    """An environment failed in a worker (exception, crash or kill); carries the worker's traceback."""

    def __init__(self, message: str, worker: int | None = None, env_id: int | None = None, remote: str = ""):
        super().__init__(message)
        self.worker = worker
        self.env_id = env_id
        self.remote_traceback = remote


class WorkerHung(WorkerError):
    """A worker did not answer a command within the backend's worker_timeout (stopped, or stuck)."""


# ------------------------------------------------------------------------------------------ facade

# The call order a vector env accepts: reset first, then recv and send alternately, nothing after close.
IDLE, CAN_SEND, CAN_RECV, CLOSED = "reset", "send", "recv", "closed"


class Batch(NamedTuple):
    """Views of one batch's agent rows: what recv() returns (with infos), and where send() writes."""

    observations: np.ndarray
    rewards: np.ndarray
    terminals: np.ndarray
    truncations: np.ndarray
    agent_ids: np.ndarray
    masks: np.ndarray
    actions: np.ndarray

    @classmethod
    def of(cls, buf: Any, agent_ids: np.ndarray, lo: int, hi: int) -> Batch:
        """Rows lo:hi of `buf` (observations, rewards, terminals, truncations, masks, actions)."""
        return cls(
            buf.observations[lo:hi],
            buf.rewards[lo:hi],
            buf.terminals[lo:hi],
            buf.truncations[lo:hi],
            agent_ids[lo:hi],
            buf.masks[lo:hi],
            buf.actions[lo:hi],
        )

    def received(self, infos: list) -> tuple:
        """recv()'s 7-tuple: observations, rewards, terminals, truncations, infos, agent_ids, masks."""
        return (
            self.observations,
            self.rewards,
            self.terminals,
            self.truncations,
            infos,
            self.agent_ids,
            self.masks,
        )


class VectorEnv:
    """The API every backend exposes, and how every backend is built.

    Synchronous: reset(seed) -> (observations, infos); step(actions) -> (observations, rewards,
    terminals, truncations, infos). Asynchronous: async_reset(seed), send(actions), recv() ->
    (observations, rewards, terminals, truncations, infos, agent_ids, masks).

    Construction, shared by the backends: `_check_layout` validates the split into workers and
    batches, a driver env built here in this process gives the spaces, and `_start` (the backend's)
    builds the envs. Anything raised on the way closes what was built. A backend implements
    _check_layout, _start, _async_reset, _send, _recv and _close; close() also closes the driver env
    (unless the backend adopted it as one of its own envs: Serial does).
    """

    driver_env: PufferEnv
    layout: Layout
    num_envs: int
    num_agents: int  # agent rows over every env
    agents_per_batch: int  # agent rows returned by one recv
    num_workers: int = 1
    batch_size: int

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
        self._flag = CLOSED  # until fully built, the public API refuses calls
        self._driver: PufferEnv | None = None  # the driver env while this class must close it
        creators = Creators(list(env_creators), list(env_args), list(env_kwargs))
        try:
            self.layout = self._check_layout(num_envs, num_workers, batch_size, zero_copy, overwork)
            self._driver = build_env(creators.creators[0], creators.args[0], creators.kwargs[0], None, seed)
            self._init_spaces(self._driver, self.layout, seed)
            self._start(creators, seed, env_spec(self._driver))
        except BaseException:
            self._shutdown()
            raise
        self._flag = IDLE

    def _init_spaces(self, driver: PufferEnv, layout: Layout, seed: int | None) -> None:
        self.driver_env = driver
        self.emulated = driver.emulated
        self.single_observation_space = driver.single_observation_space
        self.single_action_space = driver.single_action_space
        self.agents_per_env = int(driver.num_agents)
        self.num_envs = layout.num_envs
        self.num_workers = layout.num_workers
        self.batch_size = layout.batch_size
        self.num_agents = layout.num_envs * self.agents_per_env
        self.agents_per_batch = layout.batch_size * self.agents_per_env
        self.observation_space = joint_space(self.single_observation_space, self.agents_per_batch)
        self.action_space = joint_space(self.single_action_space, self.agents_per_batch)
        from pufferlib import action_buffer_spec

        shape, dtype = action_buffer_spec(self.single_action_space)
        self._atn_shape = (self.agents_per_batch, *shape)
        self._atn_dtype = dtype
        self._atn_discrete = dtype.kind == "i"
        self._atn_range = None
        self._atn_limits = None
        if self._atn_discrete:  # the values a discrete action may take: [low, high]
            space = self.single_action_space
            start = np.asarray(space.start)
            last = start + np.asarray(getattr(space, "nvec", getattr(space, "n", 1))) - 1
            self._atn_range = (int(start.min()), int(last.max()))
            if start.min() != start.max() or last.min() != last.max():  # branches differ: check each
                self._atn_limits = (start.astype(np.int64), last.astype(np.int64))
        # Every valid value, for the check of small batches: one set lookup per action (which also
        # refuses 1.5, NaN and 1e20) instead of min() and max(), whose argument parsing costs more.
        self._atn_valid = None
        if self._atn_range is not None and self._atn_limits is None:
            low, high = self._atn_range
            if high - low < 4096:
                self._atn_valid = frozenset(range(low, high + 1))
        self._seed = seed
        self._was_reset = False

    def _adopt_driver(self, env: PufferEnv) -> None:
        """Use `env` (one of the backend's own envs) as the driver; close the one built for the spaces."""
        driver, self._driver = self._driver, None
        if driver is not None and driver is not env:
            driver.close()
        self.driver_env = env
        self.emulated = env.emulated

    def _shutdown(self) -> None:
        """The backend's _close, then the driver env (each at most once; also after a failed build)."""
        try:
            self._close()
        finally:
            driver, self._driver = self._driver, None
            if driver is not None:
                with contextlib.suppress(Exception):
                    driver.close()

    # --- the public API
    def async_reset(self, seed: int | None = None) -> None:
        if self._flag == CLOSED:
            raise APIUsageError(f"{type(self).__name__}: reset after close()")
        if seed is None and not self._was_reset:
            seed = self._seed  # the first reset uses make(seed=...): env i gets seed + i
        seeds = env_seeds(seed, self.num_envs)
        self._was_reset = True
        self._async_reset(seeds)
        self._flag = CAN_RECV

    def send(self, actions: Any) -> None:
        if self._flag != CAN_SEND:
            raise APIUsageError(self._order_error("send"))
        actions, ints = self._check_actions(actions)
        self._send(actions, ints)
        self._flag = CAN_RECV

    def recv(self):
        if self._flag != CAN_RECV:
            raise APIUsageError(self._order_error("recv"))
        out = self._recv()
        self._flag = CAN_SEND
        return out

    def reset(self, seed: int | None = None):
        self.async_reset(seed)
        obs, _, _, _, infos, _, _ = self.recv()
        return obs, infos

    def step(self, actions: Any):
        self.send(actions)
        obs, rewards, terminals, truncations, infos, _, _ = self.recv()
        return obs, rewards, terminals, truncations, infos

    def close(self) -> None:
        if self._flag == CLOSED:
            return
        self._flag = CLOSED
        self._shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- helpers
    def _order_error(self, call: str) -> str:
        name = type(self).__name__
        if self._flag == CLOSED:
            return f"{name}: {call}() after close()"
        if self._flag == IDLE:
            return f"{name}: {call}() before reset(); call reset() or async_reset() first"
        if call == "send":
            return f"{name}: send() twice without recv(); call recv() to get the batch first"
        return f"{name}: recv() twice without send(); send actions for the last batch first"

    def _check_actions(self, actions: Any) -> tuple[np.ndarray, list[int] | None]:
        """The caller's actions as an array of the batch's shape, checked for the whole batch, and
        for a small batch of integers the same values as a list of ints (or None)."""
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        if actions.shape != self._atn_shape:
            if actions.size == math.prod(self._atn_shape) and actions.dtype.kind in "biuf":
                actions = actions.reshape(self._atn_shape)
            else:
                raise APIUsageError(
                    f"{type(self).__name__}: actions must have shape {self._atn_shape} (agents_per_batch="
                    f"{self.agents_per_batch}, action space {self.single_action_space}), got {actions.shape}"
                )
        if not self._atn_discrete:
            return actions, None
        # Checked here, for the whole batch and on the caller's values: a cast into the buffer's int32
        # would turn 1e20 into INT_MIN, and emulated envs trust these values (Envs.step).
        kind = actions.dtype.kind
        if self._atn_valid is not None and actions.size <= 64 and kind in "iubf":
            values = actions.tolist() if actions.ndim == 1 else actions.ravel().tolist()
            if self._atn_valid.issuperset(values):  # every value an integer in range
                return actions, values if kind in "iu" else None
        if kind not in "iub" and (kind != "f" or not np.all(np.mod(actions, 1) == 0)):
            raise APIUsageError(
                f"{type(self).__name__}: discrete actions must be integers, got dtype {actions.dtype}"
            )
        low, high = self._atn_range
        if self._atn_limits is not None or actions.min() < low or actions.max() > high:
            self._refuse_outside(actions)
        return actions, None

    def _refuse_outside(self, actions: np.ndarray) -> None:
        """Raise naming the first action outside its range (each MultiDiscrete branch its own)."""
        low, high = self._atn_limits or self._atn_range
        bad = (actions < low) | (actions > high)
        if bad.any():
            where = np.argwhere(bad)[0]
            value = actions[tuple(where)].item()
            if self._atn_limits is None:
                rule = f"each entry must be an integer in [{low}, {high}]"
            else:
                j = int(where[-1])
                rule = f"entry {j} must be an integer in [{low[j]}, {high[j]}]"
            raise APIUsageError(
                f"{type(self).__name__}: action {value!r} out of range for {self.single_action_space}: {rule}"
            )

    def _check_layout(
        self, num_envs: int, num_workers: int | None, batch_size: int | None, zero_copy: bool, overwork: bool
    ) -> Layout:
        raise NotImplementedError

    def _start(self, creators: Creators, seed: int | None, spec: tuple) -> None:
        raise NotImplementedError

    def _async_reset(self, seeds: list[int | None]) -> None:
        raise NotImplementedError

    def _send(self, actions: np.ndarray, ints: list[int] | None) -> None:
        """Step the batch with checked `actions`; `ints` is the same as a list of ints, or None."""
        raise NotImplementedError

    def _recv(self):
        raise NotImplementedError

    def _close(self) -> None:
        """Release what _start built; called also after a failed (partial) build."""
        raise NotImplementedError
