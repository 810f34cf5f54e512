"""What every vector backend shares: argument checks, seeds, building envs on buffers, the API facade.

An env creator is called as `creator(*env_args, buf=..., seed=..., **env_kwargs)` when it names
`buf` / `seed` parameters (the registry's creators do). A creator that returns a raw Gymnasium
env or a PettingZoo ParallelEnv is wrapped by pufferlib.emulation on the given buffer; a
PufferEnv built without `buf` keeps its own buffers and is copied into the batch after each call.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any, NamedTuple

import gymnasium
import numpy as np

from pufferlib import BUFFER_NAMES, APIUsageError, PufferEnv, joint_space

LAYOUT_KWARGS = ("num_workers", "batch_size", "zero_copy", "overwork")


class WorkerError(RuntimeError):
    """An environment failed in a worker (exception, crash or kill); carries the worker's traceback."""

    def __init__(self, message: str, worker: int | None = None, env_id: int | None = None, remote: str = ""):
        super().__init__(message)
        self.worker = worker
        self.env_id = env_id
        self.remote_traceback = remote


# ------------------------------------------------------------------------------------------ machine


def physical_cores() -> int:
    """Physical cores this process may use: distinct (package, core) pairs of its CPU affinity,
    capped by a cgroup CPU quota (e.g. `docker run --cpus=2`)."""
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    cores = set()
    for cpu in cpus:
        base = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(base + "physical_package_id") as f, open(base + "core_id") as g:
                cores.add((f.read().strip(), g.read().strip()))
        except OSError:
            cores.add(("cpu", str(cpu)))
    n = len(cores) or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return n


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


# ------------------------------------------------------------------------------------------ checks


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise APIUsageError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class Layout(NamedTuple):
    """How num_envs envs are split over workers and batches (validated by check_layout)."""

    num_envs: int
    num_workers: int
    batch_size: int  # envs per recv()
    zero_copy: bool

    @property
    def envs_per_worker(self) -> int:
        return self.num_envs // self.num_workers

    @property
    def workers_per_batch(self) -> int:
        return self.batch_size // self.envs_per_worker

    @property
    def num_batches(self) -> int:
        return self.num_envs // self.batch_size

    def worker_envs(self, w: int) -> range:
        """The env ids that worker `w` runs."""
        return range(w * self.envs_per_worker, (w + 1) * self.envs_per_worker)


