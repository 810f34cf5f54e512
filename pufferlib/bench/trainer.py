"""`puffer train` beside textbook PPO (pufferlib/bench/ppo_peer.py) at CleanRL's CartPole settings.

    python -m pufferlib.bench.trainer                          # 5 seeds, 150k steps each (~6 min quiet)
    python -m pufferlib.bench.trainer --seeds 1 --steps 20000  # a quick try
    python -m pufferlib.bench.trainer --set policy.separate_critic=false   # ours with an override

Both run CleanRL's ppo.py defaults on CartPole-v1: 4 envs x 128 steps, lr 2.5e-4 annealed over
--steps, CleanRL's network (separate 64-wide tanh MLPs for actor and critic), 4 epochs of 4
minibatches, GAE 0.99/0.95, clip 0.2, entropy 0.01; rollout and update on the CPU with one torch
thread. Ours is `puffer train classic_control/CartPole-v1` with those values as overrides
(everything else from its config) on the Serial backend; the peer is a single-file loop over
gymnasium's SyncVectorEnv. `--set policy.separate_critic=false --set policy.activation=gelu` runs
ours with its default policy (one shared trunk), which learns far slower at this learning rate.
Each run is a fresh process; the two alternate within a seed (which one goes first alternates too)
so that a change of machine load hits both.

Reported per trainer: steps per second (steps / seconds from the start of training, env
construction included, interpreter start and imports not; median over seeds and the spread) and
the mean return of the last --window episodes at each --marks step (the last update at or before
it; mean over seeds, with the worst and best seed). Our steps count the reset step after each
episode (an emulated env resets on the send after a done), about 1% of the steps here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any

from pufferlib.provenance import cpu_model

ENV = "classic_control/CartPole-v1"
CLEANRL = {  # CleanRL's ppo.py defaults, as overrides of our config
    "vec.backend": "serial",
    "vec.num_envs": 4,
    "train.num_steps": 128,
    "train.learning_rate": 2.5e-4,
    "train.anneal_lr": True,
    "train.gamma": 0.99,
    "train.gae_lambda": 0.95,
    "train.num_minibatches": 4,
    "train.update_epochs": 4,
    "train.norm_adv": True,
    "train.clip_coef": 0.2,
    "train.clip_vloss": True,
    "train.ent_coef": 0.01,
    "train.vf_coef": 0.5,
    "train.max_grad_norm": 0.5,
    "train.target_kl": 0.0,
    "policy.hidden_size": 64,
    "policy.separate_critic": True,  # CleanRL's agent: actor and critic each have their own MLP
    "policy.activation": "tanh",
    "train.device": "cpu",
    "train.torch_threads": 1,
}
TITLES = {"peer": "textbook PPO (gymnasium SyncVectorEnv)", "ours": "puffer train (Serial)"}


def _warm_torch() -> None:
    """torch's one-time lazy imports (the first optimizer imports torch._dynamo, seconds here), so
    that neither trainer is charged for them."""
    import torch

    torch.set_num_threads(1)
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])


def run_ours(seed: int, steps: int, window: int, extra: dict[str, Any]) -> dict[str, Any]:
    from pufferlib.train import train

    curve: list[tuple[int, float]] = []

    def hook(progress: dict[str, Any]) -> None:
        if progress["mean_return"] is not None:
            curve.append((progress["steps"], progress["mean_return"]))

    overrides = {
        **CLEANRL,
        "train.seed": seed,
        "train.total_timesteps": steps,
        "train.stop_when_solved": False,
        "train.solve_window": window,
        "train.run_dir": "",
        **extra,
    }
    summary = train(ENV, overrides, on_update=hook)
    return {"steps": summary["steps"], "seconds": summary["seconds"], "sps": summary["sps"], "curve": curve}


def run_peer(seed: int, steps: int, window: int) -> dict[str, Any]:
    from pufferlib.bench import ppo_peer

    return ppo_peer.train(seed, steps, window)


def child(args: argparse.Namespace) -> int:
    """One run in this fresh process; prints its JSON line."""
    _warm_torch()
    if args.run == "ours":
        out = run_ours(args.seed_one, args.steps, args.window, parse_sets(args.set))
    else:
        out = run_peer(args.seed_one, args.steps, args.window)
    print(json.dumps(out))
    return 0


def parse_sets(items: list[str]) -> dict[str, Any]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set {item!r}: expected KEY=VALUE, e.g. policy.separate_critic=false")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def at_mark(curve: list, mark: int) -> float | None:
    """The mean return of the last update at or before `mark` steps; None when the run stopped
    more than one update short of `mark` (a shorter run says nothing about it)."""
    before = [(step, value) for step, value in curve if step <= mark]
    if not before:
        return None
    spacing = curve[-1][0] - curve[-2][0] if len(curve) > 1 else curve[-1][0]
    if len(before) == len(curve) and mark - curve[-1][0] >= spacing:
        return None
    return before[-1][1]


def machine() -> dict[str, Any]:
    import gymnasium
    import numpy
    import torch

    cpu = cpu_model()
    return {
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "numpy": numpy.__version__,
            "gymnasium": gymnasium.__version__,
        },
        "load_average_start": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def report(results: dict[str, list[dict]], marks: list[int], info: dict[str, Any]) -> str:
    load = lambda key: ", ".join(f"{x:.2f}" for x in info[key])  # noqa: E731
    lines = [
        f"Command: `{info['command']}` ({info['date']})",
        "",
        f"Machine: {info['cpu']}, {info['logical_cpus']} logical CPUs; "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
        + f". Load average at start {load('load_average_start')}, at end {load('load_average_end')}.",
        "",
        "| trainer | steps/s (median ± half range) | "
        + " | ".join(f"mean return at {m // 1000}k (mean; worst, best seed)" for m in marks)
        + " |",
        "|---|---:|" + "---:|" * len(marks),
    ]
    medians = {}
    for who, runs in results.items():
        sps = [r["sps"] for r in runs]
        medians[who] = med = statistics.median(sps)
        cells = [f"{med:,.0f} ± {(max(sps) - min(sps)) / 2 / med * 100:.0f}%"]
        for m in marks:
            got = [v for v in (at_mark(r["curve"], m) for r in runs) if v is not None]
            cells.append(f"{statistics.mean(got):.1f}; {min(got):.1f}, {max(got):.1f}" if got else "-")
        lines.append(f"| {TITLES[who]} | " + " | ".join(cells) + " |")
    if "ours" in medians and "peer" in medians:
        lines.append("")
        lines.append(
            f"Steps/s, ours / textbook: {medians['ours'] / medians['peer']:.2f}x (medians over seeds)."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pufferlib.bench.trainer", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    parser.add_argument("--steps", type=int, default=150_000, help="steps per run (default 150000)")
    parser.add_argument("--marks", default="60000,150000", help="steps at which to report the mean return")
    parser.add_argument("--window", type=int, default=20, help="episodes in each mean return (default 20)")
    parser.add_argument("--only", choices=("ours", "peer"), help="run one trainer only")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="an override of ours")
    parser.add_argument("--json", help="write every run and the table to this JSON file")
    parser.add_argument("--markdown", help="write the table to this Markdown file")
    parser.add_argument("--run", choices=("ours", "peer"), help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--seed-one", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        return child(args)
    marks = [int(m) for m in args.marks.split(",") if m]
    parse_sets(args.set)  # fail early on a bad --set
    info = machine()
    info["command"] = "python -m pufferlib.bench.trainer " + " ".join(sys.argv[1:] if argv is None else argv)
    who = [args.only] if args.only else ["peer", "ours"]
    results: dict[str, list[dict]] = {w: [] for w in who}
    for seed in range(1, args.seeds + 1):
        for w in who if seed % 2 else who[::-1]:
            cmd = [sys.executable, "-m", "pufferlib.bench.trainer", "--run", w, "--seed-one", str(seed)]
            cmd += ["--steps", str(args.steps), "--window", str(args.window)]
            cmd += [f"--set={s}" for s in args.set] if w == "ours" else []
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode:
                print(out.stderr, file=sys.stderr)
                raise SystemExit(f"{w} seed {seed} failed (exit {out.returncode})")
            run = json.loads(out.stdout.strip().splitlines()[-1])
            run["seed"] = seed
            results[w].append(run)
            shown = ", ".join(f"{m // 1000}k: {at_mark(run['curve'], m)}" for m in marks)
            print(
                f"{w} seed {seed}: {run['sps']:,.0f} steps/s, mean return {shown}",
                file=sys.stderr,
                flush=True,
            )
    info["load_average_end"] = os.getloadavg()
    text = report(results, marks, info)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "results": results, "table": text}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
