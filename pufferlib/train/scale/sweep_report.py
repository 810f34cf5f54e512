"""What a sweep found, cost-aware like Protein/CARBS: the trials as rows, the best config, the Pareto
front of score against wall-clock seconds (the best that solved within S seconds is one question to
it), results.csv, the plot (sweep.png) and the table `puffer sweep` prints.

A row is one trial: its searched keys ("train.learning_rate": ...), status (finished, stopped: early
by ASHA, by the budget or an interruption, failed), the metric, solved, seconds, steps, node, error
and path. Only finished trials compete: a stopped trial's score is a partial one.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Row = dict[str, Any]


@dataclass
class Report:
    """A sweep's trials (one row each), the best, the Pareto front and the files written."""

    folder: str
    env: str
    metric: str
    mode: str
    rows: list[Row]
    best: Row | None
    front: list[Row]
    best_within: Row | None
    within: float | None
    plot: str | None
    table: str
    unfinished: bool  # fewer trials than asked: interrupted (--resume continues) or out of budget
    signal: str | None = None  # the stop signal that ended it, if one did


def pareto_front(rows: list[Row], metric: str, mode: str) -> list[Row]:
    """The finished trials no other finished trial beats on both score and seconds, fastest first."""
    sign = 1 if mode == "max" else -1
    done = [
        r for r in rows if r["status"] == "finished" and r[metric] is not None and r["seconds"] is not None
    ]
    front = []
    for row in done:
        beaten = any(
            sign * other[metric] >= sign * row[metric]
            and other["seconds"] <= row["seconds"]
            and (sign * other[metric] > sign * row[metric] or other["seconds"] < row["seconds"])
            for other in done
        )
        if not beaten:
            front.append(row)
    return sorted(front, key=lambda row: row["seconds"])


def best_of(rows: list[Row], metric: str, mode: str, within: float | None = None) -> Row | None:
    """The best finished trial (ties: the faster); with `within`, among those that solved in that time."""
    done = [r for r in rows if r["status"] == "finished" and r[metric] is not None]
    if within is not None:
        done = [r for r in done if r["solved"] and r["seconds"] is not None and r["seconds"] <= within]
    if not done:
        return None
    sign = 1 if mode == "max" else -1
    return max(done, key=lambda r: (sign * r[metric], -(r["seconds"] or 0)))


def build(
    *,
    env: str,
    metric: str,
    mode: str,
    trials: int,
    params: Sequence[Any],
    rows: list[Row],
    folder: Path,
    within: float | None,
) -> Report:
    """The report of `rows`; writes results.csv and sweep.png into `folder`. `params` are the
    searched keys (sweep.Param: .key and .normalized(value), for the plot's axes)."""
    front = pareto_front(rows, metric, mode)
    table = folder / "results.csv"
    with open(table, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["trial"])
        writer.writeheader()
        writer.writerows(rows)
    plot = plot_sweep(env, metric, mode, params, rows, front, folder / "sweep.png") if rows else None
    return Report(
        folder=str(folder),
        env=env,
        metric=metric,
        mode=mode,
        rows=rows,
        best=best_of(rows, metric, mode),
        front=front,
        best_within=None if within is None else best_of(rows, metric, mode, within),
        within=within,
        plot=None if plot is None else str(plot),
        table=str(table),
        unfinished=len(rows) < trials,
    )


def plot_sweep(
    env: str, metric: str, mode: str, params: Sequence[Any], rows: list[Row], front: list[Row], path: Path
) -> Path:
    """sweep.png: the metric against seconds with the Pareto front (left), the trials in parallel
    coordinates over the searched keys and the metric, coloured by it (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (cost, coords) = plt.subplots(1, 2, figsize=(12, 4.5))
    for status, style in (("finished", {"c": "tab:blue"}), ("stopped", {"c": "0.6", "marker": "x"})):
        mine = [
            r for r in rows if r["status"] == status and r[metric] is not None and r["seconds"] is not None
        ]
        cost.scatter([r["seconds"] for r in mine], [r[metric] for r in mine], label=status, **style)
    if front:
        xs, ys = [r["seconds"] for r in front], [r[metric] for r in front]
        cost.plot(xs, ys, "-o", c="tab:red", drawstyle="steps-post", label="Pareto front")
    cost.set(xlabel="wall-clock seconds", ylabel=metric, title=f"{env}: {metric} vs cost")
    cost.legend()

    scored = [r for r in rows if r[metric] is not None]
    axes = [p.key for p in params] + [metric]
    if scored:
        low, high = min(r[metric] for r in scored), max(r[metric] for r in scored)
        for row in scored:
            ys = [p.normalized(row[p.key]) for p in params]
            ys.append((row[metric] - low) / (high - low) if high > low else 0.5)
            shade = ys[-1] if mode == "max" else 1 - ys[-1]
            coords.plot(range(len(axes)), ys, c=plt.cm.viridis(shade), alpha=0.8)
    coords.set_xticks(range(len(axes)), axes, rotation=15)
    coords.set(ylabel="position in range (log for log ranges)", title="trials (colour: score)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def print_report(report: Report) -> None:
    """The trials as a table, the failures, the best config, the Pareto front, where the files are."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 200, highlight=False, soft_wrap=True)
    metric = report.metric
    table = Table(title=f"sweep of {report.env}: {len(report.rows)} trials", title_justify="left")
    keys = [k for k in (report.rows[0] if report.rows else {}) if k not in ("path", "error")]
    for key in keys:
        table.add_column(key, justify="left" if key in ("trial", "status", "node") else "right")
    for row in report.rows:
        table.add_row(*(_cell(row[key]) for key in keys))
    console.print(table)
    for row in report.rows:
        if row["error"]:
            console.print(f"failed {row['trial']}: {row['error']}")
    if report.best:
        console.print(f"best: {_outcome(report.best, metric)}")
    front = ", ".join(f"{_cell(r['seconds'])} s -> {_cell(r[metric])} ({r['trial']})" for r in report.front)
    console.print(f"Pareto front (seconds -> {metric}): {front or '-'}")
    if report.within is not None:
        found = report.best_within
        console.print(
            f"best that solved within {report.within:g} s: {_outcome(found, metric) if found else 'none'}"
        )
    console.print(f"results: {report.table}  plot: {report.plot}  sweep: {report.folder}")
    if report.unfinished:
        console.print(f"unfinished: continue with puffer sweep {report.env} --resume --out {report.folder}")


def _outcome(row: Row, metric: str) -> str:
    """'--train.learning-rate 0.0027  (mean_return 0.93, 3.2 s, solved)': the config as flags."""
    flags = " ".join(f"--{k.replace('_', '-')} {_cell(v)}" for k, v in row.items() if "." in k)
    solved = "solved" if row["solved"] else "not solved"
    return f"{flags}  ({metric} {_cell(row[metric])}, {_cell(row['seconds'])} s, {solved})"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
