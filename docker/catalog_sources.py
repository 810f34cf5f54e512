"""Copy the part of pufferlib that builds PufferLib 3.0's catalog, and nothing else, for its image stage.

    python docker/catalog_sources.py SOURCE DEST

Dockerfile.lib builds the catalog (pufferlib/ocean/contracts/catalog.py: the sdist's C envs through our 3.0
header, audited) in a stage of its own, from `COPY --from` of DEST. BuildKit keys that copy on the files'
contents, so the 2-3 minute build reruns only when a file it reads changes, not after every edit to
pufferlib. What it reads: the modules the catalog's build, load, probe and audit import (found by importing
them from SOURCE, so the list cannot go stale), with the C headers and sources beside them.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

# The modules the catalog runs (catalog.py imports the rest of contracts/ lazily, inside functions).
ENTRY_POINTS = (
    "pufferlib.ocean.contracts.catalog",
    "pufferlib.ocean.contracts.build",
    "pufferlib.ocean.contracts.load",
    "pufferlib.ocean.contracts.probe",
    "pufferlib.ocean.contracts.audit",
    "pufferlib.ocean.contracts.ini",
    "pufferlib.ocean.contracts.pl4env",
    "pufferlib.ocean.native",
    "pufferlib.core",
)
# Non-Python files the build compiles or includes: every header and C source under these folders.
C_TREES = ("pufferlib/ocean/contracts", "pufferlib/ocean/native")


def closure(source: Path) -> list[Path]:
    """The files of `source`/pufferlib that the entry points import, relative to `source`."""
    sys.path.insert(0, str(source))
    import importlib

    for name in ENTRY_POINTS:
        importlib.import_module(name)
    root = (source / "pufferlib").resolve()
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and root in Path(path).resolve().parents:
            files.add(Path(path).resolve().relative_to(source.resolve()))
    for tree in C_TREES:
        files.update(p.relative_to(source) for p in (source / tree).rglob("*") if p.suffix in (".h", ".c"))
    return sorted(files)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python docker/catalog_sources.py SOURCE DEST", file=sys.stderr)
        return 2
    source, dest = Path(argv[0]), Path(argv[1])
    files = closure(source)
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, dest / rel)  # contents only, and one fixed mtime: the copy's key
        os.utime(dest / rel, (0, 0))  # is what the files hold, whatever the checkout's timestamps
    print(f"catalog sources: {len(files)} files of {source / 'pufferlib'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
