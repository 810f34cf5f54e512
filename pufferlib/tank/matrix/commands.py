"""The containers a matrix starts: their spec (label, plugins, GPU request) and the short commands
asked of the image (which bindings it registers, which versions it holds)."""

from __future__ import annotations

import json
from pathlib import Path

from pufferlib.matrix_protocol import GPU_REQUESTED_ENV, VERSIONS_COMMAND
from pufferlib.tank.containers import RunSpec, nvidia_runtime_available, run_captured
from pufferlib.tank.errors import TankError
from pufferlib.tank.matrix.hosts import LABEL, Host
from pufferlib.tank.matrix.plan import Plan

PLUGIN_DIR = "/opt/puffertank/plugins"
TAIL_LINES = 25


def spec(plan: Plan, host: Host, command: list[str], gpu: bool) -> RunSpec:
    """A matrix container: the run's label, the plugins copied in, and (gpu) the GPU request."""
    env = {"SDL_VIDEODRIVER": "dummy", **plugin_env(plan.plugins)}
    gpus = "none"
    if gpu and plan.gpu_request:
        runtime = nvidia_runtime_available(host.client)
        gpus = "all" if runtime else "none"
        situation = (
            ""
            if runtime
            else f"; the Docker engine on {host.url} has no NVIDIA runtime, so none was passed in"
        )
        env[GPU_REQUESTED_ENV] = f"{plan.gpu_request} on {host.url}{situation}"
    return RunSpec(
        image=plan.image,
        command=command,
        gpus=gpus,
        labels={LABEL: plan.run_id},
        env=env,
        hostname="puffertank-matrix",
        copy_in=[(p, PLUGIN_DIR) for p in plan.plugins],
    )


def plugin_env(plugins: list[Path]) -> dict[str, str]:
    if not plugins:
        return {}
    return {"PYTHONPATH": PLUGIN_DIR, "PUFFERLIB_PLUGINS": ",".join(p.stem for p in plugins)}


def run_once(host: Host, plan: Plan, command: list[str]) -> str:
    """Run a short command in a labelled container and return its stdout (a TankError on failure)."""
    container = spec(plan, host, command, gpu=False)
    container.timeout = 120
    result = run_captured(host.client, container, fix=f"puffertank build (on {host.url})")
    if result.exit_code != 0:
        raise TankError(f"`{' '.join(command)}` failed in {plan.image} on {host.url}:\n{tail(result.stderr)}")
    return result.stdout


def registered_bindings(host: Host, plan: Plan) -> list[dict]:
    """The bindings the image registers (with the plan's plugins: they register at import)."""
    return json.loads(run_once(host, plan, ["puffer", "envs", "--json"]))


def versions(host: Host, plan: Plan) -> dict[str, str]:
    """The stack's versions inside the image (`python -m pufferlib.smoke --versions`)."""
    out = run_once(host, plan, list(VERSIONS_COMMAND))
    return json.loads(out.strip().splitlines()[-1])


def tail(text: str | list[str], n: int = TAIL_LINES) -> str:
    lines = text.splitlines() if isinstance(text, str) else text
    return "\n".join(lines[-n:])
