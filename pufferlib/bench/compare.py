"""Compare training throughput of config variants side by side, interleaved, median of repeats.

    python -m pufferlib.bench.compare classic_control/CartPole-v1 \\
        '{"train.torch_threads": 1}' '{"train.torch_threads": 2}' \\
        '{"vec.backend": "multiprocessing", "vec.num_workers": 2}'

Each variant (a JSON dict of overrides) trains `--steps` agent steps without stopping when solved;
the variants run in turn, `--repeats` times, so that a change in machine load hits them alike.
Prints the median SPS of each with all samples (SPS from the start of train(), setup included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pufferlib.bench.compare", description=__doc__.split("\n")[0]
    )
    parser.add_argument("env")
    parser.add_argument("variants", nargs="+", help="JSON overrides, e.g. '{\"vec.num_envs\": 8}'")
    parser.add_argument("--steps", type=int, default=40_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        variants = [json.loads(v) for v in args.variants]
    except json.JSONDecodeError as e:
        parser.error(f"each variant must be a JSON object of overrides: {e}")

    import torch

    from pufferlib.train import train

    torch.optim.Adam([torch.zeros(1, requires_grad=True)])  # torch's lazy imports, before timing
    samples: list[list[float]] = [[] for _ in variants]
    for _ in range(args.repeats):
        for i, variant in enumerate(variants):
            overrides = {"train.total_timesteps": args.steps, "train.stop_when_solved": False, **variant}
            samples[i].append(train(args.env, overrides)["sps"])
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.env}, {args.steps:,} steps, {args.repeats} repeats, load average now {load}")
    for variant, sps in zip(variants, samples, strict=True):
        runs = ", ".join(f"{x:,.0f}" for x in sps)
        print(f"  {json.dumps(variant)}: median {statistics.median(sps):,.0f} SPS ({runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
