"""Shrink what the envs stage just installed, without changing what it does.

Run by docker/install-envs.sh inside the build, on the files newer than a marker (those this stage wrote),
so nothing of the base stage is touched (a file of a lower layer changed here would be copied, not saved).
Every byte removed here is a byte no layer carries; deleting in a later layer would save nothing.

- test suites that packages ship inside themselves (`<package>/.../tests/`: pandas, scipy, numpy, ...);
- C/C++ sources beside their compiled modules (open_spiel ships its whole C++ tree; fontTools' Cython .c);
- Ray's Java worker jar (no JVM in the image) and its dashboard's JavaScript source maps; Arrow Flight and
  Arrow's C++ headers; stable-retro's arcade core (FinalBurn Neo: its one game then says what it lacks);
- symbol tables of ELF files (`strip --strip-unneeded`, with binutils from a throwaway build stage),
  executables included. Each stripped file's LOAD segments are compared with the original's; if strip
  moved one or broke page alignment (it does on some files patchelf edited) the original is put back.
  Libraries in auditwheel's `*.libs` folders and NVIDIA's own files are left alone (little to gain,
  most risk);
- duplicate files, made hard links of one another (a layer stores a hard-linked file once).

    python docker/slim_site.py --newer MARKER [--strip-root DIR] [--dry-run] DIR...
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

# Directory names whose whole tree is a package's own test suite. Only `tests`: singular `test` and
# `testing` are APIs in some packages (pettingzoo.test holds parallel_api_test, numpy.testing, ...).
TEST_DIRS = ("tests",)
# Files nothing reads at run time: (glob under a package, why).
DEAD_FILES = (
    ("open_spiel/**/*.cc", "open_spiel's C++ sources (pyspiel.so is prebuilt)"),
    ("open_spiel/**/*.cpp", "open_spiel's C++ sources"),
    ("open_spiel/**/*.h", "open_spiel's C++ headers (nothing compiles against them)"),
    ("open_spiel/**/*.hpp", "open_spiel's C++ headers"),
    ("fontTools/**/*.c", "fontTools' Cython output beside the compiled modules"),
    ("ray/jars/*.jar", "Ray's Java workers (no JVM in the image)"),
    ("ray/dashboard/client/build/**/*.map", "source maps of the dashboard's minified JavaScript"),
    ("pyarrow/*flight*", "Arrow Flight, an RPC server and client (Ray Tune reads Arrow, never serves it)"),
    ("pyarrow/include/**/*", "Arrow's C++ headers (nothing here compiles against Arrow)"),
    ("stable_retro/cores/fbneo_libretro.so", "FinalBurn Neo, the arcade core: 74 MB for 1 of 1,008 games"),
)
# Folders whose ELF files strip leaves alone: NVIDIA's CUDA libraries and tools (site-packages/nvidia/, and
# triton/backends/nvidia/'s ptxas) ship without symbol tables, so there is nothing to gain, only device code
# to risk. (Triton's own libtriton.so and torch's CUDA libraries are stripped: ~0.32 GB.)
NOT_STRIPPED = ("nvidia",)
ELF_MAGIC = b"\x7fELF"
DEDUPE_MIN_BYTES = 16 << 10


def new_files(root: Path, since: float) -> Iterator[Path]:
    """Regular files under root modified after `since` (written by this stage), not symlinks."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if path.is_file() and not path.is_symlink() and st.st_mtime > since:
                yield path


def _size(paths: Iterable[Path]) -> int:
    return sum(p.lstat().st_size for p in paths if p.is_file() and not p.is_symlink())


def _all_new(directory: Path, since: float) -> bool:
    return all(p.lstat().st_mtime > since for p in directory.rglob("*") if p.is_file())


def remove_test_suites(root: Path, since: float, dry_run: bool) -> int:
    """Delete `tests` directories whose every file this stage installed."""
    removed = 0
    for dirpath, dirnames, _ in os.walk(root):
        for name in list(dirnames):
            path = Path(dirpath) / name
            if name in TEST_DIRS and _all_new(path, since):
                removed += _size(path.rglob("*"))
                dirnames.remove(name)
                if not dry_run:
                    shutil.rmtree(path)
    return removed


def _package_roots(root: Path) -> list[Path]:
    """Where packages sit under root: root itself (a site-packages given directly) and, for a venv or
    prefix, its lib/python3*/site-packages."""
    return [root, *sorted(root.glob("lib/python3*/site-packages"))]


def remove_dead_files(root: Path, since: float, dry_run: bool) -> int:
    removed = 0
    for pattern, _ in DEAD_FILES:
        for path in (p for base in _package_roots(root) for p in base.glob(pattern)):
            if path.is_file() and not path.is_symlink() and path.lstat().st_mtime > since:
                removed += path.lstat().st_size
                if not dry_run:
                    path.unlink()
    return removed


