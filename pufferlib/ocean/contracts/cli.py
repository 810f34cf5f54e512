"""`puffer build-native`: shipped native envs by name (recompiled in place, pufferlib/ocean/native/build.py),
or the folders of your own C envs by path (any contract: built, probed and registered as ocean/<name>)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from pufferlib.ocean.native import build as native_build


def build_folders(folders: list[str]) -> int:
    """Build each env folder (any contract) into home(), registered as ocean/<name>; exit status."""
    from pufferlib.environments.ocean_native import SHIPPED
    from pufferlib.ocean.contracts import build, home

    for folder in folders:
        start = time.perf_counter()
        try:
            m = build.build(Path(folder), shipped=SHIPPED)
        except build.BuildError as e:
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


def is_folder(arg: str) -> bool:
    return "/" in arg or arg in (".", "..") or Path(arg, "binding.c").is_file()


def run(args: argparse.Namespace) -> int:
    folders = [n for n in args.names if is_folder(n)]
    if not folders:
        return native_build.run(args)
    if len(folders) != len(args.names) or args.source:
        print("puffer build-native: give env folders (PATH) or shipped env names, not both", file=sys.stderr)
        return 2
    return build_folders(folders)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build-native",
        help="compile native Ocean envs in place, or build your own C env folders",
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
    p.set_defaults(func=run)
