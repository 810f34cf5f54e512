"""Build the native Ocean envs: one optional C extension per pufferlib/ocean/native/<name>/binding.c.

Everything else about the package is in pyproject.toml. The extensions are optional: without a C
compiler (or Python's headers) `pip install` still succeeds, and the native envs are then unavailable
(`puffer envs` says why). Rebuild in place after editing a C env: `python setup.py build_ext --inplace`
(or `puffer build-native NAME` for one env).
"""

from __future__ import annotations

import os
from pathlib import Path

from setuptools import Extension, setup

NATIVE = Path("pufferlib", "ocean", "native")
# -O3 and no -march: the image must run on any x86-64 machine. PUFFER_NATIVE_CFLAGS adds flags
# (e.g. "-march=native" for a local build, or sanitizers).
CFLAGS = ["-O3", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wno-unused-function"]
CFLAGS += os.environ.get("PUFFER_NATIVE_CFLAGS", "").split()


def native_extensions(only: str | None = None) -> list[Extension]:
    """One Extension per env folder holding a binding.c (so a new env needs no edit here)."""
    try:
        import numpy
    except ImportError:  # no numpy at build time: no native envs (the pure-Python package still installs)
        return []
    only = only or os.environ.get("PUFFER_NATIVE_ONLY") or None
    return [
        Extension(
            f"pufferlib.ocean.native._{binding.parent.name}",
            [binding.as_posix()],
            include_dirs=[numpy.get_include()],
            depends=[p.as_posix() for p in [*NATIVE.glob("*.h"), *binding.parent.glob("*.h")]],
            extra_compile_args=CFLAGS,
            extra_link_args=["-pthread"],
            optional=True,
        )
        for binding in sorted(NATIVE.glob("*/binding.c"))
        if only is None or binding.parent.name == only
    ]


setup(ext_modules=native_extensions())
