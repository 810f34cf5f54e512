"""Where the PufferTank source tree is: Dockerfiles, docker/ (constraints, cuda.toml) and pufferlib/.

Building needs it (Dockerfiles are not in a wheel), and so do the facts in docker/cuda.toml. It is found
from a checkout (the current directory or a parent, or the tree this package runs from, as with
`pip install -e`) and from a non-editable `pip install DIR`, whose record (PEP 610 direct_url.json) names
the directory it was installed from.
"""

from __future__ import annotations

import importlib.metadata
import json
import urllib.parse
import urllib.request
from pathlib import Path

from pufferlib.tank.errors import TankError
from pufferlib.tank.names import STAGES


def dockerfile(stage: str) -> str:
    """The Dockerfile of a stage, at the top of the source tree."""
    return f"Dockerfile.{stage}"


def is_source_tree(path: Path) -> bool:
    return all((path / dockerfile(s)).is_file() for s in STAGES) and (path / "pufferlib").is_dir()


def installed_from() -> Path | None:
    """The local directory pip installed pufferlib from (PEP 610), if it was installed from one."""
    try:
        record = importlib.metadata.distribution("pufferlib").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not record:
        return None
    try:
        url = json.loads(record).get("url", "")
    except ValueError:
        return None
    if not url.startswith("file://"):
        return None
    return Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))


def find_source_tree(explicit: str | Path | None = None) -> Path:
    """--source DIR if given; else the cwd or a parent, the tree this package runs from, or the directory
    pip installed it from. A TankError names where it looked and the fix."""
    candidates: list[Path] = []
    if explicit:
        candidates.append(Path(explicit))
    else:
        cwd = Path.cwd().resolve()
        candidates += [cwd, *cwd.parents, Path(__file__).resolve().parents[2]]
        origin = installed_from()
        if origin is not None:
            candidates.append(origin)
    for candidate in candidates:
        if is_source_tree(candidate):
            return candidate.resolve()
    where = (
        str(explicit)
        if explicit
        else "the current directory, its parents, or where pufferlib was installed from"
    )
    raise TankError(
        "no PufferTank source tree (Dockerfile.base, Dockerfile.envs, Dockerfile.lib, pufferlib/) in "
        f"{where}",
        "run puffertank from a checkout, pass --source DIR, or install the host tooling from a checkout "
        "(pip install -e 'CHECKOUT[tank]')",
    )
