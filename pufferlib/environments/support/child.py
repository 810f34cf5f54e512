"""An environment's native engine in a child process of its own, driven over a socket pair.

For engines that cannot share a process: stable-retro allows one emulator per process, and JAX
(Craftax) cannot run in a process forked from one where it already ran. The child is a fresh
interpreter (`subprocess.Popen`, so it works inside daemonic vector workers too, where
multiprocessing may not start children) running `serve(fd, build)`:

    build(init) -> (handle, detail)      # detail goes back to the parent with "ready"
    handle(command, arg) -> reply        # one reply per message, until "close"

The child exits on "close", or when the parent goes away (end of file on its socket), so nothing
is left running; `Child.close()` (also run when the object is collected) waits for it.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import traceback
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

RUN = (
    "import sys, importlib; m, f = sys.argv[1].split(':'); "
    "getattr(importlib.import_module(m), f)(int(sys.argv[2]))"
)


class ChildError(RuntimeError):
    """The child could not start, failed a command, or died."""


def serve(fd: int, build: Callable[[Any], tuple[Callable[[str, Any], Any], Any]]) -> None:
    """The child's loop (call it from the function the parent names)."""
    conn = Connection(fd)
    try:
        handle, detail = build(conn.recv())
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(("ready", detail))
    while True:
        try:
            command, arg = conn.recv()
        except EOFError:  # the parent is gone
            return
        if command == "close":
            return
        try:
            conn.send(("ok", handle(command, arg)))
        except Exception as e:
            conn.send(("error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"))


def _shutdown(proc: subprocess.Popen, conn: Connection) -> None:
    with contextlib.suppress(OSError):
        conn.send(("close", None))
    conn.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Child:
    """Start `target` ("module:function", which calls serve) in a child and hand it `init`."""

    def __init__(self, target: str, init: Any, what: str, timeout: float = 300.0) -> None:
        self.what = what
        parent, child = socket.socketpair()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", RUN, target, str(child.fileno())],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
        )
        child.close()
        self._conn = Connection(parent.detach())
        self._finalizer = weakref.finalize(self, _shutdown, self._proc, self._conn)
        self._conn.send(init)
        if not self._conn.poll(timeout):
            self.close()
            raise ChildError(f"{what}: the child process did not start within {timeout:.0f}s")
        status, self.detail = self._recv()
        if status != "ready":
            self.close()
            raise ChildError(f"{what}: {self.detail}")

    def _recv(self) -> tuple[str, Any]:
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            code = self._proc.poll()
            self.close()
            raise ChildError(f"{self.what}: the child process died (exit status {code})") from None

    def call(self, command: str, arg: Any = None) -> Any:
        self._conn.send((command, arg))
        status, reply = self._recv()
        if status != "ok":
            raise ChildError(f"{self.what}: {reply}")
        return reply

    @property
    def pid(self) -> int:
        return self._proc.pid

    def close(self) -> None:
        self._finalizer()
