"""The machine-wide build lock: every user and test session shares one engine, and two heavy builds at once
on 2 cores only make both slow (two debootstraps of the same tag waste a minute).

One place for the whole machine, `puffertank-<name>.lock` in paths.lock_dir() (/run/lock on Debian), so
root, `sudo` and every user take turns whatever their TMPDIR. That folder is writable by every user, so a
lock file is trusted only as puffertank makes it: a regular file with one name (no symlink, FIFO or hard
link; opened without following symlinks, so root never opens a planted link's target). Anything else is an
error that names the path to remove. Lock files are mode 0644 and opened read-only (flock needs no write
access): a lock file made by one user is taken by every other, and nobody but its owner can change it.
Existing files are opened without O_CREAT (Linux's protected_regular refuses O_CREAT on another user's
file in a sticky directory).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from pufferlib.tank.errors import TankError
from pufferlib.tank.paths import lock_dir

FILE_MODE = 0o644
FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a planted FIFO cannot hang us


def lock_path(name: str, directory: Path | None = None) -> Path:
    """Where the lock `name` lives: in `directory`, or the machine's lock directory."""
    return (directory or lock_dir()) / f"puffertank-{name}.lock"


def _not_ours(path: Path, what: str) -> TankError:
    return TankError(
        f"the machine-wide lock {path} is {what}, not a lock file puffertank made",
        f"remove it when no puffertank build runs: sudo rm {path} (puffertank makes it again)",
    )


def _open(path: Path) -> int:
    while True:
        try:
            return os.open(path, FLAGS)
        except FileNotFoundError:
            pass
        try:
            fd = os.open(path, FLAGS | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            continue  # another process made it between our two opens
        os.fchmod(fd, FILE_MODE)  # the umask cut the mode at creation
        return fd


def open_lock(name: str, directory: Path | None = None) -> int:
    """An open, checked file descriptor for the lock `name`; a TankError naming the path to remove."""
    path = lock_path(name, directory)
    try:
        fd = _open(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _not_ours(path, "a symbolic link") from None
        owner = ""
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            owner = f" (owner uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o})"
        raise TankError(
            f"cannot open the machine-wide lock {path}{owner}: {exc.strerror or exc}",
            f"remove it when no puffertank build runs: sudo rm {path} (puffertank makes it again)",
        ) from exc
    st = os.fstat(fd)
    problem = "" if stat.S_ISREG(st.st_mode) else "not a regular file"
    if not problem and st.st_nlink != 1:
        problem = f"a file with {st.st_nlink} names (hard links)"
    if problem:
        os.close(fd)
        raise _not_ours(path, problem)
    return fd


@contextlib.contextmanager
def machine_lock(
    name: str, timeout: float = 3600, waiting_message: str | None = None, directory: Path | None = None
) -> Iterator[None]:
    """Hold an exclusive flock named `name` (per machine); TankError after `timeout` seconds of waiting."""
    fd = open_lock(name, directory)
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
                        f"gave up after {timeout:.0f} s waiting for {lock_path(name, directory)} (another "
                        "puffertank process holds it)",
                        "wait for it to finish (ps aux | grep puffertank)",
                    ) from None
                time.sleep(1.0)
        yield
    finally:
        os.close(fd)  # closing releases the flock
