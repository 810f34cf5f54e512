"""setuptools' `build_ext` for the native Ocean envs (pyproject.toml's [tool.setuptools.cmdclass]).

pyproject.toml declares one extension, the template's, so that setuptools builds extensions at all;
this command replaces that list, before anything compiles, with one Extension per folder of
pufferlib/ocean/native holding a binding.c (a new env needs no edit of pyproject.toml), adds numpy's
headers and build.py's flags, and makes each optional: without a C compiler (or Python's headers)
`pip install` still succeeds and the native envs are unavailable (`puffer envs` says why).
PUFFER_NATIVE_ONLY=NAME builds that env alone. After editing a C env, `puffer build-native NAME`
recompiles it in place in about a second (or `pip install -e .` rebuilds them all).

setuptools loads this file by path while pufferlib's own dependencies may not be importable, so it
needs the standard library and setuptools only (numpy when present: its headers).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from setuptools import Extension
from setuptools.command.build_ext import build_ext

NATIVE = Path("pufferlib", "ocean", "native")  # relative: setuptools builds from the project's root


def _flags():
    """build.py (the flags, one place), loaded by path: the package above it may not import yet."""
    spec = importlib.util.spec_from_file_location(
        "_pufferlib_native_build", Path(__file__).with_name("build.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def native_extensions(only: str | None = None) -> list[Extension]:
    """One optional Extension per env folder holding a binding.c; none without numpy's headers."""
    try:
        import numpy
    except ImportError:  # no numpy at build time: no native envs (the pure-Python package still installs)
        return []
    build = _flags()
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


class BuildNative(build_ext):
    """build_ext over every native env (the declared list is only the template, as an anchor)."""

    def finalize_options(self) -> None:
        self.distribution.ext_modules = native_extensions()
        super().finalize_options()