def _is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == ELF_MAGIC


def load_segments(readelf: list[str], path: Path, env: dict) -> list[tuple[int, int, int, str, int]]:
    """(offset, vaddr, memsz, flags, align) of each LOAD program header (readelf -lW)."""
    out = subprocess.run([*readelf, "-lW", str(path)], capture_output=True, text=True, env=env, check=True)
    segments = []
    for line in out.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            offset, vaddr, _, _, memsz = (int(x, 16) for x in fields[1:6])
            flags = "".join(f for f in fields[6:-1])
            segments.append((offset, vaddr, memsz, flags, int(fields[-1], 16)))
    return segments


def _segments_ok(before: list, after: list) -> bool:
    """Same segments in memory, and every one page-aligned in the file (what the loader needs)."""
    same = [(v, m, f) for _, v, m, f, _ in before] == [(v, m, f) for _, v, m, f, _ in after]
    aligned = all(align <= 1 or offset % align == vaddr % align for offset, vaddr, _, _, align in after)
    return bool(after) and same and aligned


def strip_elf(root: Path, since: float, strip_root: Path, dry_run: bool) -> tuple[int, list[str]]:
    """strip --strip-unneeded every new ELF file outside *.libs and NVIDIA's folders; put back any that
    strip damaged."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(strip_root / "usr/lib/x86_64-linux-gnu")}
    strip = [str(strip_root / "usr/bin/strip"), "--strip-unneeded"]
    readelf = [str(strip_root / "usr/bin/readelf")]
    saved, restored = 0, []
    for path in sorted(new_files(root, since)):
        parts = path.relative_to(root).parts
        if any(part.endswith(".libs") or part in NOT_STRIPPED for part in parts) or not _is_elf(path):
            continue
        before_size = path.stat().st_size
        if dry_run:
            continue
        before = load_segments(readelf, path, env)
        backup = path.with_name(path.name + ".slim-backup")
        shutil.copy2(path, backup)
        result = subprocess.run([*strip, str(path)], capture_output=True, text=True, env=env)
        try:
            ok = result.returncode == 0 and _segments_ok(before, load_segments(readelf, path, env))
        except subprocess.CalledProcessError:
            ok = False
        if ok:
            shutil.copystat(backup, path)  # keep the mode, and the mtime that marks it as this stage's
            backup.unlink()
            saved += before_size - path.stat().st_size
        else:
            os.replace(backup, path)
            restored.append(f"{path} ({(result.stderr or 'segments moved').strip().splitlines()[-1]})")
    return saved, restored


def dedupe(roots: list[Path], since: float, dry_run: bool) -> int:
    """Hard-link identical new files (same content, mode and owner) to one copy."""
    by_size: dict[tuple, list[Path]] = defaultdict(list)
    for root in roots:
        for path in new_files(root, since):
            st = path.lstat()
            if st.st_size >= DEDUPE_MIN_BYTES and st.st_nlink == 1:
                by_size[st.st_size, st.st_mode, st.st_uid, st.st_gid].append(path)
    saved = 0
    for key, paths in by_size.items():
        if len(paths) < 2:
            continue
        by_hash: dict[str, list[Path]] = defaultdict(list)
        for path in paths:
            by_hash[hashlib.sha256(path.read_bytes()).hexdigest()].append(path)
        for same in by_hash.values():
            first, *rest = sorted(same)
            for path in rest:
                saved += key[0]
                if not dry_run:
                    tmp = path.with_name(path.name + ".slim-link")
                    os.link(first, tmp)
                    os.replace(tmp, path)
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", type=Path, help="directories to shrink (site-packages, ...)")
    parser.add_argument("--newer", type=Path, required=True, help="only files newer than this one")
    parser.add_argument("--strip-root", type=Path, help="a Debian root with binutils (none: no stripping)")
    parser.add_argument("--dry-run", action="store_true", help="measure only; change nothing")
    args = parser.parse_args(argv)
    since = args.newer.stat().st_mtime
    mb = 1e6
    for root in args.roots:
        before = _size(new_files(root, since))
        tests = remove_test_suites(root, since, args.dry_run)
        dead = remove_dead_files(root, since, args.dry_run)
        print(
            f"slim_site: {root}: this stage's files {before / mb:.0f} MB; removed test suites "
            f"{tests / mb:.0f} MB, dead files {dead / mb:.0f} MB",
            flush=True,
        )
        if args.strip_root:
            saved, restored = strip_elf(root, since, args.strip_root, args.dry_run)
            print(f"slim_site: {root}: stripped ELF files, {saved / mb:.0f} MB saved", flush=True)
            for line in restored:
                print(f"slim_site: left unstripped (strip damaged it): {line}", flush=True)
    linked = dedupe(args.roots, since, args.dry_run)
    print(f"slim_site: hard-linked duplicate files, {linked / mb:.0f} MB saved", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
