"""SIGTERM and SIGHUP stop a training run the way Ctrl-C does: save, report, exit.

`docker stop`, a non-interactive `puffertank run` being stopped, an SSH or Tailscale disconnect:
each sends SIGTERM or SIGHUP, whose default action kills the trainer without a checkpoint. Inside
`stop_on()` those signals raise `Interrupted` (a KeyboardInterrupt, so every Ctrl-C path handles it)
in the main thread; the PPO loop catches it, saves and returns a summary with stop_reason
"interrupted" and the signal's name, and `puffer train` exits with 128 + the signal number
(143 for SIGTERM, 129 for SIGHUP), as a shell reports a process ended by that signal.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived; `signum` and `signal_name` say which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.signal_name = signal.Signals(signum).name


def exit_code(signal_name: str | None) -> int:
    """What a process stopped by `signal_name` (None: Ctrl-C) exits with: 128 + the signal number."""
    return 128 + int(signal.Signals[signal_name] if signal_name else signal.SIGINT)


@contextlib.contextmanager
def stop_on(signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> Iterator[None]:
    """Turn `signals` into Interrupted inside the block (main thread only; elsewhere a no-op).
    Only the first signal raises: a second one must not interrupt the final save."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = False

    def handler(signum: int, _frame) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
