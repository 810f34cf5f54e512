"""Build PufferLib 3.0.0 as a benchmark peer in a venv of its own, from its PyPI sdist and the package index.

    python -m pufferlib.bench.pufferlib3_peer --dry-run   # the plan: each step, done or to do, its command
    python -m pufferlib.bench.pufferlib3_peer             # build what is not built yet (~5 min on 2 cores)
    python -m pufferlib.bench.pufferlib3_peer --venv DIR --python python3.11
    python -m pufferlib.bench.pufferlib3_peer --envs rware,trash_pickup   # more of its C envs (rebuilds)

PufferLib 3.0.0 ships only an sdist whose setup.py downloads raylib and box2d from GitHub while pip
reads its metadata, so `pip download` fails offline; `--no-clean` keeps the source it unpacked. Then:
the empty folders those downloads would have made, the Ocean envs pruned to the ones `puffer bench
--pufferlib3` compares (each other C env would be compiled, and impulse_wars needs box2d; --envs keeps
more, put back from the pinned sdist where an earlier build pruned them), a PATH
without nvcc (else it builds `pufferlib._C` for CUDA), `pip install --no-build-isolation --no-deps`,
and the dependencies it imports, at the versions it was built for. Each step is skipped when what
it makes is already there, so a second run only checks. A benchmark peer only: no test builds it.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

VERSION = "3.0.0"
DEFAULT_VENV = Path("/opt/peers/pufferlib3")
# The C envs kept (their folders under pufferlib/ocean/); every other folder with a binding.c goes.
KEEP_ENVS = ("cartpole", "squared", "breakout", "pong", "snake", "connect4")
# Folders setup.py would download into (raylib for the web, box2d); empty is enough for Linux builds.
EMPTY_DIRS = ("raylib-5.5_webassembly", "box2d-web", "box2d-linux-amd64")
BUILD_DEPS = ("numpy<2", "setuptools", "wheel", "Cython")
# What pufferlib 3.0.0's trainer and envs import, at versions that fit it (heavyball 3.x lacks ForeachMuon).
RUN_DEPS = (
    "gymnasium==0.29.1",
    "gym==0.23.0",
    "shimmy==1.3.0",
    "pettingzoo==1.24.1",
    "heavyball==2.2.1",
    "psutil",
    "nvidia-ml-py",  # the pynvml module (the 'pynvml' package is a deprecated shim of it)
    "rich",
    "rich_argparse",
    "imageio",
    "pyro-ppl",
)
# Installed (its own import needs the dependencies of the next step) and importable, in a venv's Python.
INSTALLED = (
    "import glob, importlib.metadata as m, sysconfig; assert m.version('pufferlib') == '{v}'; "
    "assert all(glob.glob(sysconfig.get_paths()['platlib'] + f'/pufferlib/ocean/{{e}}/binding*.so') "
    "for e in {envs!r})"
)
IMPORTS = (
    "import importlib.metadata as m, pufferlib, pufferlib.pufferl, pufferlib.ocean.cartpole.binding; "
    "assert m.version('pufferlib') == '{v}'"
)


@dataclass
class Step:
    """One step of the build: what it does, whether it is done, and how to do it."""

    title: str
    done: Callable[[], bool]
    command: list[str]
    env: dict[str, str] | None = None
    action: Callable[[], None] | None = None  # in place of (or after) the command
    check_rc: bool = True

    def shown(self) -> str:
        prefix = " ".join(f"{k}={v}" for k, v in (self.env or {}).items() if k in ("PATH", "TMPDIR"))
        cmd = " ".join(self.command) if self.command else "(in Python)"
        return f"{prefix} {cmd}".strip()


def path_without(tool: str, path: str | None = None) -> str:
    """$PATH less every directory holding `tool` (setup.py builds for CUDA when nvcc is on PATH)."""
    parts = (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep)
    return os.pathsep.join(p for p in parts if p and not os.path.exists(os.path.join(p, tool)))


def local_torch() -> str:
    """A CPU torch wheel in pip's find-links if there is one (PyPI's torch pulls GBs of CUDA), or 'torch'."""
    for links in os.environ.get("PIP_FIND_LINKS", "/opt/wheels").split():
        wheels = sorted(glob.glob(os.path.join(links, "torch-*+cpu-cp311-*.whl")))
        if wheels:
            return wheels[-1]
    return "torch"


def source_dir(venv: Path) -> Path:
    return venv / "src" / f"pufferlib-{VERSION}"


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _imports(venv: Path, code: str) -> bool:
    py = _python(venv)
    if not py.exists():
        return False
    out = subprocess.run([str(py), "-I", "-c", code], capture_output=True, cwd="/", timeout=300)
    return out.returncode == 0


def _unpacked(venv: Path) -> Path | None:
    """The source pip unpacked and kept (--no-clean), under the venv's pip-tmp."""
    for pkg_info in sorted(glob.glob(str(venv / "pip-tmp" / "pip-*" / "pufferlib_*" / "PKG-INFO"))):
        if f"\nVersion: {VERSION}\n" in Path(pkg_info).read_text():
            return Path(pkg_info).parent
    return None


