"""Pictures where people would rather look than read, drawn with matplotlib off-screen.

- `learning_curves(run_dirs, outs)`: `puffer plot`. Mean return against agent steps and against
  wall-clock seconds. Runs that share a config except the seed form a group: its mean and min-max
  band are drawn over the stretch of x every seed covers (a seed that solved early ends there;
  nothing is extrapolated), and each seed's own curve faintly in full.
- `score_curves(series, target, outs)`: score against wall-clock seconds, every run of each
  series in one colour, the target dashed (`puffer bench --pufferlib3 --to-score`).
- `bars(...)`: grouped bars, shared by the chart beside `puffer bench`'s table (`bench_chart`:
  throughput per backend per env cost) and `python -m pufferlib.bench.solve_table`'s
  (`solve_chart`: seconds to solve per env).

The format follows each output's suffix (.png or .svg). Figures are made with matplotlib's
object API (`Figure`), never pyplot, so importing this changes no backend in a notebook.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pufferlib.train.config import flatten, read_small
from pufferlib.train.run.rundir import metrics_lines

FORMATS = (".png", ".svg")
IGNORED_KEYS = {
    "train": ("seed", "run_dir", "checkpoint_interval", "checkpoint_minutes", "keep_checkpoints"),
    "track": None,
}  # None: the section


class PlotError(ValueError):
    """Nothing to draw, or an output this module cannot write; says which."""


@dataclass
class Run:
    path: Path
    env: str
    seed: int | None
    key: str  # the config without what does not change learning (seed, where it was saved, tracking)
    steps: np.ndarray
    seconds: np.ndarray
    returns: np.ndarray
    solved_score: float | None


def load_run(path: Path, warnings: list[str] | None = None) -> Run:
    """A run directory's curve (metrics.jsonl) and the config that made it (config.toml). A torn last
    line (what a killed run leaves: not JSON, and no newline after it) is skipped with a note in
    `warnings`; anything else unreadable is a PlotError naming the file."""
    points = []
    for n, text, ended in _lines(path / "metrics.jsonl"):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            if not ended and warnings is not None:  # torn: the last line, no newline yet
                warnings.append(f"{path}/metrics.jsonl: skipped the torn last line {n} ({text[:40]!r}...)")
                continue
            raise PlotError(f"{path}/metrics.jsonl line {n} is not JSON: {text[:80]!r}") from None
        if not isinstance(line, dict):
            raise PlotError(f"{path}/metrics.jsonl line {n} is not a record ({{...}}): {text[:80]!r}")
        if line.get("episodic_return") is not None:
            missing = [key for key in ("global_step", "time") if not isinstance(line.get(key), int | float)]
            if missing:
                raise PlotError(
                    f"{path}/metrics.jsonl line {n} has no numeric {' or '.join(missing)}: "
                    "is it a metrics.jsonl of `puffer train`?"
                )
            points.append((line["global_step"], line["time"], line["episodic_return"]))
    config: dict[str, Any] = {}
    if (path / "config.toml").is_file():
        try:
            config = tomllib.loads(_read(path / "config.toml"))
        except tomllib.TOMLDecodeError as e:
            raise PlotError(f"{path}/config.toml is not TOML ({e}): restore it or remove it") from None
    summary: Any = {}
    if (path / "summary.json").is_file():
        try:
            summary = json.loads(_read(path / "summary.json"))
        except ValueError as e:
            raise PlotError(f"{path}/summary.json is not JSON ({e}): restore it or remove it") from None
        if not isinstance(summary, dict):
            raise PlotError(f"{path}/summary.json is not a JSON object: restore it or remove it")
    env = config.pop("env_name", None) or summary.get("env") or path.parent.name
    seed = config.get("train", {}).get("seed")
    for section, keys in IGNORED_KEYS.items():
        if keys is None:
            config.pop(section, None)
        for key in keys or ():
            config.get(section, {}).pop(key, None)
    data = np.array(points, dtype=float).reshape(-1, 3)
    return Run(
        path=path,
        env=env,
        seed=seed,
        key=json.dumps({"env": env, **config}, sort_keys=True),
        steps=data[:, 0],
        seconds=data[:, 1],
        returns=data[:, 2],
        solved_score=summary.get("solved_score"),
    )


def _read(path: Path) -> str:
    """A run's config.toml or summary.json, read no further than a config can be long."""
    try:
        return read_small(path).decode("utf-8")
    except (OSError, ValueError) as e:
        raise PlotError(f"cannot read {path}: {e}") from None


def _lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    """metrics.jsonl streamed (rundir.metrics_lines), its errors as PlotError."""
    try:
        yield from metrics_lines(path)
    except (OSError, ValueError) as e:
        raise PlotError(f"cannot read {path}: {e}") from None


