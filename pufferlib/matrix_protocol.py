"""What `puffertank matrix` (the host) and `pufferlib.smoke` (inside the container) agree on.

The two sides run in different places: the host tooling has the Docker SDK but need not have numpy,
gymnasium or torch; the container has the whole library. So the protocol between them lives here, in
one module that imports the standard library only, and both sides import it (tests/unit/test_layers.py
holds the host to that):

- CHECKS: the check names, in the order they run and are reported;
- Result: the record of one check, printed as one JSON line by `python -m pufferlib.smoke NAME --json`
  (`to_line`) and read back by the host (`from_line`);
- GPU_REQUESTED_ENV: the variable the host sets when it asked for GPUs (its value says why), so the
  container's gpu and render checks fail, rather than skip, where no GPU is visible;
- the command lines the host runs in the container.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

SMOKE_MODULE = "pufferlib.smoke"

CHECKS = (
    "import",
    "make",
    "spaces",
    "reset",
    "step",
    "render",
    "serial",
    "multiprocessing",
    "policy",
    "learn",
    "gpu",
)

# Set by the host (puffertank matrix) when it asked for GPUs; the value says why ("the cuda variant").
GPU_REQUESTED_ENV = "PUFFERTANK_GPU_REQUESTED"


@dataclass
class Result:
    env: str
    check: str
    status: str  # pass | fail | skip
    seconds: float
    detail: str = ""
    sps: float | None = None
    # the render check's frames as small PNGs, base64 (the report's thumbnail strip); empty otherwise
    images: list[str] = field(default_factory=list, kw_only=True)

    def to_line(self) -> str:
        """The JSON line the container prints for this result."""
        return json.dumps(asdict(self))

    @classmethod
    def from_line(cls, line: str) -> Result | None:
        """The result a printed line carries; None for any other line (logs, warnings, a torn line)."""
        if not line.startswith("{"):
            return None
        try:
            data = json.loads(line)
            return cls(
                data["env"],
                data["check"],
                data["status"],
                float(data["seconds"]),
                data.get("detail", ""),
                data.get("sps"),
                images=[str(i) for i in data.get("images") or []],
            )
        except (ValueError, KeyError, TypeError):
            return None


def smoke_command(name: str) -> list[str]:
    """Run every check of binding `name`, one JSON line per check as each ends."""
    return ["python", "-m", SMOKE_MODULE, name, "--json"]


VERSIONS_COMMAND = ["python", "-m", SMOKE_MODULE, "--versions"]  # the stack's versions, one JSON line
