"""The "solved table": train Ocean, classic control, physics and game envs from scratch.

    python -m pufferlib.bench.solve_table                  # 3 seeds each, markdown on stdout
    python -m pufferlib.bench.solve_table --seeds 1 --envs ocean/squared ocean/memory
    python -m pufferlib.bench.solve_table --quick          # only the rows that take seconds
    python -m pufferlib.bench.solve_table --chart docs/solve_table.svg   # the chart (default solve_table.png)

Each run uses the env's default config (pufferlib/train/configs/) with a time budget (--max-seconds,
60 by default; the long rows have their own, LONG below) and stops when solved (a row of TARGETS is
judged on its own score). Seconds are
wall-clock from the start of train() (env construction included; torch's one-time lazy imports
are paid before the first run) to the update that reached the solved score; SPS is agent steps
per second over the same time. "Score" is what `solved` compares: the mean return of the last
100 episodes, or for self-play games the win rate against a uniformly random opponent. The table
reports the median over seeds and how many seeds solved; its header records the machine,
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

from pufferlib.provenance import cpu_model

QUICK = (
    "ocean/bandit",
    "ocean/continuous",
    "ocean/masked",
    "ocean/memory",
    "ocean/multiagent",
    "ocean/password",
    "ocean/spaces",
    "ocean/squared",
    "ocean/stochastic",
    "ocean/cartpole",
    "ocean/template",
    "classic_control/CartPole-v1",
    "bsuite/catch/0",
    "open_spiel/tic_tac_toe",
    "ocean/connect4",
    "mujoco/InvertedPendulum-v5",
)
# Rows that take minutes to an hour on 2 cores -> their time budget per run (seconds).
LONG = {
    "ocean/snake": 900.0,
    "classic_control/Pendulum-v1": 900.0,
    "box2d/LunarLander-v3": 3600.0,
    "box2d/LunarLanderContinuous-v3": 3600.0,
    "mujoco/HalfCheetah-v5": 5400.0,
}
# Rows judged on another score than the binding's own: HalfCheetah has no reward_threshold an MLP PPO
# reaches (gymnasium's 4800), so its row asks what textbook PPO does, a mean return of 1,500 within 1M steps.
TARGETS = {
    "mujoco/HalfCheetah-v5": ["--train.solve-score", "1500", "--train.total-timesteps", "1000000"],
}
DEFAULT_ENVS = (*QUICK, *LONG)


def machine() -> str:
    import numpy
    import torch

    cpu = cpu_model()
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
        budget = LONG.get(env, max_seconds)
        for seed in seeds:
            overrides = [
                "--train.seed",
                str(seed),
                "--train.max-seconds",
                str(budget),
                *TARGETS.get(env, []),
                *extra,
            ]
            summary = train(env, overrides)
            runs.append(summary)
            print(
                f"{env} seed {seed}: {'solved' if summary['solved'] else 'NOT solved'} "
                f"in {summary['steps']:,} steps, {summary['seconds']:.1f}s, {summary['sps']:,.0f} SPS, "
                f"score {summary['score']} ({summary['solve_metric']}), load {os.getloadavg()[0]:.2f}",
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
                "score": statistics.median(r["score"] or 0.0 for r in runs),
                "metric": runs[0]["solve_metric"],
                "solved": sum(r["solved"] for r in runs),
                "runs": len(runs),
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| env | solved at | steps | seconds (median, max) | SPS | score | solved |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        at = f"{r['solved_score']:g}" + (" win rate" if r["metric"] == "win_rate" else "")
        lines.append(
            f"| {r['env']} | {at} | {r['steps']:,.0f} "
            f"| {r['seconds']:.1f}, {r['max_seconds']:.1f} | {r['sps']:,.0f} "
            f"| {r['score']:.3f} | {r['solved']}/{r['runs']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pufferlib.bench.solve_table", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--envs", nargs="+", default=None, help="bindings to train (default: all rows)")
    parser.add_argument("--quick", action="store_true", help="only the rows that take seconds, not LONG")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per env (1, 2, ...; default 3)")
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=60.0,
        help="time budget per run (default 60; LONG rows: their own)",
    )
    parser.add_argument(
        "--chart", default="solve_table.png", help="the table as a chart, .png or .svg ('' for none)"
    )
    args, extra = parser.parse_known_args(argv)
    envs = args.envs or list(QUICK if args.quick else DEFAULT_ENVS)
    missing = _missing(envs)
    if missing:
        parser.error("not installed here: " + "; ".join(missing) + " (run in the image, or pass --envs)")
    started = time.strftime("%Y-%m-%d %H:%M")
    import torch

    # Process start-up, not training: the first optimizer imports torch._dynamo (2-5 s here),
    # which would otherwise be charged to whichever env runs first.
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    header = machine()
    rows = run(envs, list(range(1, args.seeds + 1)), args.max_seconds, extra)
    print(f"Solved table, {started}: {header}; load average at the end {os.getloadavg()[0]:.2f}.\n")
    print(markdown(rows))
    if args.chart:  # the chart beside the table (pufferlib/plot.py)
        from pufferlib.plot import solve_chart

        print(f"chart: {', '.join(solve_chart(rows, [args.chart]))}", file=sys.stderr)
    return 0 if all(r["solved"] == r["runs"] for r in rows) else 1


def _missing(names: list[str]) -> list[str]:
    """'name (install hint)' for each binding that is unknown or not installed."""
    import pufferlib.environments as environments

    out = []
    for name in names:
        try:
            binding = environments.get(name)
        except environments.UnknownEnvironmentError as e:
            out.append(str(e))
            continue
        if not binding.available():
            out.append(f"{name} ({binding.install_hint})")
    return out


if __name__ == "__main__":
    sys.exit(main())
