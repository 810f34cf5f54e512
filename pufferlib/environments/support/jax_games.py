"""Batched games stepped by a JAX program (craftax/, kinetix/): in this process, or in a child of their own.

JAX is multithreaded and does not survive os.fork() (the child aborts: "Mutex::Fer while waiting on
Condition"), which is how pufferlib.vector.Multiprocessing starts workers under the default start
method. A family calls `ran_jax()` before it first computes with JAX; an env made later in a process
forked from that one (`process="auto"`) runs its games in a child process (`Remote`, over
pufferlib.environments.support.child), still stepped by one JAX call; the observations cross a socket once
per step. The process that ran JAX is remembered across families: Craftax in the parent makes Kinetix
in a forked child remote too.

An engine is what a family's env drives: `reset(seed) -> observations`, `step(actions) -> tuple`,
`spec` (what the env needs to build its spaces), optionally `render(arg)`, and, for a Remote, `close()`.
`JaxGames` is the env side the families share: their arguments checked, the engine started here or in a
child, reset and close.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from pufferlib import APIUsageError
from pufferlib.environments.support import child
from pufferlib.environments.support.batched import BatchedGames

_JAX_PID: int | None = None  # the process in which a JAX family ran JAX (a fork child inherits it)
PROCESSES = ("auto", "local", "child")


def ran_jax() -> None:
    """This process computes with JAX from now on (call before the first JAX call)."""
    global _JAX_PID
    _JAX_PID = os.getpid()


def forked() -> bool:
    """Whether this process was forked from one where a JAX family already ran JAX."""
    return _JAX_PID not in (None, os.getpid())


def runs_in_child(process: str, what: str) -> bool:
    """Whether `process` ("auto", "local" or "child") puts the games of `what` in a child process."""
    if process not in PROCESSES:
        raise ValueError(f"process must be 'auto', 'local' or 'child', got {process!r}")
    if process == "local" and forked():
        raise APIUsageError(
            f"{what}: this process was forked from one where JAX already ran, and JAX does not survive "
            "fork; use process='auto' or 'child', or the 'spawn' start method"
        )
    return process == "child" or (process == "auto" and forked())


def serve(fd: int, make_local: Callable[..., Any]) -> None:
    """The child's side: build the local engine from the parent's init tuple and answer its commands."""

    def build(init: tuple):
        local = make_local(*init)

        def handle(command: str, arg: Any):
            if command not in ("reset", "step", "render"):
                raise ValueError(f"unknown command {command!r}")
            return getattr(local, command)(arg)

        return handle, local.spec

    child.serve(fd, build)


def call_rate(
    reset: Callable[[], Any], step: Callable[[], Any], steps: int, repeats: int
) -> tuple[float, float]:
    """(median calls of `step` per second over `repeats` runs of `steps` calls, seconds of the warm-up):
    the warm-up, `reset()` and a first `step()`, is where a JAX program compiles, so it is timed apart."""
    start = time.perf_counter()
    reset()
    step()
    warmup = time.perf_counter() - start
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        rates.append(steps / (time.perf_counter() - start))
    return statistics.median(rates), warmup


class Remote:
    """An engine in a child process: `target` ("module:function") calls serve() with the family's engine."""

    def __init__(self, target: str, init: tuple, what: str) -> None:
        self._child = child.Child(target, init, what=what)
        self.spec = self._child.detail

    def reset(self, seed: int | None) -> Any:
        return self._child.call("reset", seed)

    def step(self, actions: Any) -> tuple:
        return self._child.call("step", actions)

    def render(self, arg: Any = None) -> Any:
        return self._child.call("render", arg)

    def close(self) -> None:
        self._child.close()


class JaxGames(BatchedGames):
    """`num_envs` games of one id stepped by a JAX program. Subclasses set `family`, `title` (how errors
    name it: "Craftax"), `ids` (the valid names), `local` (the engine class that runs here) and `target`
    (the child's "module:serve"), call `_start` first in __init__ and say what an ended episode reports
    (`_episode_info`)."""

    title = ""
    ids: Mapping[str, Any] = {}
    local: Callable[..., Any]
    target = ""

    def _start(self, name: str, num_envs: int, resets: int | None, process: str, default_resets) -> Any:
        """Check the arguments, start the engine (here, or in a child after a fork) and return its spec."""
        if name not in self.ids:
            raise ValueError(f"Unknown {self.title} id {name!r}; one of {', '.join(self.ids)}")
        if int(num_envs) < 1:
            raise APIUsageError(f"{self.family}/{name}: num_envs must be >= 1, got {num_envs}")
        resets = default_resets(num_envs) if resets is None else int(resets)
        if not 1 <= resets <= num_envs:
            raise ValueError(f"resets must be between 1 and num_envs={num_envs}, got {resets}")
        self.name = name
        self.num_agents = int(num_envs)
        init, what = (name, self.num_agents, resets), f"{self.family}/{name}"
        self._engine = Remote(self.target, init, what) if runs_in_child(process, what) else self.local(*init)
        return self._engine.spec

    def reset(self, seed: int | None = None):
        return self._started_with(self._engine.reset(self._reset_seed(seed)))

    def step(self, actions):
        obs, reward, terminal, truncated, outcome = self._engine.step(self._actions(actions))
        self.observations[:] = obs
        self.rewards[:] = reward
        self.terminals[:] = terminal
        self.truncations[:] = truncated
        infos = self._stats.step(
            self.rewards, self.terminals | self.truncations, lambda i: self._episode_info(outcome, i)
        )
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def _episode_info(self, outcome: Any, i: int) -> dict[str, float]:
        """The info of game i's ended episode, from `outcome`: the engine step's fifth output."""
        raise NotImplementedError

    def close(self) -> None:
        if isinstance(self._engine, Remote):
            self._engine.close()
