"""The machine-wide build lock: every user and test session shares one engine, and two heavy builds at once
on 2 cores only make both slow (two debootstraps of the same tag waste a minute).

The lock directory is shared by every user (root provisions, researchers build later), so it is made mode
1777 (chmod after mkdir: mkdir's mode is cut by the umask) and lock files 0666. Lock files are opened
without following symlinks (the directory is world-writable), and without O_CREAT when they exist (Linux's
protected_regular refuses O_CREAT on another user's file in a sticky directory).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from pufferlib.tank.errors import TankError
from pufferlib.tank.paths import lock_dir

DIR_MODE, FILE_MODE = 0o1777, 0o666


def _shared_dir(directory: Path) -> None:
    directory.mkdir(mode=DIR_MODE, exist_ok=True)
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode):
        raise TankError(
            f"the lock directory {directory} is not a directory (a symlink or a file)",
            f"remove it (sudo rm {directory}); puffertank makes it again",
        )
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != DIR_MODE:
        os.chmod(directory, DIR_MODE)


def _open_lock_file(path: Path) -> int:
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        try:
            return os.open(path, flags)
        except FileNotFoundError:
            pass
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            continue  # another process made it between our two opens
        os.fchmod(fd, FILE_MODE)  # the umask cut the mode at creation
        return fd


def open_lock(name: str) -> int:
    """An open file descriptor for the lock `name`; a TankError naming the path and the fix on OSError."""
    directory = lock_dir()
    path = directory / f"{name}.lock"
    try:
        _shared_dir(directory)
        return _open_lock_file(path)
    except OSError as exc:
        raise TankError(
            f"cannot open the machine-wide lock {path}: {exc.strerror or exc}",
            f"let every user share it: sudo chmod 1777 {directory} && sudo chmod 0666 {directory}/*.lock "
            f"(or remove {directory} when no puffertank runs; it is made again)",
        ) from exc


@contextlib.contextmanager
def machine_lock(name: str, timeout: float = 3600, waiting_message: str | None = None) -> Iterator[None]:
    """Hold an exclusive flock named `name` (per machine); TankError after `timeout` seconds of waiting."""
    fd = open_lock(name)
    try:
        deadline = time.monotonic() + timeout
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not announced and waiting_message:
                    print(waiting_message, file=sys.stderr, flush=True)
                    announced = True
                if time.monotonic() > deadline:
                    raise TankError(
                        f"gave up after {timeout:.0f} s waiting for {lock_dir() / name}.lock (another "
                        "puffertank process holds it)",
                        "wait for it to finish (ps aux | grep puffertank)",
                    ) from None
                time.sleep(1.0)
        yield
    finally:
        os.close(fd)  # closing releases the flock
