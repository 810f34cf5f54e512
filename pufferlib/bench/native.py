"""Raw throughput of the native Ocean envs: agent steps/s of one NativeEnv of N instances, one process.

    puffer bench --native [--num-envs 1024]        python -m pufferlib.bench.native --json

Random actions are drawn up front (a pool of 64 batches, cycled) so that the env, not the RNG, is
timed; every step goes through NativeEnv.step, as a trainer's would. Each env is timed in `repeats`
windows of `seconds` and the median is reported with the load average beside it: figures from a loaded
machine are not comparable with a quiet one's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import numpy as np


def measure(name: str, num_envs: int = 1024, seconds: float = 1.0, repeats: int = 3) -> dict[str, Any]:
    """Median steps/s of `repeats` windows for native env `name` (default kwargs)."""
    from pufferlib.ocean.native import NativeEnv

    env = NativeEnv(name, num_envs=num_envs, seed=0)
    env.reset(0)
    sizes = np.asarray(env.module.ACT_SIZES)
    rng = np.random.default_rng(0)
    pool = (rng.random((64, *env.actions.shape)) * sizes).astype(np.int32).reshape(64, *env.actions.shape)
    for k in range(64):
        env.step(pool[k])
    rates = []
    for _ in range(repeats):
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for k in range(64):
                env.step(pool[k])
            steps += 64
        rates.append(steps * env.num_agents / (time.perf_counter() - start))
    env.close()
    return {"env": f"ocean/{name}", "num_envs": num_envs, "sps": statistics.median(rates), "samples": rates}


def run(num_envs: int, seconds: float, repeats: int, as_json: bool) -> int:
    from pufferlib.ocean import native

    rows, skipped = [], {}
    for name in native.names():
        why = native.unavailable(name)
        if why:
            skipped[name] = why
            continue
        rows.append(measure(name, num_envs, seconds, repeats))
    load = os.getloadavg()
    doc = {"rows": rows, "skipped": skipped, "load": load, "cpus": os.cpu_count()}
    if as_json:
        print(json.dumps(doc))
        return 0
    print(
        f"native Ocean, raw steps/s, one process, {num_envs} instances, random actions, median of {repeats}"
    )
    for row in rows:
        print(f"  {row['env']:<20} {row['sps'] / 1e6:8.2f}M")
    for name, why in skipped.items():
        print(f"  ocean/{name:<14} skipped: {why}")
    print(f"  load average {load[0]:.2f} on {os.cpu_count()} CPUs (compare only figures from quiet machines)")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pufferlib.bench.native", description=__doc__.split("\n")[0])
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.num_envs < 1 or args.seconds <= 0 or args.repeats < 1:
        p.error("--num-envs and --repeats must be >= 1 and --seconds > 0")
    return run(args.num_envs, args.seconds, args.repeats, args.json)


if __name__ == "__main__":
    sys.exit(main())
