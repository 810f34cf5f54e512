"""PufferLib 3.0's Ocean catalog, built here from its sdist as published: `pufferlib3/<name>`.

    python -m pufferlib.ocean.contracts.catalog fetch [--dest DIR]       the pinned sdist (sha256-checked)
    python -m pufferlib.ocean.contracts.catalog build [--sdist FILE] [--out DIR]
    python -m pufferlib.ocean.contracts.catalog cached         build once per builder version; print where

The sdist is a dependency used as published (pinned below by version and sha256; nothing of it is
committed). `build` unpacks its Ocean folders, configs and bundled raylib, builds every C env (a folder of
`pufferlib/ocean/` with a binding.c that its environment.py's MAKE_FUNCTIONS names) through the same flow as
`puffer build-native PATH` (build.py: our 3.0 header, the probe), and writes `catalog.json`: each env
available, or unavailable with its finding (the rung it failed and the first line of what it said).
`pufferlib.environments.ocean_native` registers the available ones as `pufferlib3/<name>` and catalogues the
rest with their findings (`puffer envs --all`).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from pufferlib.ocean.contracts import home

VERSION = "3.0.0"
SDIST = f"pufferlib-{VERSION}.tar.gz"
SHA256 = "7df3a3e3f5f894d78d2a1f5374097890aec01473183e748abefe4f3faa10eaa9"
INDEX = "https://pypi.org/simple/pufferlib/"  # PyPI's JSON simple API (PEP 691) names the file's URL
FAMILY = "pufferlib3"
CATALOG = "catalog.json"
RAYLIB = "raylib-5.5_linux_amd64"
RESOURCES = "pufferlib/resources"  # in the sdist: the envs' maps, weights, sprites and fonts
AUDIT_RUNGS = ("probe", "seeding", "masks", "lifecycle", "asan", "outputs")


def catalog_home() -> Path:
    """Where the catalog is built: $PUFFER_PL3_HOME, else pufferlib3/ beside home()."""
    return Path(os.environ.get("PUFFER_PL3_HOME") or home().parent / FAMILY)


def sdist_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "puffertank" / "sdists"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(dest: Path | None = None) -> Path:
    """The pinned sdist in `dest` (default the cache), downloaded from PyPI if absent; sha256-checked."""
    dest = sdist_cache() if dest is None else dest
    path = dest / SDIST
    if path.is_file() and _sha256(path) == SHA256:
        return path
    dest.mkdir(parents=True, exist_ok=True)
    request = urllib.request.Request(INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response)["files"]
    url = next(f["url"] for f in files if f["filename"] == SDIST)
    tmp = path.with_suffix(".part")
    with urllib.request.urlopen(url, timeout=300) as response, open(tmp, "wb") as out:
        while chunk := response.read(1 << 20):
            out.write(chunk)
    got = _sha256(tmp)
    if got != SHA256:
        tmp.unlink()
        raise SystemExit(f"{SDIST}: sha256 {got} is not the pinned {SHA256}: not used")
    tmp.replace(path)
    return path


def builder_key() -> str:
    """A hash of what a built catalog depends on: the sdist pin, our contract headers and modules."""
    from pufferlib.ocean.contracts import HERE

    digest = hashlib.sha256(SHA256.encode())
    for path in sorted([*HERE.rglob("*.py"), *HERE.rglob("*.h"), HERE.parent / "native" / "build.py"]):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cached() -> Path:
    """The catalog built from the cached sdist under ~/.cache/puffertank/pufferlib3-catalog/<builder_key()>,
    built there first when absent (~2.5 min on 2 cores): what the test suite registers and audits."""
    out = sdist_cache().parent / "pufferlib3-catalog" / builder_key()
    if (out / CATALOG).is_file():
        return out
    sdist = sdist_cache() / SDIST
    if not sdist.is_file():
        raise SystemExit(f"{sdist} is missing: python -m pufferlib.ocean.contracts.catalog fetch")
    out.parent.mkdir(parents=True, exist_ok=True)
    # a folder of this build's own: two builds at once (two checkouts, CI beside a session) never
    # write into one another's, and the first to finish is the one the key names
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", suffix=".tmp", dir=out.parent))
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the path alone
            build_all(sdist, tmp)
        if not (out / CATALOG).is_file():  # a half-made one left by a killed build
            shutil.rmtree(out, ignore_errors=True)
        try:
            tmp.rename(out)
        except OSError:  # another build finished first (out is a non-empty folder): keep that one
            if not (out / CATALOG).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def unpack(sdist: Path, dest: Path) -> Path:
    """Extract what the catalog needs (Ocean folders, their configs, raylib); the unpacked root."""
    if _sha256(sdist) != SHA256:
        raise SystemExit(f"{sdist}: not the pinned {SDIST} (sha256 {SHA256}); fetch it with `catalog fetch`")
    root = f"pufferlib-{VERSION}/"
    wanted = (
        f"{root}pufferlib/ocean/",
        f"{root}pufferlib/config/",
        f"{root}{RAYLIB}/",
        f"{root}{RESOURCES}/",
    )
    with tarfile.open(sdist) as tar:
        # Plain files and folders under the wanted roots, none of them climbing out: what the "data" filter
        # also enforces, which Debian 12's Python 3.11.2 (the image's) predates.
        members = [
            m
            for m in tar.getmembers()
            if m.name.startswith(wanted) and (m.isfile() or m.isdir()) and ".." not in Path(m.name).parts
        ]
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, members=members, **safe)
    return dest / root


def env_names(src: Path) -> list[str]:
    """The sdist's C envs: MAKE_FUNCTIONS names (environment.py) whose folder has a binding.c."""
    text = (src / "pufferlib" / "ocean" / "environment.py").read_text()
    table = text[text.index("MAKE_FUNCTIONS") :]
    named = re.findall(r"'(\w+)'\s*:\s*'\w+'", table[: table.index("}")])
    return [n for n in named if (src / "pufferlib" / "ocean" / n / "binding.c").is_file()]


