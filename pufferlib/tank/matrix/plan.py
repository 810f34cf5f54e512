"""What a matrix run is asked to do: the image, the hosts, the bindings and how to run them."""

from __future__ import annotations

import fnmatch
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from pufferlib.tank.errors import TankError
from pufferlib.tank.matrix.hosts import Host


@dataclass
class Plan:
    image: str
    variant: str
    hosts: list[Host]
    bindings: list[dict]
    jobs: int = 2
    timeout: float | None = None  # per binding; None = the binding's own smoke budget
    plugins: list[Path] = field(default_factory=list)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    repeats: int = 1  # containers per binding: the timed cells' spread is the baseline's noise band
    every_host: bool = False  # run every binding on every host (compare the boxes), not each on one
    gpus: str = "auto"  # auto: GPUs requested for the cuda variant; all: always; none: never
    patterns: list[str] = field(default_factory=list)  # --env filters, for the report's provenance
    command: list[str] = field(default_factory=lambda: list(sys.argv))  # the exact command line, likewise
    retries: int = 1  # more containers for a binding whose container the engine could not run
    backoff: float = 2.0  # seconds before the first retry, doubling after each

    @property
    def gpu_request(self) -> str:
        """Why GPUs are requested ("" when they are not): the containers' gpu check then must find one."""
        if self.gpus == "all":
            return "--gpus all"
        if self.gpus == "auto" and self.variant == "cuda":
            return "the cuda variant"
        return ""


def select(bindings: list[dict], patterns: list[str]) -> list[dict]:
    """Bindings whose name matches any glob (e.g. 'ocean/*', 'minigrid/*Empty*'); all when none given."""
    if not patterns:
        return bindings
    chosen = [b for b in bindings if any(fnmatch.fnmatch(b["name"], p) for p in patterns)]
    if not chosen:
        names = ", ".join(b["name"] for b in bindings[:8])
        raise TankError(
            f"no binding matches {' '.join(patterns)}; e.g. {names}",
            "`puffer envs` lists them (inside the image)",
        )
    return chosen
