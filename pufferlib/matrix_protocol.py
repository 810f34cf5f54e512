"""What `puffertank matrix` (the host) and `pufferlib.smoke` (inside the container) agree on.

The two sides run in different places: the host tooling has the Docker SDK but need not have numpy,
gymnasium or torch; the container has the whole library. So the protocol between them lives here, in
one module that imports the standard library only, and both sides import it (tests/unit/repo/test_layers.py
holds the host to that):

- CHECKS: the check names, in the order they run and are reported;
- Result: the record of one check, printed as one JSON line by `python -m pufferlib.smoke NAME --json`
  (`to_line`) and read back by the host (`from_line`);
- STATUSES: what a cell can say, and which of them are an env's failure (FAILED) or the engine's (ENGINE);
- GPU_REQUESTED_ENV: the variable the host sets when it asked for GPUs (its value says why), so the
  container's gpu and render checks fail, rather than skip, where no GPU is visible;
- BUDGET_ENV: the seconds the host gives the container, so a check with a wall-time hang guard (learn)
  ends inside them with its numbers rather than being killed;
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

# A cell's status. The container reports pass, fail, timeout (a check's wall-time hang guard fired: not the
# same as failing, e.g. `learn` did not reach its step budget in time) and skip; the host adds
# engine-error (the Docker engine could not run the container: an API error, the daemon gone, the
# container killed from outside), which says nothing about the env.
STATUSES = ("pass", "fail", "timeout", "skip", "engine-error")
FAILED = ("fail", "timeout")  # the env's failures: the run's exit status 1
ENGINE = "engine-error"

# Set by the host (puffertank matrix) when it asked for GPUs; the value says why ("the cuda variant").
GPU_REQUESTED_ENV = "PUFFERTANK_GPU_REQUESTED"
# Set by the host: the seconds it lets the container run before killing it (the binding's budget).
BUDGET_ENV = "PUFFERTANK_SMOKE_SECONDS"


@dataclass
class Result:
    env: str
    check: str
    status: str  # one of STATUSES (the container reports all but engine-error)
    seconds: float
    detail: str = ""
    sps: float | None = None
    # the render check's frames as small PNGs, base64 (the report's thumbnail strip); empty otherwise
    images: list[str] = field(default_factory=list, kw_only=True)
    # the agent steps the check trained for (learn: to the solved score), its figure for --baseline
    steps: int | None = field(default=None, kw_only=True)

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
                steps=data.get("steps"),
            )
        except (ValueError, KeyError, TypeError):
            return None


def smoke_command(name: str) -> list[str]:
    """Run every check of binding `name`, one JSON line per check as each ends."""
    return ["python", "-m", SMOKE_MODULE, name, "--json"]


VERSIONS_COMMAND = ["python", "-m", SMOKE_MODULE, "--versions"]  # the stack's versions, one JSON line
