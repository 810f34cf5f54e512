"""Where puffertank keeps files on the host: a per-user cache (build logs, timings) and the machine-wide
lock directory shared by every user."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pufferlib.tank.errors import TankError

# Candidates for the lock directory, in order. The first that is a root-owned folder every user can write
# (sticky, mode 1777) is the machine's: the same answer for root, `sudo` and every user's shell, whatever
# TMPDIR says. /run/lock is that folder on Debian and most distributions; /tmp is the last resort.
LOCK_PARENTS = (Path("/run/lock"), Path("/var/lock"), Path("/tmp"))
SHARED_MODE = 0o1777


def cache_dir() -> Path:
    """~/.cache/puffertank (or $XDG_CACHE_HOME/puffertank): this user's build logs and timings."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "puffertank"


def _shared(path: Path) -> bool:
    try:
        st = os.stat(path)  # following links: /var/lock is often a link to /run/lock
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) & SHARED_MODE == SHARED_MODE
    )


def lock_dir(parents: tuple[Path, ...] = LOCK_PARENTS) -> Path:
    """The machine's lock directory: the first of `parents` owned by root with mode 1777."""
    for parent in parents:
        if _shared(parent):
            return parent
    names = ", ".join(map(str, parents))
    raise TankError(
        f"no machine-wide lock directory: none of {names} is a root-owned folder every user can write "
        "(mode 1777)",
        f"sudo install -d -m 1777 {parents[0]}",
    )
