"""Where puffertank keeps files on the host: a per-user cache (build logs, timings) and the machine-wide
lock directory shared by every user."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    """~/.cache/puffertank (or $XDG_CACHE_HOME/puffertank): this user's build logs and timings."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "puffertank"


def lock_dir() -> Path:
    """$TMPDIR/puffertank-locks: one directory for every user of this machine (mode 1777)."""
    return Path(tempfile.gettempdir()) / "puffertank-locks"
