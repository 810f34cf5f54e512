"""Compile native Ocean envs: the flags pip's build uses (build_ext.py), and `puffer build-native [NAME ...]`
(the command itself is pufferlib/ocean/contracts/cli.py, which also builds users' env folders).

Standard library only (build_ext.py loads this file by path, before pufferlib's dependencies exist).
`puffer build-native cartpole` recompiles one env in place, next to the imported package (a checkout
or the image's venv), in about a second; `--source DIR` compiles another tree's C (e.g. your edited
/workspace checkout) into the installed package.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).parent
# -O3 and no -march: the image must run on any x86-64 machine. PUFFER_NATIVE_CFLAGS adds flags
# (e.g. "-march=native" for a local build).
CFLAGS = ["-O3", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wno-unused-function"]
LDFLAGS = ["-pthread"]


def cflags() -> list[str]:
    return CFLAGS + shlex.split(os.environ.get("PUFFER_NATIVE_CFLAGS", ""))


def bindings(root: Path = HERE) -> dict[str, Path]:
    """env name -> its binding.c, for every folder of `root` that has one."""
    return {p.parent.name: p for p in sorted(root.glob("*/binding.c"))}


def compile_env(binding: Path, out_dir: Path = HERE) -> Path:
    """Compile one binding.c into out_dir/_<name><EXT_SUFFIX>; raises CalledProcessError with the log."""
    import numpy  # only here: build_ext.py loads this module before numpy may be importable

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"
    name = binding.parent.name
    target = out_dir / f"_{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    includes = [
        f"-I{sysconfig.get_paths()['include']}",
        f"-I{numpy.get_include()}",
        f"-I{binding.parent.parent}",
    ]
    tmp = target.with_suffix(".tmp")
    cmd = [*shlex.split(cc), "-shared", "-fPIC", *cflags(), *includes, str(binding), "-o", str(tmp), *LDFLAGS]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    tmp.replace(target)  # atomic: a running process keeps its mapped copy
    return target


def run(args: argparse.Namespace) -> int:
    """`puffer build-native [NAME ...] [--source DIR]`: recompile shipped native envs in place."""
    source = Path(args.source) if args.source else HERE
    found = bindings(source)
    if not found:
        print(f"puffer build-native: no <name>/binding.c under {source}", file=sys.stderr)
        return 2
    names = args.names or list(found)
    unknown = [n for n in names if n not in found]
    if unknown:
        print(
            f"puffer build-native: unknown native env {', '.join(unknown)}; one of {', '.join(found)} "
            f"(folders of {source} with a binding.c)",
            file=sys.stderr,
        )
        return 2
    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        print("puffer build-native: no C compiler: install gcc and python3-dev", file=sys.stderr)
        return 1
    for name in names:
        start = time.perf_counter()
        try:
            target = compile_env(found[name])
        except subprocess.CalledProcessError as e:
            print(f"puffer build-native: {name} failed to compile:\n{e.stderr}", file=sys.stderr)
            return 1
        print(f"built ocean/{name}: {target} ({time.perf_counter() - start:.1f} s)")
    return 0
