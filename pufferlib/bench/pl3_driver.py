"""One measurement for `puffer bench --pufferlib3` in a fresh interpreter: `python [-I] pl3_driver.py M SPEC`.

Run by path, never imported by the bench. It imports whichever `pufferlib` its interpreter has:
PufferLib 3.0.0's in the peer venv (run with -I from a neutral cwd), or ours (PYTHONPATH), so both
sides of a raw-steps row are timed by this same loop. SPEC is a JSON object.

- `steps`: {"factory": "module:Class", "args": [...], "kwargs": {...}, "seconds": s, "warmup_s": s}.
  Builds the env, resets it, draws 64 action arrays of its action buffer's dtype beforehand, then
  calls env.step for `seconds` after `warmup_s`. Prints one JSON line: sps (agent rows stepped per
  second), agents, calls, seconds, version.
- `envs`: {}. Prints the JSON list of the Ocean envs with a compiled binding (the peer builds a subset).
- `train`: {"env": "puffer_cartpole", "args": [...], "seconds": s, "log": path}. Runs PufferLib 3.0's
  own `puffer train ENV ARGS` (pufferlib.pufferl.main), its default logger replaced by one that also
  appends each log dict as a JSON line to `log`; it exits after the first dashboard frame printed once
  the trainer's uptime reaches `seconds` (the dashboard prints to stdout, which the bench keeps).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time


def _version(pufferlib) -> str:
    """The distribution's version (PufferLib 3.0.0 says '3.0' in __version__), else __version__."""
    from importlib import metadata

    try:
        return metadata.version("pufferlib")
    except metadata.PackageNotFoundError:
        return str(pufferlib.__version__)


def steps(spec: dict) -> dict:
    import numpy as np

    import pufferlib

    module, name = spec["factory"].split(":")
    env = getattr(importlib.import_module(module), name)(*spec.get("args", ()), **spec.get("kwargs", {}))
    try:
        env.reset(seed=0)
        space, rows = env.single_action_space, env.num_agents
        rng = np.random.default_rng(0)
        high = space.nvec if hasattr(space, "nvec") else space.n
        shape = env.actions.shape
        acts = [rng.integers(0, high, size=shape).astype(env.actions.dtype) for _ in range(64)]
        step = env.step
        k, end = 0, time.perf_counter() + spec["warmup_s"]
        while time.perf_counter() < end:
            step(acts[k & 63])
            k += 1
        calls, start = 0, time.perf_counter()
        end = start + spec["seconds"]
        while True:
            for _ in range(16):
                step(acts[calls & 63])
                calls += 1
            now = time.perf_counter()
            if now >= end:
                break
        seconds = now - start
    finally:
        env.close()
    return {
        "sps": calls * rows / seconds,
        "agents": rows,
        "calls": calls,
        "seconds": seconds,
        "version": _version(pufferlib),
    }


def train(spec: dict) -> None:
    import pufferlib.pufferl as pufferl

    budget, path = float(spec["seconds"]), spec["log"]
    out = open(path, "a")  # noqa: SIM115 -- open until the process exits below

    class RecordingLogger(pufferl.NoLogger):
        def log(self, logs: dict, step: int) -> None:
            line = {k: v for k, v in logs.items() if isinstance(v, (int, float))}
            out.write(json.dumps(line) + "\n")
            out.flush()

    shown = pufferl.PuffeRL.print_dashboard

    def print_dashboard(self, *args, **kwargs) -> None:  # log, then this frame; then stop once over budget
        shown(self, *args, **kwargs)
        if self.uptime >= budget and self.global_step > 0:
            sys.stdout.flush()
            os._exit(0)  # the trainer has no time budget; its own ctrl-c handler exits the same way

    pufferl.NoLogger = RecordingLogger
    pufferl.PuffeRL.print_dashboard = print_dashboard
    sys.argv = ["puffer", "train", spec["env"], *spec.get("args", ())]
    pufferl.main()


def built_envs() -> list[str]:
    """The Ocean envs this interpreter's pufferlib has a compiled binding for."""
    from pathlib import Path

    import pufferlib.ocean

    ocean = Path(pufferlib.ocean.__file__).parent
    return sorted({p.parent.name for p in ocean.glob("*/binding*.so")})


def main(argv: list[str]) -> int:
    mode, spec = argv[0], json.loads(argv[1])
    if mode == "steps":
        print(json.dumps(steps(spec)))
    elif mode == "envs":
        print(json.dumps(built_envs()))
    elif mode == "train":
        train(spec)
    else:
        print(f"pl3_driver: unknown mode {mode!r}; valid: steps, envs, train", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
