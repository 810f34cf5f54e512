"""SIGTERM and SIGHUP handled like Ctrl-C: an SSH or Tailscale disconnect, `kill` or a stopping service
must not leave containers running or lose work.

While `interrupts()` is active each of SIGINT, SIGTERM and SIGHUP raises `Interrupted` (a
KeyboardInterrupt) in the main thread, so every `finally` that removes a container runs, and code that
owns a container can forward the same signal to it first. The exit status is 128 + the signal's number.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """One of HANDLED arrived; `signum` says which."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signum_of(exc: BaseException) -> int:
    """The signal behind an interruption (a plain KeyboardInterrupt is SIGINT)."""
    return getattr(exc, "signum", signal.SIGINT)


def exit_status(exc: BaseException) -> int:
    return 128 + signum_of(exc)


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def interrupts() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise Interrupted (main thread only)."""
    previous = {s: signal.signal(s, _raise) for s in HANDLED}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
