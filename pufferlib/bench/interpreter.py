"""Which Python runs the PufferLib 2.0.2 peer, and whether it may be trusted to run at all.

`puffer bench` runs a second interpreter (a venv with PufferLib 2.0.2) only when asked
(`--puffer202`, or `--puffer202 PATH`), never because a file happens to exist: a fixed path under
a shared directory such as /tmp could be planted by any local user and would run as whoever
benchmarks (root, on these boxes). Its default home is the user's cache dir
($XDG_CACHE_HOME or ~/.cache, then pufferlib/peers/puffer202), and before it runs, the
interpreter, the file a symlink points to, and every directory above both must belong to this
user or root and be writable by no one else.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PEER_VENV_RECIPE = (
    "python3 -m venv {venv} && {venv}/bin/pip install --no-deps pufferlib==2.0.2 && "
    "{venv}/bin/pip install gymnasium==1.2.0 numpy==1.26.4 gym==0.26.2 psutil"
)


class UntrustedInterpreter(Exception):
    """The peer interpreter is missing, or others could have changed it; the message says how to fix it."""


def cache_dir() -> Path:
    """The user's cache dir for pufferlib: $XDG_CACHE_HOME/pufferlib, else ~/.cache/pufferlib."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pufferlib"


def default_peer_venv() -> Path:
    return cache_dir() / "peers" / "puffer202"


def default_peer_python() -> Path:
    return default_peer_venv() / "bin" / "python"


def _unsafe(path: Path, uid: int) -> str | None:
    """Why `path` (not followed if a symlink) could be changed by someone else, or None."""
    st = os.lstat(path)
    if st.st_uid not in (uid, 0):
        return f"{path} belongs to uid {st.st_uid}, not to you (uid {uid}) or root"
    if not stat.S_ISLNK(st.st_mode) and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "everyone" if st.st_mode & stat.S_IWOTH else "its group"
        return f"{path} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _chain(path: Path) -> list[Path]:
    """`path`, each symlink target it leads to, and every directory above each of them."""
    out: list[Path] = []
    seen: set[Path] = set()
    todo = [path]
    while todo:
        p = todo.pop()
        for q in (p, *p.parents):
            if q not in seen:
                seen.add(q)
                out.append(q)
        if p.is_symlink() and len(seen) < 256:
            target = Path(os.readlink(p))
            todo.append(target if target.is_absolute() else p.parent / target)
    return out


def trusted_python(path: str | os.PathLike) -> Path:
    """`path` as an absolute Path if it may run; UntrustedInterpreter (saying what to fix) if not."""
    python = Path(os.path.abspath(os.path.expanduser(path)))
    if not python.exists():
        venv = default_peer_venv()
        raise UntrustedInterpreter(
            f"no Python at {python}. Make the PufferLib 2.0.2 peer venv with: "
            f"{PEER_VENV_RECIPE.format(venv=venv)} (then pass --puffer202), or pass --puffer202 PATH"
        )
    uid = os.geteuid()
    for part in _chain(python):
        why = _unsafe(part, uid)
        if why:
            raise UntrustedInterpreter(
                f"refusing to run {python}: {why}, so someone else could change what runs. Keep the peer "
                f"venv in a directory only you (or root) can write, e.g. {default_peer_venv()}"
            )
    if not os.access(python, os.X_OK):
        raise UntrustedInterpreter(f"{python} is not executable")
    return python
