"""Build the native Ocean envs: one optional C extension per pufferlib/ocean/native/<name>/binding.c.

Everything else about the package is in pyproject.toml. The extensions are optional: without a C
compiler (or Python's headers) `pip install` still succeeds, and the native envs are then unavailable
(`puffer envs` says why). Rebuild in place after editing a C env: `python setup.py build_ext --inplace`
(or `puffer build-native NAME` for one env; PUFFER_NATIVE_ONLY=NAME limits setup.py to it).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from setuptools import Extension, setup

NATIVE = Path("pufferlib", "ocean", "native")
# The flags live beside the envs (pufferlib/ocean/native/build.py, standard library only), loaded by path:
# pufferlib's own dependencies may not be importable while it builds.
_spec = importlib.util.spec_from_file_location("_native_build", NATIVE / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def native_extensions(only: str | None = None) -> list[Extension]:
    """One Extension per env folder holding a binding.c (so a new env needs no edit here)."""
    try:
        import numpy
    except ImportError:  # no numpy at build time: no native envs (the pure-Python package still installs)
        return []
    only = only or os.environ.get("PUFFER_NATIVE_ONLY") or None
    return [
        Extension(
            f"pufferlib.ocean.native._{name}",
            [binding.as_posix()],
            include_dirs=[numpy.get_include()],
            depends=[p.as_posix() for p in [*NATIVE.glob("*.h"), *binding.parent.glob("*.h")]],
            extra_compile_args=build.cflags(),
            extra_link_args=build.LDFLAGS,
            optional=True,
        )
        for name, binding in build.bindings(NATIVE).items()
        if only is None or name == only
    ]


setup(ext_modules=native_extensions())
