"""The CUDA facts, read from docker/cuda.toml (their only copy; provision/setup-host.sh reads it too).

Which CUDA PyPI's torch is built for, the minimum driver of each CUDA release, the compatibility floors,
the driver branches a host can get, and the PyTorch index for older drivers. Python reads the file with
tomllib; nothing here restates a number from it.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pufferlib.tank.errors import TankError
from pufferlib.tank.source import find_source_tree

CUDA_TOML = "docker/cuda.toml"  # relative to the source tree
TABLES = ("pypi_torch_cuda", "min_driver", "compat_floor", "driver_branch", "torch_index")


@dataclass(frozen=True)
class CudaFacts:
    path: Path
    pypi_torch_cuda: dict[str, str]  # torch version -> the CUDA PyPI's wheel is built for
    min_driver: dict[str, str]  # CUDA MAJOR.MINOR -> minimum driver for full support
    compat_floor: dict[str, str]  # CUDA MAJOR -> oldest driver that runs it via minor-version compatibility
    driver_branch: dict[str, str]  # "nvidia_default" / "debian" -> driver branch
    torch_index: dict[str, str]  # name -> a PyTorch wheel index for older drivers

    def pypi_cuda(self, torch_version: str) -> str | None:
        """The CUDA PyPI's torch `torch_version` is built for, if the file says."""
        return self.pypi_torch_cuda.get(torch_version)

    def needed_driver(self, cuda: str) -> str | None:
        """The driver CUDA `cuda` fully needs, else its major version's compatibility floor."""
        return self.min_driver.get(cuda) or self.compat_floor.get(cuda.split(".")[0])


@functools.cache
def load(path: Path) -> CudaFacts:
    """The facts in one cuda.toml; a TankError naming the file when it is missing or malformed."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise TankError(
            f"cannot read the CUDA facts {path}: {exc.strerror or exc}", "restore it from git"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise TankError(
            f"{path} is not valid TOML: {exc}", f"fix {path} (git diff shows what changed)"
        ) from exc
    missing = [t for t in TABLES if not isinstance(data.get(t), dict)]
    if missing:
        raise TankError(f"{path} lacks the table(s) {', '.join(missing)}", f"restore {path} from git")
    return CudaFacts(path, *({str(k): str(v) for k, v in data[t].items()} for t in TABLES))


def facts(source: Path | None = None) -> CudaFacts:
    """The facts of the source tree (found as `puffertank build` finds it when not given)."""
    return load((source or find_source_tree()) / CUDA_TOML)


def cuda_of_index(url: str) -> str | None:
    """The CUDA a PyTorch wheel index is for, from its name: .../whl/cu126 -> '12.6'; None if unnamed."""
    match = re.search(r"/cu(\d+)(\d)/?$", url)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def version_tuple(version: str) -> tuple[int, ...]:
    """'550.163.01' -> (550, 163, 1); junk after the numbers is ignored."""
    match = re.match(r"\d+(\.\d+)*", version.strip())
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in match.group(0).split("."))
