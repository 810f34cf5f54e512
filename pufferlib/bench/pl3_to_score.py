"""`puffer bench --pufferlib3 --to-score`: wall time to a fixed score, ours beside PufferLib 3.0's.

    puffer bench --pufferlib3 --to-score --target 195 --train-envs cartpole --train-seconds 60 --plot ts.png

For each env, each of --repeats seeds (default 3) trains three configurations for up to --train-seconds
each, the configurations rotating which goes first from seed to seed:

- `ours`: `puffer train ocean/NAME`, its own toml (`--train.seed S`, not stopping when solved);
- `pl3`: PufferLib 3.0's `puffer train puffer_NAME` at its shipped .ini (an LSTM on cartpole and
  breakout), `train.seed = S`;
- `pl3-mlp`: the same with `rnn_name = None` (its default.ini's network: no LSTM; on snake also its MLP
  policy, PL3_MLP_CHANGES).

Each run's curve is (wall seconds, score) at every log it wrote: ours the mean return over the last
train.solve_window episodes (metrics.jsonl, seconds from the start of train()), PufferLib 3.0's the
episode score of each log line (pl3_dashboard.curve, its trainer's uptime; its episode return where
its `score` means another thing, PL3_SCORE_KEYS). A run's time to score is
the first point at or above --target; the median per configuration counts a run that never got there
as slower than every run that did, so a median of 3 exists only when 2 of 3 reached it. The bench
prints every configuration it ran, the table and, with --plot, draws every curve in one figure.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pufferlib.bench import pl3_dashboard, pufferlib3, report

SIDES = ("ours", "pl3", "pl3-mlp")
LABELS = {
    "ours": "ours, own config",
    "pl3": "PufferLib 3.0, shipped config",
    "pl3-mlp": "PufferLib 3.0, rnn_name = None",
}

Point = tuple[float, float]  # (wall seconds, score)
# The log keys PufferLib 3.0's curve reads where its `score` is not what ours reads (the episode return):
# its snake logs a snake's length as `score`, while its episode return counts the rewards ours does
# (0.1 a food or corpse, -1 a death).
PL3_SCORE_KEYS = {"snake": pl3_dashboard.RETURN_KEYS}
# What its `rnn_name = None` variant sets beside it where the .ini's policy needs the LSTM: its snake
# policy (Snake) has no forward_eval outside the LSTM wrapper; snake.ini's commented-out line
# `policy_name = Policy` names its MLP.
PL3_MLP_CHANGES: dict[str, dict[str, Any]] = {"snake": {"policy_name": "Policy"}}


def first_reach(curve: Sequence[Point], target: float) -> float | None:
    """The first wall time at which the curve's score is at or above `target`; None if it never is."""
    for seconds, score in curve:
        if score is not None and score >= target:
            return float(seconds)
    return None


