"""Batched games stepped by a JAX program (craftax/, kinetix/): in this process, or in a child of their own.

JAX is multithreaded and does not survive os.fork() (the child aborts: "Mutex::Fer while waiting on
Condition"), which is how pufferlib.vector.Multiprocessing starts workers under the default start
method. A family calls `ran_jax()` before it first computes with JAX; an env made later in a process
forked from that one (`process="auto"`) runs its games in a child process (`Remote`, over
pufferlib.environments._child), still stepped by one JAX call; the observations cross a socket once
per step. The process that ran JAX is remembered across families: Craftax in the parent makes Kinetix
in a forked child remote too.

An engine is what a family's env drives: `reset(seed) -> observations`, `step(actions) -> tuple`,
`spec` (what the env needs to build its spaces), optionally `render(arg)`, and, for a Remote, `close()`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pufferlib import APIUsageError
from pufferlib.environments import _child

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

    _child.serve(fd, build)


class Remote:
    """An engine in a child process: `target` ("module:function") calls serve() with the family's engine."""

    def __init__(self, target: str, init: tuple, what: str) -> None:
        self._child = _child.Child(target, init, what=what)
        self.spec = self._child.detail

    def reset(self, seed: int | None) -> Any:
        return self._child.call("reset", seed)

    def step(self, actions: Any) -> tuple:
        return self._child.call("step", actions)

    def render(self, arg: Any = None) -> Any:
        return self._child.call("render", arg)

    def close(self) -> None:
        self._child.close()
