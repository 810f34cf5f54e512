"""Global training SPS with 1 and 2 ranks (torchrun, gloo on CPU), interleaved, median of repeats.

    python -m pufferlib.bench.rank_scaling                      # ocean/performance, 100 us of CPU per step
    python -m pufferlib.bench.rank_scaling classic_control/CartPole-v1 --steps 200000 --repeats 5

Each run trains a fixed number of agent steps (`--steps`, counted over all ranks) without stopping
when solved, through the real command: 1 rank is plain `puffer train` (the peer at its best: no
process group at all), 2 ranks are `puffer train --nproc-per-node 2`. The variants alternate, so a
change in the machine's load hits both alike. SPS is the summary's (global steps over rank 0's wall
time from the start of train(), setup included). The load average and the core count are printed
beside the table: on a shared machine they decide the ratio more than the code does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CPU_BOUND = ["--env.delay-mean", "100"]  # ocean/performance: each step busy-loops 100 us of CPU time


def run_once(env: str, ranks: int, steps: int, extra: list[str]) -> float:
    argv = [sys.executable, "-m", "pufferlib.cli", "train", env, "--json", "--train.run-dir", ""]
    argv += ["--train.total-timesteps", str(steps), "--train.stop-when-solved", "false", *extra]
    if ranks > 1:
        argv += ["--nproc-per-node", str(ranks)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["sps"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pufferlib.bench.rank_scaling", description=__doc__.split("\n")[0]
    )
    parser.add_argument("env", nargs="?", default="ocean/performance")
    parser.add_argument("--steps", type=int, default=100_000, help="agent steps per run, all ranks together")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    args, extra = parser.parse_known_args(argv)
    if args.env == "ocean/performance" and not extra:
        extra = CPU_BOUND
    load_before = os.getloadavg()
    samples: dict[int, list[float]] = {ranks: [] for ranks in args.ranks}
    for _ in range(args.repeats):
        for ranks in args.ranks:
            samples[ranks].append(run_once(args.env, ranks, args.steps, extra))
            print(f"  {ranks} rank(s): {samples[ranks][-1]:,.0f} SPS", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    base = statistics.median(samples[args.ranks[0]])
    print(
        f"{args.env} {' '.join(extra)}: {args.steps:,} global steps per run, {args.repeats} repeats, "
        f"{os.cpu_count()} CPUs; load average {', '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{', '.join(f'{x:.2f}' for x in load_after)} after"
    )
    print("\n| ranks | global SPS (median) | runs | vs 1 rank |\n|---:|---:|---|---:|")
    for ranks, sps in samples.items():
        median = statistics.median(sps)
        runs = ", ".join(f"{x:,.0f}" for x in sps)
        print(f"| {ranks} | {median:,.0f} | {runs} | {median / base:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
