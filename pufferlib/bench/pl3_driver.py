"""One measurement for `puffer bench --pufferlib3` in a fresh interpreter: `python [-I] pl3_driver.py M SPEC`.

Run by path, never imported by the bench. It imports whichever `pufferlib` its interpreter has:
PufferLib 3.0.0's in the peer venv (run with -I from a neutral cwd), or ours (PYTHONPATH), so both
sides of a raw-steps row are timed by this same loop. SPEC is a JSON object.

- `steps`: {"factory": "module:Class", "args": [...], "kwargs": {...}, "seconds": s, "warmup_s": s}.
  Builds the env, resets it, draws 64 action arrays of its action buffer's dtype beforehand, then
  calls env.step for `seconds` after `warmup_s`. Prints one JSON line: sps (agent rows stepped per
  second), agents, calls, seconds, version.
- `envs`: {}. Prints the JSON list of the Ocean envs with a compiled binding (the peer builds a subset).
- `train`: {"env": "puffer_cartpole", "args": [...], "seconds": s, "log": path, "set": {...}, "ran": path,
  "torch_threads": n}.
  Runs PufferLib 3.0's own `puffer train ENV ARGS` (pufferlib.pufferl.main), its default logger
  replaced by one that also appends each log dict as a JSON line to `log`; it exits after the first
  dashboard frame printed once the trainer's uptime reaches `seconds` (the dashboard prints to stdout,
  which the bench keeps). Optional: `set` changes its parsed config after its command line
  (`apply`: what its command line cannot say, e.g. {"rnn_name": null}, or a [policy] key its .ini
  lacks); `ran` is a file it writes the config it trains with, its policy's parameter count, the
  env's observation features and action logits and its torch threads to; `torch_threads` (0: torch's
  default) sets those.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback


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


FREE = ("policy", "env")  # sections whose keys are keyword arguments: any may be added


def apply(args: dict, changes: dict) -> None:
    """Set each dotted key of `changes` ({"rnn_name": None, "train.minibatch_size": 2048}) in
    PufferLib 3.0's parsed config `args` (top-level keys are its [base]); KeyError for a key it lacks
    outside FREE (a typo would otherwise train with the .ini's value). use_rnn follows rnn_name."""
    for dotted, value in changes.items():
        section, _, key = dotted.rpartition(".")
        if section in FREE:
            args.setdefault(section, {})  # an .ini section without keys is not in its parsed config
        elif section and section not in args:
            raise KeyError(f"PufferLib 3.0's config has no [{section}] (setting {dotted})")
        table = args[section] if section else args
        if key not in table and section not in FREE:
            raise KeyError(f"PufferLib 3.0's config has no {dotted}")
        table[key] = value
    args["train"]["use_rnn"] = args.get("rnn_name") is not None


def _record(pufferl, changes: dict, ran: str | None) -> None:
    """Apply `changes` to the config pufferl's train() loads; with `ran`, write that config and the
    parameter count of the policy it builds there."""
    import torch

    load_config, load_policy = pufferl.load_config, pufferl.load_policy
    seen: dict = {}

    def config(env_name):
        args = load_config(env_name)
        apply(args, changes)
        seen["config"] = {k: v for k, v in args.items() if k in ("train", "env", "vec", "policy", "rnn")}
        seen["config"].update({k: args.get(k) for k in ("env_name", "policy_name", "rnn_name")})
        return args

    def policy(args, vecenv):
        made = load_policy(args, vecenv)
        seen["parameters"] = sum(p.numel() for p in made.parameters())
        seen["policy"] = type(made).__name__
        seen["agents"] = vecenv.num_agents
        seen["inputs"], seen["actions"] = _sizes(vecenv.single_observation_space, vecenv.single_action_space)
        seen["torch_threads"] = torch.get_num_threads()
        if ran:
            with open(ran, "w") as f:
                json.dump(seen, f, default=str)
        return made

    pufferl.load_config, pufferl.load_policy = config, policy


def _sizes(observations, actions) -> tuple[int, int | None]:
    """Observation features and action logits (Discrete n, MultiDiscrete sum of nvec; None otherwise)."""
    import numpy as np

    logits = int(actions.n) if hasattr(actions, "n") else None
    if hasattr(actions, "nvec"):
        logits = int(np.sum(actions.nvec))
    return int(np.prod(observations.shape)), logits


def train(spec: dict) -> None:
    import pufferlib.pufferl as pufferl

    budget, path = float(spec["seconds"]), spec["log"]
    if spec.get("torch_threads"):  # it sets none itself: torch's default, one per core
        import torch

        torch.set_num_threads(int(spec["torch_threads"]))
    _record(pufferl, spec.get("set") or {}, spec.get("ran"))
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
    try:
        pufferl.main()
    except Exception:  # its Utilization thread is no daemon: the process would outlive a trainer that raised
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


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