def median_time(times: Sequence[float | None]) -> float | None:
    """The median time to score, a run that never reached it (None) counting as slower than any that
    did; None when the median itself falls on such a run (or there are no runs)."""
    if not times:
        return None
    ordered = sorted(times, key=lambda t: (t is None, t or 0.0))
    n = len(ordered)
    middle = ordered[(n - 1) // 2 : n // 2 + 1]
    if any(t is None for t in middle):
        return None
    return sum(middle) / len(middle)  # type: ignore[arg-type]


def curve_of(row: dict[str, Any]) -> list[Point]:
    """(seconds, score) of a train row's curve (train_ours and train_pl3 give (steps, seconds, score))."""
    return [(float(seconds), float(score)) for _steps, seconds, score in row.get("curve") or ()]


def seed_changes(side: str, seed: int | str, name: str = "") -> dict[str, Any]:
    """PufferLib 3.0's config changes for one run of env `name` (pl3_driver.apply)."""
    changes: dict[str, Any] = {"train.seed": seed}
    if side == "pl3-mlp":
        changes["rnn_name"] = None
        changes.update(PL3_MLP_CHANGES.get(name, {}))
    return changes


def commands(name: str, seconds: float, threads: int = 0) -> dict[str, str]:
    """Each configuration's command line (S: the seed), as the bench prints it before the runs."""
    pl3 = f"puffer train puffer_{name} {' '.join(pufferlib3.PL3_TRAIN_ARGS)}, stopped at {seconds:g} s"
    pl3 += f"; torch.set_num_threads({threads})" if threads else ""
    read = f"; its curve reads {' or '.join(PL3_SCORE_KEYS[name])}" if name in PL3_SCORE_KEYS else ""
    return {
        "ours": f"puffer train ocean/{pufferlib3.RAW[name].ours} --train.device cpu --train.max_seconds "
        f"{seconds:g} --train.stop_when_solved false --train.seed S{_threads(threads)}",
        **{side: f"{pl3}, then set {_shown_changes(side, name)}{read}" for side in ("pl3", "pl3-mlp")},
    }


def _shown_changes(side: str, name: str) -> str:
    return ", ".join(f"{key}={value}" for key, value in seed_changes(side, "S", name).items())


def _threads(threads: int) -> str:
    return f" --train.torch_threads {threads}" if threads else ""


def rotate(seed_index: int, sides: Sequence[str] = SIDES) -> tuple[str, ...]:
    """The sides in the order a seed runs them: each goes first on one seed in len(sides)."""
    k = seed_index % len(sides)
    return tuple(sides[k:]) + tuple(sides[:k])


def rows(
    python: Path,
    names: list[str],
    seeds: int,
    seconds: float,
    target: float,
    threads: int = 0,
    keep: Path | None = None,
) -> list[dict[str, Any]]:
    """Per seed, per env, one run of each side (rotating order): its curve and time to `target`;
    `threads`: torch threads on every side (0: each its own); `keep`: each run's logs go to
    keep/SIDE-NAME-SEED."""
    out = []
    for index in range(seeds):
        seed = index + 1
        for name in names:
            for side in rotate(index):
                row: dict[str, Any] = {"repeat": index, "seed": seed, "env": name, "side": side}
                saved = keep / f"{side}-{name}-{seed}" if keep else None
                missing = pufferlib3.native_missing(pufferlib3.RAW[name].ours) if side == "ours" else None
                if missing:
                    row["skip"] = missing
                elif side == "ours":
                    overrides = ["--train.seed", str(seed), *_threads(threads).split()]
                    row = pufferlib3._sample(
                        row,
                        lambda n=name, o=overrides, d=saved: pufferlib3.train_ours(
                            f"ocean/{pufferlib3.RAW[n].ours}", seconds, d, o
                        ),
                    )
                else:
                    changes = seed_changes(side, seed, name)
                    row = pufferlib3._sample(
                        row,
                        lambda n=name, c=changes, d=saved: pufferlib3.train_pl3(
                            python, n, seconds, d, c, threads, PL3_SCORE_KEYS.get(n, pl3_dashboard.SCORE_KEYS)
                        ),
                    )
                if "curve" in row:
                    row["time_to_score"] = first_reach(curve_of(row), target)
                out.append(row)
                print(
                    f"[seed {seed}] to-score {name:<9} {side:<7} {_shown(row)}", file=sys.stderr, flush=True
                )
    return out


def _shown(row: dict[str, Any]) -> str:
    if "curve" not in row:
        return row.get("skip") or row.get("error") or "nothing"
    reached = row["time_to_score"]
    when = f"reached at {reached:.1f} s" if reached is not None else "not reached"
    return f"{when}; score {row['score'] or 0:.1f} after {row['seconds']:.0f} s, {row['steps']:,} steps"


def table(results: list[dict[str, Any]], target: float) -> str:
    """Per env and side: median time to score, how many seeds reached it, each seed's time."""
    head = ["env", "configuration", "median s to score", "reached", "each seed (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for env in dict.fromkeys(r["env"] for r in results):
        for side in SIDES:
            runs = [r for r in results if r["env"] == env and r["side"] == side and "curve" in r]
            if not runs:
                continue
            times = [r["time_to_score"] for r in runs]
            median = median_time(times)
            each = ", ".join("-" if t is None else f"{t:.1f}" for t in times)
            reached = sum(t is not None for t in times)
            shown = f"{median:.1f}" if median is not None else f"not reached ({target:g})"
            lines.append(f"| {env} | {LABELS[side]} | {shown} | {reached}/{len(runs)} | {each} |")
    return "\n".join(lines)


def draw(results: list[dict[str, Any]], target: float, out: Path) -> list[str]:
    """Every run's curve (wall seconds vs score) in one figure, one colour per configuration."""
    from pufferlib import plot

    series: dict[str, list[list[Point]]] = {}
    for r in results:
        if r.get("curve"):
            series.setdefault(f"{r['env']}: {LABELS[r['side']]}", []).append(curve_of(r))
    return plot.score_curves(series, target, [out], f"Time to score {target:g}, each seed's curve")


def check(args: Any) -> list[str]:
    """The env names, or ValueError naming the flag that cannot be used."""
    if args.target is None:
        raise ValueError("--to-score needs --target SCORE (e.g. --target 195 for cartpole)")
    pufferlib3.check_training(args, "--to-score")
    from pufferlib.plot import FORMATS

    if args.plot and Path(args.plot).suffix.lower() not in FORMATS:
        raise ValueError(f"--plot {args.plot}: write a .png or .svg file")
    names = pufferlib3._check(args.train_envs, list(pufferlib3.RAW), "--to-score --train-envs")
    if not names:
        raise ValueError(f"--to-score: no env given; --train-envs takes {', '.join(pufferlib3.RAW)}")
    return names


def run(args: Any, machine: Any) -> int:
    """`puffer bench --pufferlib3 --to-score` once the CLI has parsed it."""
    try:
        names = check(args)
        python = pufferlib3.asked_python(args)
    except (ValueError, pufferlib3.PeerMissing) as e:
        print(f"puffer bench: {e}", file=sys.stderr)
        return 2
    info = pufferlib3.run_info(args, machine, python)
    configurations = []
    for name in names:
        for side, line in commands(name, args.train_seconds, args.torch_threads).items():
            configurations.append(f"{name} {LABELS[side]}: {line}")
    print("\n".join(configurations), file=sys.stderr)
    keep = Path(args.keep) if args.keep else None
    results = rows(python, names, args.repeats, args.train_seconds, args.target, args.torch_threads, keep)
    info["load_average_end"] = os.getloadavg()
    text = report.machine_lines(info) + "\n"
    text += (
        f"Wall time to a score of {args.target:g}, each run up to {args.train_seconds:g} s, "
        f"{args.repeats} seeds per configuration:\n\n{table(results, args.target)}\n\n"
        "Configurations run:\n\n" + "\n".join(f"- {line}" for line in configurations) + "\n"
    )
    print(text)
    if args.plot:
        from pufferlib.plot import PlotError

        try:
            print("plot: " + ", ".join(draw(results, args.target, Path(args.plot))))
        except PlotError as e:
            print(f"plot: {e}", file=sys.stderr)
    args.document = {
        "machine": info,
        "target": args.target,
        "runs": results,
        "table": table(results, args.target),
    }
    if args.json_file:
        with open(args.json_file, "w") as f:
            json.dump(args.document, f, indent=1, default=str)
    if args.markdown:
        Path(args.markdown).write_text(text)
    errors = list(dict.fromkeys(r["error"] for r in results if "error" in r))
    for line in errors:
        print(f"error: {line}", file=sys.stderr)
    return 1 if errors else 0
