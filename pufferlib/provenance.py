"""Where a result came from: the code (package version, git revision in a checkout) and the machine
(host name, CPU model, cores, load).

`puffer --version` and `puffertank --version` print `describe()`; the matrix report records
`machine()` and the revision, so a result can be traced to the code and the box that produced it.
Imports nothing heavy: the host side uses it too.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from pathlib import Path

import pufferlib

CHECKOUT = Path(pufferlib.__file__).resolve().parents[1]  # the tree holding pufferlib/, in a checkout


def _git(path: Path, *args: str) -> str:
    """The stripped output of `git -C path args...`; raises OSError or SubprocessError on failure."""
    return subprocess.run(
        ["git", "-C", str(path), *args], capture_output=True, text=True, timeout=10, check=True
    ).stdout.strip()


def git_revision(path: Path = CHECKOUT) -> str | None:
    """`abc1234` (with `-dirty` when tracked files changed) of the checkout at `path`; None elsewhere
    (a wheel, an image without .git, no git installed)."""
    if not (path / ".git").exists():
        return None
    try:
        head = _git(path, "rev-parse", "--short=12", "HEAD")
        dirty = _git(path, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if dirty else head or None


def describe() -> str:
    """`0.1.0 (git abc1234def56)` in a checkout, `0.1.0` elsewhere."""
    revision = git_revision()
    return f"{pufferlib.__version__} (git {revision})" if revision else pufferlib.__version__


def cpu_model() -> str:
    """The CPU's marketing name (/proc/cpuinfo), or what platform knows elsewhere."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def machine() -> dict[str, object]:
    """This machine: host name, CPU model, logical CPUs, load average (1, 5, 15 min), OS."""
    return {
        "hostname": socket.gethostname(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "load": [round(x, 2) for x in os.getloadavg()],
        "os": platform.platform(),
    }