def group(runs: list[Run]) -> list[list[Run]]:
    """Runs that share a config except the seed, in the order they were first given."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(run.key, []).append(run)
    return list(groups.values())


def band(xs: list[np.ndarray], ys: list[np.ndarray], points: int = 200) -> tuple[np.ndarray, ...] | None:
    """(x, mean, min, max) over the x that every run covers, on a grid of `points` values; None when
    the runs share no stretch of x (each is then drawn alone)."""
    start, stop = max(x[0] for x in xs), min(x[-1] for x in xs)
    if stop <= start:
        return None
    grid = np.linspace(start, stop, points)
    values = np.array([np.interp(grid, x, y) for x, y in zip(xs, ys, strict=True)])
    return grid, values.mean(axis=0), values.min(axis=0), values.max(axis=0)


def _label(runs: list[Run], groups: list[list[Run]]) -> str:
    """The env, plus the settings that tell this group from others of the same env."""
    env = runs[0].env
    same_env = [g for g in groups if g[0].env == env]
    label = env
    if len(same_env) > 1:
        mine = flatten(json.loads(runs[0].key))
        others = [flatten(json.loads(g[0].key)) for g in same_env if g is not runs]
        differ = sorted(k for k in mine if any(o.get(k) != mine[k] for o in others))
        label += " (" + ", ".join(f"{k}={mine[k]}" for k in differ[:3]) + ")"
    seeds = len(runs)
    return f"{label}: mean and min-max of {seeds} seeds" if seeds > 1 else label


def _check_outputs(outs: Sequence[Path]) -> None:
    for out in outs:
        if Path(out).suffix.lower() not in FORMATS:
            raise PlotError(f"{out}: write .png or .svg")


def _save(fig: Any, outs: Sequence[Path]) -> list[str]:
    written = []
    for out in map(Path, outs):
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(out, dpi=150, bbox_inches="tight")
        except OSError as e:
            raise PlotError(f"cannot write {out}: {e.strerror or e}; choose another -o/--out") from None
        written.append(str(out))
    return written


def learning_curves(run_dirs: Sequence[Path], outs: Sequence[Path], title: str | None = None) -> dict:
    """Draw the runs' curves into each of `outs`; returns what was drawn (files, groups, runs) and
    the warnings (torn last lines skipped)."""
    from matplotlib.figure import Figure

    _check_outputs(outs)
    warnings: list[str] = []
    runs = [load_run(Path(p), warnings) for p in run_dirs]
    empty = [str(r.path) for r in runs if not len(r.returns)]
    runs = [r for r in runs if len(r.returns)]
    if not runs:
        raise PlotError(f"no episode has ended yet in {', '.join(empty)}: nothing to draw")
    groups = group(runs)
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    by_steps, by_time = fig.subplots(1, 2, sharey=True)
    drawn = []
    for runs_of_group, colour in zip(groups, _colours(len(groups)), strict=True):
        label = _label(runs_of_group, groups)
        for ax, attr in ((by_steps, "steps"), (by_time, "seconds")):
            xs = [getattr(r, attr) for r in runs_of_group]
            ys = [r.returns for r in runs_of_group]
            common = band(xs, ys) if len(runs_of_group) > 1 else None
            for x, y in zip(xs, ys, strict=True):  # every seed in full, faint when a mean is drawn over it
                alone = common is None
                ax.plot(x, y, color=colour, alpha=1.0 if alone else 0.35, linewidth=1.5 if alone else 0.8)
            if common is not None:
                x, mean, low, high = common
                ax.plot(x, mean, color=colour, linewidth=2)
                ax.fill_between(x, low, high, color=colour, alpha=0.25, linewidth=0)
            ax.plot([], [], color=colour, linewidth=2, label=label)  # one legend entry per group
        finals = [float(r.returns[-1]) for r in runs_of_group]
        drawn.append(
            {
                "label": label,
                "env": runs_of_group[0].env,
                "runs": [str(r.path) for r in runs_of_group],
                "seeds": [r.seed for r in runs_of_group],
                "final_return": {"mean": float(np.mean(finals)), "min": min(finals), "max": max(finals)},
            }
        )
    scores = {r.solved_score for r in runs if r.solved_score is not None}
    for ax in (by_steps, by_time):
        for score in scores:
            ax.axhline(score, color="grey", linestyle="--", linewidth=1)
        ax.grid(alpha=0.3)
    by_steps.set_xlabel("agent steps")
    by_time.set_xlabel("wall-clock seconds (from the start of train())")
    by_steps.set_ylabel("mean episode return")
    by_steps.legend(loc="lower right", fontsize="small")
    envs = sorted({r.env for r in runs})
    fig.suptitle(title or f"Learning curves: {', '.join(envs)}" + (" (dashed: solved)" if scores else ""))
    return {"files": _save(fig, outs), "groups": drawn, "skipped": empty, "warnings": warnings}


def score_curves(
    series: dict[str, list[list[tuple[float, float]]]], target: float, outs: Sequence[Path], title: str
) -> list[str]:
    """Each series' runs, (wall seconds, score) points, in one colour and one legend entry; the target
    as a dashed line."""
    from matplotlib.figure import Figure

    _check_outputs(outs)
    if not any(series.values()):
        raise PlotError("no run logged a score: nothing to draw")
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.subplots()
    for (label, runs), colour in zip(series.items(), _colours(len(series)), strict=True):
        for points in runs:
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, ys, color=colour, linewidth=1.2, alpha=0.8)
        ax.plot([], [], color=colour, linewidth=2, label=f"{label} ({len(runs)} runs)")
    ax.axhline(target, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("wall-clock seconds")
    ax.set_ylabel("score")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    fig.suptitle(title)
    return _save(fig, outs)


def _colours(n: int) -> list[str]:
    cycle = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    return [cycle[i % len(cycle)] for i in range(n)]


def bars(
    outs: Sequence[Path],
    categories: list[str],
    series: dict[str, list[float | None]],
    ylabel: str,
    title: str,
    log: bool = False,
    errors: dict[str, list[tuple[float, float] | None]] | None = None,
    value_format: str | None = None,
) -> list[str]:
    """Grouped vertical bars: one group per category, one bar per series (None: no bar). `errors`
    gives (low, high) whiskers per bar; `value_format` prints each bar's value on it ("{:.1f}")."""
    from matplotlib.figure import Figure

    _check_outputs(outs)
    if not categories or not series:
        raise PlotError("no data to chart")
    fig = Figure(figsize=(max(8.0, 0.9 * len(categories) * max(1, len(series)) ** 0.5 + 2), 4.5))
    ax = fig.subplots()
    width = 0.8 / len(series)
    x = np.arange(len(categories))
    for i, ((name, values), colour) in enumerate(zip(series.items(), _colours(len(series)), strict=True)):
        heights = np.array([np.nan if v is None else v for v in values], dtype=float)
        spans = (errors or {}).get(name)
        yerr = None
        if spans:
            yerr = np.array(
                [
                    (h - s[0], s[1] - h) if s and not np.isnan(h) else (0.0, 0.0)
                    for h, s in zip(heights, spans, strict=True)
                ]
            ).T
        drawn = ax.bar(
            x + (i - (len(series) - 1) / 2) * width, heights, width, label=name, color=colour, yerr=yerr
        )
        if value_format:
            labels = ["" if np.isnan(h) else value_format.format(h) for h in heights]
            ax.bar_label(drawn, labels=labels, padding=2)
    ax.set_xticks(x, categories, rotation=30, ha="right", fontsize="small")
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize="small")
    fig.set_layout_engine("constrained")
    return _save(fig, outs)