def _take_source(venv: Path) -> None:
    found = _unpacked(venv)
    if found is None:
        raise SystemExit(f"pufferlib3_peer: pip kept no pufferlib {VERSION} source under {venv / 'pip-tmp'}")
    dest = source_dir(venv)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(found), dest)
    shutil.rmtree(venv / "pip-tmp", ignore_errors=True)


def pruned(src: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """The Ocean env folders with a binding.c that are not kept (what prune removes)."""
    ocean = src / "pufferlib" / "ocean"
    keep = (*KEEP_ENVS, *extra)
    return sorted(p.parent.name for p in ocean.glob("*/binding.c") if p.parent.name not in keep)


def absent(src: Path, extra: tuple[str, ...]) -> list[str]:
    """The `extra` envs (--envs) whose folder is not in the source (an earlier build pruned it)."""
    return [n for n in extra if not (src / "pufferlib" / "ocean" / n / "binding.c").is_file()]


def _restore(src: Path, names: list[str]) -> None:
    """Put the Ocean folders `names` back into the source from the pinned sdist (catalog.fetch: the
    cached one, sha256-checked); SystemExit for a name it has no C env of."""
    from pufferlib.ocean.contracts import catalog

    root = f"pufferlib-{VERSION}/"
    wanted = tuple(f"{root}pufferlib/ocean/{n}/" for n in names)
    with tarfile.open(catalog.fetch()) as tar:
        members = [
            m
            for m in tar.getmembers()
            if m.name.startswith(wanted) and (m.isfile() or m.isdir()) and ".." not in Path(m.name).parts
        ]
        for m in members:
            m.name = m.name.removeprefix(root)
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(src, members=members, **safe)
    unknown = absent(src, tuple(names))
    if unknown:
        raise SystemExit(f"pufferlib3_peer: pufferlib {VERSION} has no C env {', '.join(unknown)}")


def _prepare(src: Path, extra: tuple[str, ...] = ()) -> None:
    for name in EMPTY_DIRS:
        (src / name).mkdir(exist_ok=True)
    for name in pruned(src, extra):
        shutil.rmtree(src / "pufferlib" / "ocean" / name)
    if absent(src, extra):
        _restore(src, absent(src, extra))


def _prepared(src: Path, extra: tuple[str, ...] = ()) -> bool:
    return (
        src.is_dir()
        and all((src / d).is_dir() for d in EMPTY_DIRS)
        and not pruned(src, extra)
        and not absent(src, extra)
    )


def plan(venv: Path, python: str, extra: tuple[str, ...] = ()) -> list[Step]:
    """Every step, in order; each knows whether it is done. `extra`: C envs kept beside KEEP_ENVS."""
    py, src = str(_python(venv)), source_dir(venv)
    pip = [py, "-m", "pip"]
    no_nvcc = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{path_without('nvcc')}"}
    torch = local_torch()
    return [
        Step("venv", lambda: _python(venv).exists(), [python, "-m", "venv", str(venv)]),
        Step(
            "build dependencies",
            lambda: _imports(
                venv, "import numpy, setuptools, wheel, Cython, torch; assert numpy.__version__ < '2'"
            ),
            [*pip, "install", *BUILD_DEPS, torch],
        ),
        Step(
            "sdist (pip download fails reading its metadata offline; --no-clean keeps the source)",
            lambda: src.is_dir(),
            [
                *pip,
                "download",
                "--no-clean",
                "--no-deps",
                "--no-build-isolation",
                "-d",
                str(venv / "dist"),
                f"pufferlib=={VERSION}",
            ],
            env={**no_nvcc, "TMPDIR": str(venv / "pip-tmp")},
            action=lambda: _take_source(venv),
            check_rc=False,
        ),
        Step(
            f"empty {', '.join(EMPTY_DIRS)}; prune Ocean to {', '.join((*KEEP_ENVS, *extra))}",
            lambda: _prepared(src, extra),
            [],
            action=lambda: _prepare(src, extra),
        ),
        Step(
            f"pufferlib {VERSION} (its C envs and a CPU pufferlib._C)",
            lambda: _imports(venv, INSTALLED.format(v=VERSION, envs=("cartpole", *extra))),
            [*pip, "install", "--no-build-isolation", "--no-deps", str(src)],
            env=no_nvcc,
        ),
        Step(
            "its dependencies",
            lambda: _imports(venv, IMPORTS.format(v=VERSION)),
            [*pip, "install", *RUN_DEPS],
        ),
    ]


def build(venv: Path, python: str, dry_run: bool = False, extra: tuple[str, ...] = ()) -> int:
    """Run (or, dry, show) every step not done yet; 0 when the peer imports at the end."""
    steps = plan(venv, python, extra)
    for k, step in enumerate(steps, 1):
        done = step.done()
        print(f"[{k}/{len(steps)}] {step.title}: {'done' if done else 'to do'}", flush=True)
        if done:
            continue
        print(f"    {step.shown()}", flush=True)
        if dry_run:
            continue
        if step.env and "TMPDIR" in step.env:
            os.makedirs(step.env["TMPDIR"], exist_ok=True)
        if step.command:
            rc = subprocess.run(step.command, env=step.env).returncode
            if rc and step.check_rc:
                print(f"pufferlib3_peer: step '{step.title}' failed (exit {rc})", file=sys.stderr)
                return 1
        if step.action:
            step.action()
        if not step.done():
            print(f"pufferlib3_peer: step '{step.title}' ran but is not done", file=sys.stderr)
            return 1
    if not dry_run:
        print(f"PufferLib {VERSION} peer ready: {_python(venv)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m pufferlib.bench.pufferlib3_peer", description=__doc__.splitlines()[0]
    )
    p.add_argument("--venv", type=Path, default=DEFAULT_VENV, help=f"the peer venv (default {DEFAULT_VENV})")
    p.add_argument(
        "--python", default="python3.11", help="the interpreter that makes the venv (default python3.11)"
    )
    p.add_argument("--dry-run", action="store_true", help="show each step, done or to do, and change nothing")
    p.add_argument(
        "--envs",
        default="",
        help=f"more of its C envs to build beside {','.join(KEEP_ENVS)}: a comma list (rware,trash_pickup; "
        "for `puffer bench --pufferlib3 --matched --train-envs pufferlib3/NAME`)",
    )
    args = p.parse_args(argv)
    if shutil.which(args.python) is None and not Path(args.python).exists():
        print(
            f"pufferlib3_peer: no interpreter '{args.python}'; pass --python PATH (a Python 3.11)",
            file=sys.stderr,
        )
        return 2
    extra = tuple(n for n in args.envs.split(",") if n and n not in KEEP_ENVS)
    return build(args.venv.absolute(), args.python, args.dry_run, extra)


if __name__ == "__main__":
    sys.exit(main())
