"""Multiprocessing: worker processes step their envs in place in one shared buffer.

Layout. One shared-memory block (a multiprocessing RawArray: an unlinked file, so nothing is left
in /dev/shm whatever happens to the processes) holds observations, rewards, terminals,
truncations, masks and actions for every agent row, the reset seeds, and one cache line of
control bytes per worker ([command, state]). Worker w owns envs [w*k, (w+1)*k) and builds them
with `buf=` slices of those arrays, so envs write their results straight into the batch.

Signalling. Counting semaphores, not queues: the main process writes a command byte and posts
the worker's semaphore; the worker writes its state byte and posts one shared "done" semaphore.
Both sides first poll their semaphore for a short spin (an uncontended post or poll costs
~100 ns and no system call), then block in the kernel. Nobody spins for long, so as many
workers as cores never starve the main process of CPU (PufferLib 2.0.2's workers and main
busy-wait forever). Every state the main process reads is covered by a semaphore it has
acquired, so results are visible on weakly ordered CPUs too.

Batches. batch_size == num_envs: every worker, zero-copy views of the whole buffer.
batch_size < num_envs (EnvPool): with zero_copy, the first contiguous block of workers that is
all ready (views); without, the first ready workers in any order (gathered into a copy).
Returned arrays are overwritten by the next send to the same workers: copy what you keep.

Infos go through a pipe only when a worker has some. A worker exception (with its traceback
and env id), a crashed or killed worker, and a worker that does not answer a command (build, reset,
step) within `worker_timeout` seconds (stopped, or stuck in its env) become WorkerError in the main
process, which then closes every worker. Workers exit when the main process dies (they check for it
each second while idle), and ignore Ctrl-C, SIGTERM and SIGHUP: a signal sent to the whole process
group is the main process's to handle, and it stops them.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import traceback
import weakref
from collections.abc import Callable
from time import monotonic, perf_counter
from types import SimpleNamespace
from typing import Any

import numpy as np

from pufferlib import APIUsageError, action_buffer_spec
from pufferlib.vector.autotune import physical_cores
from pufferlib.vector.base import Batch, VectorEnv, WorkerError, WorkerHung
from pufferlib.vector.creators import Creators, env_seeds
from pufferlib.vector.envs import Envs, rows
from pufferlib.vector.layout import Layout, check_layout

STEP, RESET, CLOSE = 1, 2, 3  # command byte (main -> worker)
BUSY, DONE, INFO, ERROR, READY = 0, 1, 2, 3, 4  # state byte (worker -> main)
LINE = 64  # control bytes per worker: its own cache line

# Polling a semaphore costs ~100 ns; a wake-up from a blocking wait costs tens of microseconds.
# So a wait spins (yielding the core to whoever else is runnable on it) while recent waits were
# short, and blocks at once while they were long: the CPU is then worth more to the others.
SPIN_LIMIT_S = 100e-6
POLL_S = 0.1  # while blocked, how often the main process checks that its workers are alive
WORKER_TIMEOUT_S = 300.0  # the default bound on one answer: generous, for slow env builds and resets
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # the main process's to handle


class Waiter:
    """Acquires one token of a semaphore, spinning or blocking by the running mean of past waits."""

    def __init__(self, sem: Any, limit_s: float = SPIN_LIMIT_S) -> None:
        self.acquire = sem.acquire
        self.limit = limit_s
        self.mean = 0.0

    def wait(self, timeout: float, keep_waiting: Callable[[], Any]) -> bool:
        """False when keep_waiting() returned False after a timeout (the token was not acquired)."""
        acquire = self.acquire
        if acquire(False):
            self.mean *= 0.75
            return True
        start = perf_counter()
        if self.mean < self.limit:
            end = start + self.limit
            while perf_counter() < end:
                os.sched_yield()
                if acquire(False):
                    self.mean = 0.75 * self.mean + 0.25 * (perf_counter() - start)
                    return True
        while not acquire(True, timeout):
            if keep_waiting() is False:
                return False
        self.mean = 0.75 * self.mean + 0.25 * (perf_counter() - start)
        return True


class SharedBlock:
    """Byte offsets of the named arrays in the shared block (64-byte aligned)."""

    def __init__(self, num_agents: int, num_envs: int, num_workers: int, obs_space, atn_space) -> None:
        atn_shape, atn_dtype = action_buffer_spec(atn_space)
        self.arrays: dict[str, tuple[int, tuple, str]] = {}
        self.nbytes = 0
        for name, shape, dtype in (
            ("observations", (num_agents, *obs_space.shape), obs_space.dtype),
            ("actions", (num_agents, *atn_shape), atn_dtype),
            ("rewards", (num_agents,), np.float32),
            ("terminals", (num_agents,), bool),
            ("truncations", (num_agents,), bool),
            ("masks", (num_agents,), bool),
            ("seeds", (num_envs,), np.int64),
            ("seeded", (num_envs,), bool),
            ("control", (num_workers * LINE,), np.uint8),
        ):
            dtype = np.dtype(dtype)
            self.arrays[name] = (self.nbytes, shape, dtype.str)
            size = math.prod(shape) * dtype.itemsize
            self.nbytes += (size + 63) // 64 * 64

    def views(self, raw: Any) -> SimpleNamespace:
        return SimpleNamespace(
            **{
                name: np.ndarray(shape, dtype=np.dtype(dtype), buffer=raw, offset=offset)
                for name, (offset, shape, dtype) in self.arrays.items()
            }
        )

    def control(self, raw: Any) -> memoryview:
        offset, shape, _ = self.arrays["control"]
        return memoryview(raw).cast("B")[offset : offset + shape[0]]


def _worker(
    w: int,
    first_env: int,
    creators: Creators,
    seeds: list[int | None],
    spec: tuple,
    raw: Any,
    layout: SharedBlock,
    work: Any,
    done: Any,
    conn: Any,
    main_pid: int,
) -> None:
    for sig in STOP_SIGNALS:  # not the handlers inherited from the trainer (fork): the main process
        signal.signal(sig, signal.SIG_IGN)  # handles a stop signal sent to the group, and stops us
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked by the main process around start
    parent = os.getppid()
    buf = layout.views(raw)
    ctrl = layout.control(raw)
    cmd_at, state_at = w * LINE, w * LINE + 1
    k, n = len(creators.creators), spec[2]

    def report(state: int, payload: Any = None) -> None:
        ctrl[state_at] = state
        done.release()
        if payload is not None:
            conn.send(payload)

    def fail(exc: BaseException) -> None:
        report(ERROR, (getattr(exc, "env_id", None), "".join(traceback.format_exception(exc))))

    def main_alive() -> bool:
        if os.getppid() != parent:
            return False
        try:
            os.kill(main_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    try:
        envs = Envs(creators, seeds, rows(buf, first_env * n, (first_env + k) * n), spec, first_env)
    except BaseException as e:
        fail(e)
        while not work.acquire(True, 1.0) and main_alive():
            pass
        return
    report(READY)
    waiter = Waiter(work)
    while True:
        if not waiter.wait(1.0, main_alive):
            envs.close()
            return
        cmd = ctrl[cmd_at]
        try:
            if cmd == STEP:
                infos = envs.step()
            elif cmd == RESET:
                lo = first_env
                infos = envs.reset([int(buf.seeds[i]) if buf.seeded[i] else None for i in range(lo, lo + k)])
            else:
                envs.close()
                report(DONE)
                return
        except Exception as e:
            fail(e)
            continue
        if infos:
            report(INFO, infos)
        else:
            ctrl[state_at] = DONE
            done.release()


def _shutdown(procs: list, ctrl: memoryview, work: list, conns: list, timeout: float = 3.0) -> None:
    """Ask every worker to close its envs and exit; terminate (then kill) those that do not."""
    for w, p in enumerate(procs):
        if p.exitcode is None:
            ctrl[w * LINE] = CLOSE
            work[w].release()
    deadline = monotonic() + timeout
    for p in procs:
        p.join(max(0.0, deadline - monotonic()))
    for p in procs:
        if p.exitcode is None:  # workers ignore SIGTERM; SIGKILL ends a stopped (SIGSTOP) one too
            p.kill()
            p.join()
    for c in conns:
        c.close()
    procs.clear()


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Multiprocessing(VectorEnv):
    OPTIONS = ("worker_timeout",)  # make()'s keyword arguments beyond the layout's

    def __init__(self, *args: Any, worker_timeout: float = WORKER_TIMEOUT_S, **kwargs: Any) -> None:
        """VectorEnv's arguments, and `worker_timeout`: the seconds a worker may take to answer one
        command (build its envs, reset, step) before it counts as hung (WorkerError)."""
        if (
            isinstance(worker_timeout, bool)
            or not isinstance(worker_timeout, int | float)
            or not 0 < worker_timeout < math.inf
        ):
            raise APIUsageError(
                f"worker_timeout must be a positive number of seconds, got {worker_timeout!r}"
            )
        self.worker_timeout = float(worker_timeout)
        super().__init__(*args, **kwargs)

    def _check_layout(
        self, num_envs: int, num_workers: int | None, batch_size: int | None, zero_copy: bool, overwork: bool
    ) -> Layout:
        return check_layout(num_envs, num_workers, batch_size, zero_copy, overwork, cores=physical_cores())

    def _start(self, creators: Creators, seed: int | None, spec: tuple) -> None:
        layout = self.layout
        self.zero_copy = layout.zero_copy
        self.envs_per_worker = epw = layout.envs_per_worker
        self.workers_per_batch = wpb = layout.workers_per_batch
        num_workers = layout.num_workers
        self.agents_per_worker = apw = epw * spec[2]
        # The process-wide start method; when none is set yet, the platform default, without fixing it
        # (get_context() would, and a later set_start_method() in the program would then fail).
        method = (
            multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
        )
        ctx = multiprocessing.get_context(method)
        self.start_method = ctx.get_start_method()
        block = SharedBlock(self.num_agents, self.num_envs, num_workers, spec[0], spec[1])
        self._raw = ctx.RawArray("B", block.nbytes)
        self.buf = block.views(self._raw)
        self.buf.masks[:] = True
        self._ctrl = block.control(self._raw)
        self._work = [ctx.Semaphore(0) for _ in range(num_workers)]
        self._done = ctx.Semaphore(0)
        self._waiter = Waiter(self._done)
        pipes = [ctx.Pipe(duplex=False) for _ in range(num_workers)]
        self._conns = [r for r, _ in pipes]
        self._procs: list = []
        self._finalizer = weakref.finalize(self, _shutdown, self._procs, self._ctrl, self._work, self._conns)

        self.agent_ids = np.arange(self.num_agents)
        self._full = Batch.of(self.buf, self.agent_ids, 0, self.num_agents)
        rows = wpb * apw
        self._blocks = [
            Batch.of(self.buf, self.agent_ids, i * rows, (i + 1) * rows) for i in range(num_workers // wpb)
        ]
        # Where batches of workers in any order are gathered (zero_copy=False); actions are not gathered.
        self._gather = Batch(
            *(np.empty((self.agents_per_batch, *a.shape[1:]), a.dtype) for a in self._full[:-1]),
            actions=None,
        )
        self._rows_of = np.arange(self.num_agents).reshape(num_workers, apw)
        self._block_ready = [0] * len(self._blocks)
        self._inflight: list[int] = []
        self._ready: list[int] = []
        self._infos: list[list] = [[] for _ in range(num_workers)]
        self._owed = 0  # states seen whose "done" token is not yet acquired
        self._sel: Any = None
        self._next_check = 0.0

        for w in range(num_workers):
            envs = layout.worker_envs(w)
            p = ctx.Process(
                target=_worker,
                name=f"puffer-vec-{w}",
                daemon=True,
                args=(
                    w,
                    envs.start,
                    creators.part(envs),
                    env_seeds(seed, len(envs), envs.start),
                    spec,
                    self._raw,
                    block,
                    self._work[w],
                    self._done,
                    pipes[w][1],
                    os.getpid(),
                ),
            )
            try:  # a stop signal that comes while it forks waits: the worker must not run our handler
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
                try:
                    p.start()
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            except (pickle.PicklingError, AttributeError, TypeError) as e:
                raise APIUsageError(
                    f"Multiprocessing with the '{self.start_method}' start method pickles the env creators "
                    f"and their arguments, which failed ({e}). Define creators at module top level (no "
                    "lambdas or local functions), or use functools.partial of a top-level function"
                ) from e
            self._procs.append(p)
            pipes[w][1].close()
        self._inflight = list(range(num_workers))
        self._sent = [monotonic()] * num_workers  # when each worker was last given a command
        self._drain()  # every worker has built its envs (or raised)

    # --- waiting
    def _wait_token(self) -> None:
        self._waiter.wait(POLL_S, self._check_alive)
        self._owed -= 1

    def _check_alive(self) -> None:
        for w, p in enumerate(self._procs):
            if p.exitcode is not None:
                if self._ctrl[w * LINE + 1] == ERROR and w in self._inflight:
                    self._scan()  # it reported an exception before exiting: raise that
                first = w * self.envs_per_worker
                self._fail(
                    WorkerError(
                        f"Multiprocessing worker {w} (envs {first}-{first + self.envs_per_worker - 1}, "
                        f"pid {p.pid}) died: {_describe_exit(p.exitcode)}",
                        worker=w,
                    )
                )
        now = monotonic()
        for w in self._inflight:
            if now - self._sent[w] > self.worker_timeout and self._ctrl[w * LINE + 1] == BUSY:
                first, p = w * self.envs_per_worker, self._procs[w]
                p.kill()  # it cannot take the close command; the others can
                self._fail(
                    WorkerHung(
                        f"Multiprocessing worker {w} (envs {first}-{first + self.envs_per_worker - 1}, "
                        f"pid {p.pid}) did not answer within {self.worker_timeout:g} s (worker_timeout): "
                        "it is stopped or stuck in its env",
                        worker=w,
                    )
                )

    def _fail(self, error: WorkerError) -> None:
        self.close()
        raise error

    def _payload(self, w: int) -> Any:
        conn = self._conns[w]
        while not conn.poll(POLL_S):
            self._check_alive()
        return conn.recv()

    def _scan(self) -> None:
        ctrl = self._ctrl
        busy = []
        for w in self._inflight:
            state = ctrl[w * LINE + 1]
            if state == BUSY:
                busy.append(w)
                continue
            self._owed += 1
            if state == INFO:
                self._infos[w].extend(self._payload(w))
            elif state == ERROR:
                env_id, remote = self._payload(w)
                where = f"env {env_id}" if env_id is not None else "env creation"
                self._fail(
                    WorkerError(
                        f"Multiprocessing worker {w} failed in {where}:\n{remote.rstrip()}",
                        worker=w,
                        env_id=env_id,
                        remote=remote,
                    )
                )
            self._ready.append(w)
            if self.zero_copy:
                self._block_ready[w // self.workers_per_batch] += 1
        self._inflight = busy

    def _settle(self) -> None:
        while self._owed > 0:
            self._wait_token()

    def _drain(self) -> None:
        while True:
            self._scan()
            if not self._inflight:
                break
            self._wait_token()
        self._settle()
        self._ready.clear()
        self._block_ready = [0] * len(self._blocks)

    def _pick(self) -> Any:
        wpb = self.workers_per_batch
        if wpb == self.num_workers:
            if self._inflight:
                return None
            self._ready.clear()
            return 0
        if self.zero_copy:
            for w in self._ready:
                b = w // wpb
                if self._block_ready[b] == wpb:
                    lo = b * wpb
                    self._ready = [v for v in self._ready if not lo <= v < lo + wpb]
                    return b
            return None
        if len(self._ready) >= wpb:
            chosen, self._ready = self._ready[:wpb], self._ready[wpb:]
            return chosen
        return None

    # --- the backend API
    def _async_reset(self, seeds: list[int | None]) -> None:
        self._drain()
        for i, s in enumerate(seeds):
            self.buf.seeded[i] = s is not None
            self.buf.seeds[i] = 0 if s is None else s
        self._infos = [[] for _ in range(self.num_workers)]
        self._command(range(self.num_workers), RESET)

    def _command(self, workers: Any, cmd: int) -> None:
        ctrl, work, now = self._ctrl, self._work, monotonic()
        for w in workers:
            self._sent[w] = now
            ctrl[w * LINE + 1] = BUSY
            ctrl[w * LINE] = cmd
            work[w].release()
        self._inflight.extend(workers)

    def _send(self, actions: np.ndarray, ints: list[int] | None) -> None:
        sel = self._sel
        if isinstance(sel, list):
            self.buf.actions[self._rows_of[sel].ravel()] = actions
            self._command(sel, STEP)
        else:
            self._blocks[sel].actions[...] = actions
            wpb = self.workers_per_batch
            self._block_ready[sel] = 0
            self._command(range(sel * wpb, (sel + 1) * wpb), STEP)

    def _recv(self):
        now = perf_counter()
        if now > self._next_check:  # a dead worker is noticed even while others keep the batches coming
            self._next_check = now + POLL_S * 10
            self._check_alive()
        while True:
            self._scan()
            sel = self._pick()
            if sel is not None:
                break
            self._wait_token()
        self._settle()
        self._sel = sel
        if isinstance(sel, list):
            idx = self._rows_of[sel].ravel()
            full, gather = self._full, self._gather
            batch = Batch(
                *(np.take(a, idx, axis=0, out=g) for a, g in zip(full[:-1], gather[:-1], strict=True)),
                actions=None,
            )
            workers = sel
        else:
            batch = self._blocks[sel]
            wpb = self.workers_per_batch
            workers = range(sel * wpb, (sel + 1) * wpb)
        infos = []
        for w in workers:
            if self._infos[w]:
                infos.extend(self._infos[w])
                self._infos[w] = []
        return batch.received(infos)

    def _close(self) -> None:
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()
