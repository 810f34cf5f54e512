"""The live terminal dashboard of `puffer train` (rich), and the final summary.

`Dashboard` is a context manager whose `update(progress)` is the trainer's on_update callback.
It redraws at most a few times a second, so it costs nothing next to training.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

PATHS = ("checkpoint",)
LOSSES = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def time_left(p: dict[str, Any]) -> float | None:
    """Whichever budget ends first: steps at the current SPS, or max_seconds."""
    left = []
    if p["sps"] > 0:
        left.append((p["total_timesteps"] - p["steps"]) / p["sps"])
    if p["max_seconds"]:
        left.append(p["max_seconds"] - p["elapsed"])
    return min(left) if left else None


def render(p: dict[str, Any]) -> Group:
    title = Text.assemble(("PufferLib ", "bold magenta"), (p["env"], "bold"), f"  on {p['device']}")
    head = Table.grid(padding=(0, 2))
    for _ in range(4):
        head.add_column()
    solved = p["solved_score"]
    goal = f"solved at {solved:g}" if solved is not None else "no solved score"
    reached = Text("SOLVED", style="bold green") if p["solved"] else Text(goal, style="dim")
    head.add_row("steps", f"{_fmt(p['steps'])} / {_fmt(p['total_timesteps'])}", "SPS", _fmt(int(p["sps"])))
    head.add_row("elapsed", _duration(p["elapsed"]), "left", _duration(time_left(p)))
    head.add_row("episodes", _fmt(p["episodes"]), "update", _fmt(p["update"]))
    judged = p.get("solve_metric") == "win_rate"  # self-play: the score is a win rate (versus.py)
    head.add_row("return", _fmt(p["mean_return"]), "", "" if judged else reached)
    if judged:
        head.add_row("win rate", _fmt(p["score"]), "", reached)
    head.add_row("length", _fmt(p["mean_length"], 1), "", "")

    losses = Table(title="losses", title_justify="left", show_header=False, box=None, padding=(0, 2))
    losses.add_column()
    losses.add_column(justify="right")
    for name in LOSSES:
        if name in p["losses"]:
            losses.add_row(name, _fmt(p["losses"][name], 4))
    parts = [title, head, losses]
    if p["env_stats"]:
        stats = Table(title="env", title_justify="left", show_header=False, box=None, padding=(0, 2))
        stats.add_column()
        stats.add_column(justify="right")
        for name, value in sorted(p["env_stats"].items()):
            stats.add_row(name, _fmt(value, 4))
        parts.append(stats)
    return Group(*parts)


class Dashboard:
    """Redraws the training progress in place (a TTY only; construct it only when one is attached)."""

    def __init__(self, console: Console | None = None, refresh_seconds: float = 0.25) -> None:
        self.console = console or Console()
        self.refresh_seconds = refresh_seconds
        self.live: Live | None = None
        self._last = 0.0
        self._pending: dict[str, Any] | None = None

    def __enter__(self) -> Dashboard:
        self.live = Live(Text("starting..."), console=self.console, auto_refresh=False, transient=False)
        self.live.__enter__()
        return self

    def update(self, progress: dict[str, Any]) -> None:
        self._pending = progress
        now = time.monotonic()
        if self.live is not None and now - self._last >= self.refresh_seconds:
            self.live.update(render(progress), refresh=True)
            self._last = now

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            if self._pending is not None:
                self.live.update(render(self._pending), refresh=True)
            self.live.__exit__(*exc)
            self.live = None


def summary_table(summary: dict[str, Any], title: str = "summary") -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for key, value in summary.items():
        if key not in PATHS:
            table.add_row(key, _plain(value))
    return table


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return _fmt(value)


def print_summary(summary: dict[str, Any], title: str = "summary", console: Console | None = None) -> None:
    console = console or Console()
    console.print(summary_table(summary, title))
    for key in PATHS:  # on their own lines, unwrapped, so that they can be copied
        if summary.get(key):
            console.print(f"  {key}  {summary[key]}", soft_wrap=True, highlight=False)