def build_all(sdist: Path, out: Path, only: list[str] | None = None) -> dict[str, dict]:
    """Build every catalog env (or `only` those) into `out`; the catalog.json entries."""
    from pufferlib.ocean.contracts import build

    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = read(out) if only else {}  # a partial rebuild keeps the others' entries
    with tempfile.TemporaryDirectory() as tmp:
        src = unpack(sdist, Path(tmp))
        raylib = out / RAYLIB
        if not raylib.is_dir():
            (src / RAYLIB).rename(raylib)
        os.environ["PUFFER_RAYLIB"] = str(raylib)
        (out / "resources").mkdir(exist_ok=True)  # read by their C at init (moba's map) and by c_render
        for folder in (src / RESOURCES).iterdir():
            if not (out / "resources" / folder.name).exists():  # a partial rebuild keeps the others'
                folder.rename(out / "resources" / folder.name)
        for name in only or env_names(src):
            folder = src / "pufferlib" / "ocean" / name
            try:
                m = build.build(folder, root=out)
            except build.BuildError as e:
                text = str(e)
                rung = "probe" if "failed its probe" in text else "build"
                first = text.split(":", 1)[-1].strip().splitlines()
                results[name] = {"available": False, "rung": rung, "finding": _first_error(first)}
            else:
                results[name] = {"available": True, "agents_per_env": m.agents_per_env, **audited(out, name)}
            entry = results[name]
            print(f"{name}: {'available' if entry['available'] else entry['finding']}", flush=True)
    prune_resources(out / "resources", [n for n, entry in results.items() if entry["available"]])
    (out / CATALOG).write_text(json.dumps({"version": VERSION, "sha256": SHA256, "envs": results}, indent=1))
    return results


def prune_resources(resources: Path, available: list[str]) -> None:
    """The sdist's `resources/` kept for the available envs alone (`shared` and `<name>`: ~25 MB of its 72):
    load.py makes and draws them with the catalog as working directory, where their C finds them."""
    for folder in resources.iterdir() if resources.is_dir() else []:
        if folder.is_dir() and folder.name not in ("shared", *available):
            shutil.rmtree(folder)


def audited(out: Path, name: str) -> dict:
    """The testing ladder on a built env in a child process (audit.py); a failed rung makes it unavailable."""
    cmd = [sys.executable, "-m", "pufferlib.ocean.contracts.audit", str(out), name]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        died = f"killed by signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}"
        last = (done.stderr.strip().splitlines() or [died])[-1]
        return {
            "available": False,
            "rung": "audit",
            "finding": f"the audit process died ({died}): {last}"[:300],
        }
    result = json.loads(done.stdout)[name]
    if result["rung"]:
        return {"available": False, **result}
    return {"audited": list(AUDIT_RUNGS), "notes": result["notes"]}


def _first_error(lines: list[str]) -> str:
    """The compiler's first error line (else the first line), trimmed of the build folder's path."""
    errors = [line for line in lines if "error:" in line] or lines or ["(no output)"]
    return re.sub(r"\S*/\.build-[^/]+/(stage/)?", "", errors[0]).strip()[:300]


def read(out: Path | None = None) -> dict[str, dict]:
    """The catalog built under `out` (default catalog_home()): name -> entry; {} when none was built."""
    path = (catalog_home() if out is None else out) / CATALOG
    try:
        return json.loads(path.read_text())["envs"]
    except (OSError, ValueError, KeyError):
        return {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pufferlib.ocean.contracts.catalog", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download the pinned sdist (sha256-checked) into the cache")
    f.add_argument("--dest", type=Path)
    b = sub.add_parser("build", help="build the catalog from the sdist")
    b.add_argument("--sdist", type=Path, help="the pinned sdist (default: the cache's, fetched if absent)")
    b.add_argument("--out", type=Path, help="default: catalog_home()")
    b.add_argument("names", nargs="*", help="only these envs")
    sub.add_parser("cached", help="build from the cached sdist once per builder version; print the folder")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        print(fetch(args.dest))
        return 0
    if args.command == "cached":
        print(cached())
        return 0
    results = build_all(args.sdist or fetch(), args.out or catalog_home(), args.names or None)
    ok = sum(r["available"] for r in results.values())
    print(f"{ok} of {len(results)} PufferLib {VERSION} Ocean envs built as {FAMILY}/<name>", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
