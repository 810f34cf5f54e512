"""JAX's persistent compilation cache for the JAX families (craftax/, kinetix/), and the image's warm copy.

Self-contained on purpose (standard library only, nothing of pufferlib): the envs image stage runs the
families' program files (craftax_jax.py, kinetix_jax.py) with this file beside them, before pufferlib is
installed, to compile their registered programs into the image.

JAX keys its cache by the program (debug info stripped, so the file's path does not matter), the
compile options and the backend. The compile options would name the cache's own folder (XLA's GPU
autotune cache, inside it), which differs between the image's folder and a user's: use_cache() leaves
that cache off. The key does not say which CPU, while XLA:CPU compiles for the CPU it runs on: so the
image's cache is kept per CPU (`cpu_key()`: the machine and its CPU flags), and a process uses it only
on the same kind of CPU; elsewhere it compiles as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import time
from pathlib import Path
from typing import Any

# Where the image keeps its build-time cache (one folder per cpu_key()); Dockerfile.envs sets it.
IMAGE_CACHE_ENV = "PUFFERTANK_JAX_CACHE"
# The user's cache, unless JAX_COMPILATION_CACHE_DIR (or jax's config) names one already.
CACHE_DIR = Path.home() / ".cache" / "pufferlib" / "jax"


def cpu_key() -> str:
    """The machine and its CPU's feature flags, hashed: XLA:CPU code runs only where these match."""
    flags = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1] for line in f if line.startswith("flags")), "")
    text = f"{platform.machine()} {' '.join(sorted(flags.split()))}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def use_cache(jax: Any, path: Path) -> None:
    """Point JAX's persistent compilation cache at `path`, with keys that do not depend on the path: XLA's
    own caches (a GPU autotune cache in a folder under `path`, whose name would enter the compile options
    and so the key) stay off; JAX runs on the CPU here."""
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_enable_xla_caches", "none")


def image_cache() -> Path | None:
    """The image's warm cache for this CPU, if the image has one."""
    root = os.environ.get(IMAGE_CACHE_ENV)
    path = Path(root) / cpu_key() if root else None
    return path if path is not None and path.is_dir() else None


def seed_cache(target: Path) -> int:
    """Link the image's compiled executables for this CPU into `target` (a writable cache directory).

    The links keep the image's files read-only and cost nothing to make; JAX reads through them and
    writes what it compiles itself beside them. Returns how many entries were linked."""
    source = image_cache()
    if source is None:
        return 0
    target.mkdir(parents=True, exist_ok=True)
    linked = 0
    for entry in source.glob("*-cache"):
        link = target / entry.name
        if link.exists() or link.is_symlink():
            continue
        with contextlib.suppress(FileExistsError):
            link.symlink_to(entry)
            linked += 1
        atime = target / (entry.name.removesuffix("-cache") + "-atime")  # JAX's LRU bookkeeping
        if not atime.exists():
            atime.write_bytes(time.time_ns().to_bytes(8, "little"))
    return linked


def setup(jax: Any) -> Any:
    """The JAX families' first call: unless a cache is configured already, use CACHE_DIR, seeded with the
    image's executables for this CPU. Returns `jax`."""
    if not os.environ.get("JAX_COMPILATION_CACHE_DIR") and not jax.config.jax_compilation_cache_dir:
        seed_cache(CACHE_DIR)
        use_cache(jax, CACHE_DIR)
    return jax


def build_cache(jax: Any) -> Path:
    """At image build (the program files' `warm()`): compile into $PUFFERTANK_JAX_CACHE/<cpu key>, every
    program however quick. Raises KeyError naming the variable when it is not set."""
    root = os.environ.get(IMAGE_CACHE_ENV)
    if not root:
        raise KeyError(f"{IMAGE_CACHE_ENV} is not set (Dockerfile.envs sets it)")
    cache = Path(root) / cpu_key()
    cache.mkdir(parents=True, exist_ok=True)
    use_cache(jax, cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # keep the small ones too
    return cache


def report(what: str, cache: Path, jax: Any) -> int:
    """After warm(): say what the cache holds (exit status 1 when nothing was written)."""
    entries = list(cache.glob("*-cache"))
    if not entries:
        print(f"{what}: nothing was written to {cache}", flush=True)
        return 1
    size = sum(entry.stat().st_size for entry in entries) / 1e6
    print(f"{what}: {len(entries)} executables ({size:.1f} MB) in {cache}, jax {jax.__version__}", flush=True)
    return 0
