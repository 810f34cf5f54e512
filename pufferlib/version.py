"""What `puffer --version` and `puffertank --version` print: the package version, and the git revision
when pufferlib runs from a checkout (an editable install, the dev container's /workspace).

Reports (the matrix, a run directory's summary) record the same revision, so a result can be traced
to the code that produced it. Imports nothing heavy: the host side uses it too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pufferlib

CHECKOUT = Path(pufferlib.__file__).resolve().parents[1]  # the tree holding pufferlib/, in a checkout


def git_revision(path: Path = CHECKOUT) -> str | None:
    """`abc1234` (with `-dirty` when tracked files changed) of the checkout at `path`; None elsewhere
    (a wheel, an image without .git, no git installed)."""
    if not (path / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if dirty else head or None


def describe() -> str:
    """`0.1.0 (git abc1234def56)` in a checkout, `0.1.0` elsewhere."""
    revision = git_revision()
    return f"{pufferlib.__version__} (git {revision})" if revision else pufferlib.__version__