def check_layout(
    num_envs: int,
    num_workers: int | None,
    batch_size: int | None,
    zero_copy: bool,
    overwork: bool,
    cores: int | None = None,
    what: str = "physical CPU cores",
) -> Layout:
    """Validate (and default) num_workers and batch_size; every message names numbers that work.

    The rules: num_envs divisible by num_workers; batch_size (default num_envs) a multiple of
    num_envs / num_workers; with zero_copy, num_envs divisible by batch_size; and num_workers at
    most `cores` physical cores unless overwork=True. `cores=None` skips the last rule.
    """
    if batch_size is not None:
        batch_size = _positive_int("batch_size", batch_size)
        if batch_size > num_envs:
            raise APIUsageError(
                f"batch_size={batch_size} > num_envs={num_envs}: a batch holds at most every env once; "
                f"use batch_size <= {num_envs} or raise num_envs"
            )
    if num_workers is None:
        limit = cores or 1
        fits = [
            w
            for w in divisors(num_envs)
            if w <= limit and (batch_size is None or batch_size % (num_envs // w) == 0)
        ]
        if not fits:
            w = max(d for d in divisors(num_envs) if d <= limit)
            per = num_envs // w
            need = [d for d in divisors(num_envs) if batch_size % (num_envs // d) == 0]
            raise APIUsageError(
                f"batch_size={batch_size} does not fit: with at most {limit} workers ({what}) each worker "
                f"runs {per}+ of num_envs={num_envs} envs and a batch is made of whole workers. Use "
                f"batch_size in {list(range(per, num_envs + 1, per))}, or num_workers={min(need)} "
                "(with overwork=True if that exceeds the cores)"
            )
        num_workers = max(fits)
    num_workers = _positive_int("num_workers", num_workers)
    if num_workers > num_envs:
        raise APIUsageError(
            f"num_workers={num_workers} > num_envs={num_envs}: every worker needs at least one env; "
            f"use num_workers in {divisors(num_envs)} or num_envs >= {num_workers}"
        )
    if num_envs % num_workers:
        multiples = [num_workers * k for k in range(1, 4)]
        raise APIUsageError(
            f"num_envs={num_envs} must be divisible by num_workers={num_workers} (every worker runs the "
            f"same number of envs): use num_workers in {divisors(num_envs)} or num_envs in {multiples}"
        )
    per_worker = num_envs // num_workers
    if batch_size is None:
        batch_size = num_envs
    if batch_size % per_worker:
        good = list(range(per_worker, num_envs + 1, per_worker))
        raise APIUsageError(
            f"batch_size={batch_size} must be a multiple of num_envs/num_workers={per_worker} "
            f"(a batch is made of whole workers): use batch_size in {good}"
        )
    if zero_copy and num_envs % batch_size:
        good = [b for b in range(per_worker, num_envs + 1, per_worker) if num_envs % b == 0]
        raise APIUsageError(
            f"zero_copy=True needs num_envs={num_envs} divisible by batch_size={batch_size} (batches are "
            f"equal contiguous blocks of the shared buffer): use batch_size in {good} or zero_copy=False"
        )
    if cores is not None and num_workers > cores and not overwork:
        good = [w for w in divisors(num_envs) if w <= cores]
        raise APIUsageError(
            f"num_workers={num_workers} > {cores} {what}: oversubscribed workers time-slice "
            f"and slow every step. Use num_workers in {good} (divisors of num_envs={num_envs} up to "
            f"{cores}), or pass overwork=True to run {num_workers} workers anyway"
        )
    return Layout(num_envs, num_workers, batch_size, bool(zero_copy))


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


# ------------------------------------------------------------------------------------------ envs


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


def allocate(num_agents: int, obs_space: gymnasium.Space, atn_space: gymnasium.Space) -> SimpleNamespace:
    from pufferlib import allocate_buffers

    return allocate_buffers(num_agents, obs_space, atn_space)


def rows(buf: Any, lo: int, hi: int) -> SimpleNamespace:
    return SimpleNamespace(**{name: getattr(buf, name)[lo:hi] for name in BUFFER_NAMES})


def _checked_step(env: PufferEnv) -> tuple[str | None, Callable | None]:
    """How a vector backend steps `env` once the batch's actions are checked: ("discrete", the
    emulated env's step with an int), ("rows", its step with its action rows), or (None, None):
    env.step(env.actions). An env class that overrides step() is always called through it."""
    from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv

    if isinstance(env, GymnasiumPufferEnv) and type(env).step is GymnasiumPufferEnv.step:
        return ("discrete", env._step_native) if env._atn_start is not None else ("rows", env._step_rows)
    if isinstance(env, PettingZooPufferEnv) and type(env).step is PettingZooPufferEnv.step:
        return "rows", env._step_rows
    return None, None


class Envs:
    """Consecutive envs of one process over consecutive rows of one buffer (Serial, a worker, an actor).

    Episode ends: an emulated env that finished (`done`) is reset by the next step call instead of
    stepped, consuming no action for its rows; native envs reset themselves.
    """

    def __init__(
        self, creators: Creators, seeds: Sequence[int | None], buf: Any, spec: tuple, first_env_id: int = 0
    ) -> None:
        self.agents = spec[2]
        self.first = first_env_id
        self.envs: list[PufferEnv] = []
        for i, (c, a, k, s) in enumerate(zip(*creators, seeds, strict=True)):
            env_buf = rows(buf, i * self.agents, (i + 1) * self.agents)
            try:
                try:
                    env = build_env(c, a, k, env_buf, s)
                except APIUsageError as e:  # typically its buffers do not fit env 0's layout
                    raise APIUsageError(
                        f"creating env {first_env_id + i}: {e}. Every env of a vector env needs the spaces "
                        "and number of agents of env 0"
                    ) from e
                check_spec(env, spec, first_env_id + i)
            except Exception as e:
                e.add_note(f"while creating env {first_env_id + i}")
                self.close()
                raise
            self.envs.append(env)
        self.actions = buf.actions
        # The actions of a whole batch were checked by the vector env (VectorEnv._check_actions), so
        # emulated envs skip their per-env checks. When every env is one agent with the same
        # Discrete action space, a call reads the actions as ints once and hands each env its own.
        steps = [_checked_step(env) for env in self.envs]
        self._steps = [step for _, step in steps]
        starts = {getattr(env, "_atn_start", None) for env in self.envs}
        self.discrete = None
        if self.agents == 1 and steps and all(kind == "discrete" for kind, _ in steps) and len(starts) == 1:
            self.discrete, self._shift = self._steps, starts.pop()

    def reset(self, seeds: Sequence[int | None], lo: int = 0, hi: int | None = None) -> list:
        infos: list = []
        for k in range(lo, len(self.envs) if hi is None else hi):
            try:
                got = self.envs[k].reset(seeds[k - lo])[1]
            except Exception as e:
                e.add_note(f"in reset() of env {self.first + k}")
                e.env_id = self.first + k  # type: ignore[attr-defined]
                raise
            if got:
                infos.extend(got if isinstance(got, list) else [got])
        return infos

    def step(self, lo: int = 0, hi: int | None = None, ints: list[int] | None = None) -> list:
        """Step (or reset, when done) envs lo..hi with the actions in the buffer, or for one-agent
        Discrete envs with `ints` when given (their checked values); returns their infos."""
        infos: list = []
        envs = self.envs
        hi = len(envs) if hi is None else hi
        k = lo
        try:
            if self.discrete is not None:
                steps, values = self.discrete, self.actions[lo:hi].tolist() if ints is None else ints
                if self._shift:
                    values = [v + self._shift for v in values]
                for k in range(lo, hi):
                    env = envs[k]
                    got = env.reset()[1] if env.done else steps[k](values[k - lo])
                    if got:
                        infos.extend(got)
                return infos
            steps = self._steps
            for k in range(lo, hi):
                env = envs[k]
                if env.done:
                    got = env.reset()[1]
                elif steps[k] is not None:
                    got = steps[k](env.actions)
                else:
                    got = env.step(env.actions)[4]
                if got:
                    infos.extend(got if isinstance(got, list) else [got])
        except Exception as e:
            e.add_note(f"in step() of env {self.first + k}")
            e.env_id = self.first + k  # type: ignore[attr-defined]
            raise
        return infos

    def close(self) -> None:
        for env in self.envs:
            with contextlib.suppress(Exception):  # closing must go on for the other envs
                env.close()
        self.envs = []


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
