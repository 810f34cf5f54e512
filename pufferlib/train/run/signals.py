"""SIGTERM and SIGHUP stop a training run the way Ctrl-C does: save, report, exit.

`docker stop`, a non-interactive `puffertank run` being stopped, an SSH or Tailscale disconnect:
each sends SIGTERM or SIGHUP, whose default action kills the trainer without a checkpoint. Inside
`stop_on()` those signals raise `Interrupted` (a KeyboardInterrupt, so every Ctrl-C path handles it)
in the main thread; the PPO loop catches it, saves and returns a summary with stop_reason
"interrupted" and the signal's name, and `puffer train` exits with 128 + the signal number
(143 for SIGTERM, 129 for SIGHUP), as a shell reports a process ended by that signal.
Once the final save has begun, `Hold` makes every stop signal, Ctrl-C included, wait for it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived; `signum` and `signal_name` say which; `after_save`: it arrived during
    the final save and was held until the save was done (Hold)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        self.after_save = False


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


class Hold:
    """Once the final save starts, Ctrl-C, SIGTERM and SIGHUP wait for it: `start()` turns them into
    a note, `release()` restores the handlers and then raises the noted signal as Interrupted
    (`after_save` True), so the save and summary.json are complete before the process stops.
    Main thread only (elsewhere a no-op); start() and release() may each be called more than once."""

    def __init__(self, signals: tuple[signal.Signals, ...] = (signal.SIGINT, *STOP_SIGNALS)) -> None:
        self.signals = signals
        self.previous: dict[signal.Signals, object] | None = None
        self.noted: int | None = None

    def start(self) -> None:
        if self.previous is not None or threading.current_thread() is not threading.main_thread():
            return

        def note(signum: int, _frame) -> None:
            self.noted = self.noted or signum

        self.previous = {s: signal.signal(s, note) for s in self.signals}

    def release(self) -> None:
        if self.previous is None:
            return
        for s, old in self.previous.items():
            signal.signal(s, old)
        self.previous = None
        if self.noted is not None:
            noted, self.noted = self.noted, None
            error = Interrupted(noted)
            error.after_save = True
            raise error


class Defer:
    """Ctrl-C, SIGTERM and SIGHUP wait for the end of a block that must not be cut in two (an update:
    the optimisation and its metrics): inside it they are noted; on exit the handlers are restored
    and the noted signal raised again, so that it stops the run exactly as if it came just then.
    Main thread only (elsewhere a no-op)."""

    def __init__(self, signals: tuple[signal.Signals, ...] = (signal.SIGINT, *STOP_SIGNALS)) -> None:
        self.signals = signals
        self.previous: dict[signal.Signals, object] = {}
        self.noted: int | None = None

    def __enter__(self) -> Defer:
        if threading.current_thread() is threading.main_thread():

            def note(signum: int, _frame) -> None:
                self.noted = self.noted or signum

            self.previous = {s: signal.signal(s, note) for s in self.signals}
        return self

    def __exit__(self, *exc: object) -> None:
        for s, old in self.previous.items():
            signal.signal(s, old)
        self.previous = {}
        if self.noted is not None:
            noted, self.noted = self.noted, None
            signal.raise_signal(noted)  # the restored handler runs now: Ctrl-C, or stop_on's Interrupted