def bench_chart(results: list[dict], peers: list[str], outs: Sequence[Path]) -> list[str]:
    """`puffer bench`'s table as bars: agent steps/s of each peer at its best, per workload and env count."""
    from pufferlib.bench.peers import PEER_TITLES
    from pufferlib.bench.report import cells, row_keys

    grid = cells(results, peers)
    keys = [(name, n) for name, _, n in row_keys(results)]
    series = {PEER_TITLES[p]: [grid[k][p].median for k in keys] for p in peers}
    series = {name: values for name, values in series.items() if any(v for v in values)}
    return bars(
        outs,
        [f"{name}, {n} envs" for name, n in keys],
        series,
        "agent steps / s (median of repeats)",
        "Vector throughput per backend and env cost (each at its best configuration)",
        log=True,
    )


def solve_chart(rows: list[dict], outs: Sequence[Path]) -> list[str]:
    """The solved table as bars: median seconds to solve per env, whiskers to the slowest seed."""
    labels = [f"{r['env']} ({r['solved']}/{r['runs']})" for r in rows]
    seconds = [r["seconds"] for r in rows]
    spans = [(r["seconds"], r["max_seconds"]) for r in rows]
    return bars(
        outs,
        labels,
        {"seconds": seconds},
        "seconds to solve (median; whisker: slowest seed)",
        "Time to solve from scratch, default config (seeds solved in brackets)",
        errors={"seconds": spans},
        value_format="{:.1f} s",
    )
