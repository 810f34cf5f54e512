"""Compile native Ocean envs: the flags pip's build uses (build_ext.py), and `puffer build-native [NAME ...]`.

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


def _build_folders(folders: list[str]) -> int:
    """`puffer build-native PATH ...`: build each env folder (any contract), registered as ocean/<name>."""
    from pufferlib.environments.ocean_native import SHIPPED
    from pufferlib.ocean.contracts import build as contracts_build
    from pufferlib.ocean.contracts import home

    for folder in folders:
        start = time.perf_counter()
        try:
            m = contracts_build.build(Path(folder), shipped=SHIPPED)
        except contracts_build.BuildError as e:
            print(f"puffer build-native: {e}", file=sys.stderr)
            return 2
        shape = "x".join(map(str, m.obs_shape))
        print(
            f"built ocean/{m.name} ({m.contract}) from {folder} in {time.perf_counter() - start:.1f} s: "
            f"observations {shape} {m.obs_dtype}, actions {m.act_sizes or 'Box'}, "
            f"{m.agents_per_env} agent(s) per env -> {home() / m.name}"
        )
        for line in m.unmapped:
            print(f"  not mapped from {m.name}.ini: {line}")
        print(f"  train it: puffer train ocean/{m.name}")
    return 0


def _is_folder(arg: str) -> bool:
    return "/" in arg or arg in (".", "..") or Path(arg, "binding.c").is_file()


def _run(args: argparse.Namespace) -> int:
    folders = [n for n in args.names if _is_folder(n)]
    if folders:
        if len(folders) != len(args.names) or args.source:
            print(
                "puffer build-native: give env folders (PATH) or shipped env names, not both", file=sys.stderr
            )
            return 2
        return _build_folders(folders)
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


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build-native",
        help="compile native Ocean envs in place (after editing their C)",
        description="Compile native Ocean envs (pufferlib/ocean/native/<name>/binding.c) next to the "
        "imported pufferlib package, or build your own env folders (a path: PufferLib 3.0's or 4.0's "
        "binding contract, or ours) into $PUFFER_NATIVE_HOME as ocean/<folder name>. New processes load "
        "the new build.",
    )
    p.add_argument(
        "names",
        nargs="*",
        metavar="NAME|PATH",
        help="shipped env names (default: all), or the folders of your own C envs (PufferLib 3.0 or 4.0 "
        "contract, or ours), each built and registered as ocean/<folder name>",
    )
    p.add_argument("--source", help="compile the C of this native/ folder instead (e.g. your checkout's)")
    p.set_defaults(func=_run)
