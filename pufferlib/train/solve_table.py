"""The "solved table": train every Ocean env and CartPole from scratch with its default config.

    python -m pufferlib.train.solve_table                  # 3 seeds each, markdown on stdout
    python -m pufferlib.train.solve_table --seeds 1 --envs ocean/squared ocean/memory
    python -m pufferlib.train.solve_table --chart docs/solve_table.svg   # the chart (default solve_table.png)

Each run uses the env's default config (pufferlib/train/config/) with a time budget of
--max-seconds (60) and stops when solved. Seconds are wall-clock from the start of train() (env
construction included; torch's one-time lazy imports are paid before the first run) to the
update that reached the solved score; SPS is agent steps per second over the same time. The
table reports the median over seeds and how many seeds solved; its header records the machine,
versions and load, since throughput is not a library constant.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from typing import Any

DEFAULT_ENVS = (
    "ocean/bandit",
    "ocean/memory",
    "ocean/multiagent",
    "ocean/password",
    "ocean/spaces",
    "ocean/squared",
    "ocean/stochastic",
    "classic_control/CartPole-v1",
)


def machine() -> str:
    import numpy
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{cpu}, {os.cpu_count()} logical CPUs, load average {load}; Python {platform.python_version()}, "
        f"torch {torch.__version__}, numpy {numpy.__version__}; serial backend, train.torch_threads=1"
    )


def run(envs: list[str], seeds: list[int], max_seconds: float, extra: list[str]) -> list[dict[str, Any]]:
    from pufferlib.train import train

    rows = []
    for env in envs:
        runs = []
        for seed in seeds:
            overrides = ["--train.seed", str(seed), "--train.max-seconds", str(max_seconds), *extra]
            summary = train(env, overrides)
            runs.append(summary)
            print(
                f"{env} seed {seed}: {'solved' if summary['solved'] else 'NOT solved'} "
                f"in {summary['steps']:,} steps, {summary['seconds']:.1f}s, {summary['sps']:,.0f} SPS, "
                f"mean return {summary['mean_return']}",
                file=sys.stderr,
                flush=True,
            )
        rows.append(
            {
                "env": env,
                "solved_score": runs[0]["solved_score"],
                "steps": statistics.median(r["steps"] for r in runs),
                "seconds": statistics.median(r["seconds"] for r in runs),
                "max_seconds": max(r["seconds"] for r in runs),
                "sps": statistics.median(r["sps"] for r in runs),
                "mean_return": statistics.median(r["mean_return"] or 0.0 for r in runs),
                "solved": sum(r["solved"] for r in runs),
                "runs": len(runs),
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| env | solved at | steps | seconds (median, max) | SPS | mean return | solved |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['env']} | {r['solved_score']:g} | {r['steps']:,.0f} "
            f"| {r['seconds']:.1f}, {r['max_seconds']:.1f} | {r['sps']:,.0f} "
            f"| {r['mean_return']:.3f} | {r['solved']}/{r['runs']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pufferlib.train.solve_table", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--envs", nargs="+", default=list(DEFAULT_ENVS), help="bindings to train")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per env (1, 2, ...; default 3)")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="time budget per run (default 60)")
    parser.add_argument(
        "--chart", default="solve_table.png", help="the table as a chart, .png or .svg ('' for none)"
    )
    args, extra = parser.parse_known_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M")
    import torch

    # Process start-up, not training: the first optimizer imports torch._dynamo (2-5 s here),
    # which would otherwise be charged to whichever env runs first.
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    header = machine()
    rows = run(args.envs, list(range(1, args.seeds + 1)), args.max_seconds, extra)
    print(f"Solved table, {started}: {header}; load average at the end {os.getloadavg()[0]:.2f}.\n")
    print(markdown(rows))
    if args.chart:  # the chart beside the table (pufferlib/plot.py)
        from pufferlib.plot import solve_chart

        print(f"chart: {', '.join(solve_chart(rows, [args.chart]))}", file=sys.stderr)
    return 0 if all(r["solved"] == r["runs"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
