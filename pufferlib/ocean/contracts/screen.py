"""PufferLib 3.0's `c_render` as frames: a private X server for this process, and the window read back.

3.0's envs draw only into a window (raylib: GLFW and OpenGL 3.3, Mesa's llvmpipe on a CPU) and load their
sprites from `resources/` under the working directory; they have no rgb_array path. To record one (`puffer
eval --video`, `train.video_interval`: an env made with render_mode "rgb_array"), it draws on a screen of
its own: Xvfb, started at the first frame on a display number it picks (-displayfd), without TCP, ended
when this process ends (atexit, and PR_SET_PDEATHSIG should the process be killed). Before the first draw
the screen is grabbed (Pillow's X11 grab): Xvfb's -retro root weave of black and white pixels; the window
is the box the first draw changed, and each frame is that box after the env's c_render. raylib's frame cap
(SetTargetFPS in most renderers) paces the recording: a 15 fps renderer records in real time.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator

import numpy as np

XVFB = ("/usr/bin/Xvfb", "/usr/local/bin/Xvfb")  # system paths only: never one a user could plant
SCREEN = "1920x1080x24"  # larger than any 3.0 renderer's window (tripletriad's 990x690, go's 950x800)
START_TIMEOUT = 30.0
NO_XVFB = (
    "{name} draws with raylib into a window (PufferLib 3.0's c_render); to record it without a display "
    "PufferTank starts Xvfb, which is not installed: apt-get install xvfb (the PufferTank image has it)"
)
PR_SET_PDEATHSIG = 1


class ScreenError(RuntimeError):
    """No private screen could be started or read; the message says what to install or fix."""


def xvfb() -> str | None:
    return next((p for p in XVFB if os.access(p, os.X_OK)), None)


def _die_with_parent() -> None:  # in the child, before exec: Xvfb ends when the process that started it does
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Screen:
    """One Xvfb for this process; `display` is its name (":N")."""

    def __init__(self, name: str) -> None:
        path = xvfb()
        if path is None:
            raise ScreenError(NO_XVFB.format(name=name))
        read, write = os.pipe()
        # its log to an unlinked file, not a pipe nobody reads while it runs (a full pipe would block it)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close(), with the server)
        try:
            self.proc = subprocess.Popen(
                [path, "-displayfd", str(write), "-retro", "-screen", "0", SCREEN, "-nolisten", "tcp"],
                pass_fds=(write,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self.log,
                preexec_fn=_die_with_parent,
            )
        finally:
            os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()  # Xvfb writes its display number once it accepts clients
        if not number.isdigit():
            self._stop()
            error = self.last_error() or "no display number"
            self.log.close()
            raise ScreenError(f"Xvfb did not start: {error}")
        self.display = f":{number}"
        atexit.register(self.close)

    def last_error(self) -> str:
        """The last line of Xvfb's log with text besides its "(EE)" markers."""
        self.log.seek(0)
        text = self.log.read().decode(errors="replace")
        lines = (line.replace("(EE)", "").strip() for line in text.splitlines())
        return ([line for line in lines if line] or [""])[-1]

    def grab(self) -> np.ndarray:
        from PIL import ImageGrab

        try:
            return np.asarray(ImageGrab.grab(xdisplay=self.display).convert("RGB"))
        except OSError as e:
            raise ScreenError(f"cannot read the screen of Xvfb {self.display}: {e}") from None

    def close(self) -> None:
        self._stop()
        self.log.close()

    def _stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


_screen: Screen | None = None


def screen(name: str) -> Screen:
    """This process's screen, started on first use; DISPLAY names it (raylib's GLFW opens it at the first
    c_render)."""
    global _screen
    if _screen is None or _screen.proc.poll() is not None:
        _screen = Screen(name)
        os.environ["DISPLAY"] = _screen.display
    return _screen


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """raylib's INFO lines (printed to fd 1 as the window starts and loads its textures) dropped."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class Recorder:
    """An env's frames: `frame(draw)` runs its c_render on the private screen and returns the window."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.box: tuple[slice, slice] | None = None

    def frame(self, draw: Callable[[], object]) -> np.ndarray:
        shown = screen(self.name)
        before = shown.grab() if self.box is None else None
        with _quiet_stdout():
            draw()
        after = shown.grab()
        if self.box is None:
            changed = (after != before).any(axis=-1)
            rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
            if not rows.size:
                raise ScreenError(f"{self.name}'s c_render drew nothing on Xvfb {shown.display}")
            self.box = slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1)
        return np.ascontiguousarray(after[self.box])

    def quietly(self, call: Callable[[], object]) -> object:
        """`call` (the env's close: raylib's CloseWindow) with raylib's lines kept off stdout."""
        with _quiet_stdout():
            return call()
