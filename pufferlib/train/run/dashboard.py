"""What `puffer train` shows while it runs: the live dashboard (rich) on a terminal, one plain
progress line per interval elsewhere (nohup, `docker logs`, a batch job), and the final summary.

`Dashboard` is a context manager whose `update(progress)` is a trainer hook; it redraws at most a
few times a second, so it costs nothing next to training. `ProgressLines` is the same hook for
logs. Two SPS figures, named for what they measure: "SPS (update)" is the latest update's agent
steps over its own time; "SPS (run)" is all steps over all the time since train() began (setup
included), which is what the summary's `sps` is.
"""

from __future__ import annotations

import collections
import sys
import time
from typing import Any, TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

PATHS = ("checkpoint", "run_dir")
SUMMARY_LABELS = {"sps": "sps (whole run)", "seconds": "seconds (whole run)"}
LOSSES = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance")
BLOCKS = "▁▂▃▄▅▆▇█"


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


def run_sps(p: dict[str, Any]) -> float:
    """Agent steps per second over the whole run so far (setup included)."""
    return p["steps"] / p["elapsed"] if p["elapsed"] > 0 else 0.0


def budget_used(p: dict[str, Any]) -> float:
    """The fraction of the nearer budget (steps, or max_seconds) used so far, 0..1."""
    used = p["steps"] / p["total_timesteps"] if p["total_timesteps"] else 0.0
    if p["max_seconds"]:
        used = max(used, p["elapsed"] / p["max_seconds"])
    return min(1.0, used)


def sparkline(values: list[float], width: int = 48) -> str:
    """The last `width` values as block characters, lowest to highest (a flat series is mid-height)."""
    values = values[-width:]
    if not values:
        return ""
    low, high = min(values), max(values)
    if high - low < 1e-12:
        return BLOCKS[len(BLOCKS) // 2] * len(values)
    scale = (len(BLOCKS) - 1) / (high - low)
    return "".join(BLOCKS[round((v - low) * scale)] for v in values)


def time_left(p: dict[str, Any]) -> float | None:
    """Whichever budget ends first: steps at the current SPS, or max_seconds."""
    left = []
    if p["sps"] > 0:
        left.append((p["total_timesteps"] - p["steps"]) / p["sps"])
    if p["max_seconds"]:
        left.append(p["max_seconds"] - p["elapsed"])
    return min(left) if left else None


def render(p: dict[str, Any], returns: list[float] | None = None) -> Group:
    """The dashboard for progress `p`; `returns` is the history of the mean return (sparkline)."""
    title = Text.assemble(("PufferLib ", "bold magenta"), (p["env"], "bold"), f"  on {p['device']}")
    used = budget_used(p)
    bar = Table.grid(padding=(0, 1))
    bar.add_row(ProgressBar(total=1.0, completed=used, width=40), f"{used:.0%} of budget")
    head = Table.grid(padding=(0, 2))
    for _ in range(4):
        head.add_column()
    solved = p["solved_score"]
    goal = f"solved at {solved:g}" if solved is not None else "no solved score"
    reached = Text("SOLVED", style="bold green") if p["solved"] else Text(goal, style="dim")
    head.add_row("steps", f"{_fmt(p['steps'])} / {_fmt(p['total_timesteps'])}", "update", _fmt(p["update"]))
    head.add_row("SPS (update)", _fmt(int(p["sps"])), "SPS (run)", _fmt(int(run_sps(p))))
    head.add_row("elapsed", _duration(p["elapsed"]), "left", _duration(time_left(p)))
    judged = p.get("solve_metric") == "win_rate"  # self-play: the score is a win rate (versus.py)
    head.add_row("episodes", _fmt(p["episodes"]), "", "" if judged else reached)
    head.add_row("return", _fmt(p["mean_return"]), "", Text(sparkline(returns or []), style="cyan"))
    if judged:
        head.add_row("win rate", _fmt(p["score"]), "", reached)
    head.add_row("length", _fmt(p["mean_length"], 1), "", "")

    losses = Table(title="losses", title_justify="left", show_header=False, box=None, padding=(0, 2))
    losses.add_column()
    losses.add_column(justify="right")
    for name in LOSSES:
        if name in p["losses"]:
            losses.add_row(name, _fmt(p["losses"][name], 4))
    parts = [title, bar, head, losses]
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
        self.returns: collections.deque[float] = collections.deque(maxlen=200)

    def __enter__(self) -> Dashboard:
        self.live = Live(Text("starting..."), console=self.console, auto_refresh=False, transient=False)
        self.live.__enter__()
        return self

    def update(self, progress: dict[str, Any]) -> None:
        self._pending = progress
        if progress["mean_return"] is not None:
            self.returns.append(progress["mean_return"])
        now = time.monotonic()
        if self.live is not None and now - self._last >= self.refresh_seconds:
            self.live.update(render(progress, list(self.returns)), refresh=True)
            self._last = now

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            if self._pending is not None:
                self.live.update(render(self._pending, list(self.returns)), refresh=True)
            self.live.__exit__(*exc)
            self.live = None


class ProgressLines:
    """Off a terminal: one plain line on the first update and then every `interval` seconds, e.g.

    ocean/squared: 11,296 / 1,000,000 steps (1%), SPS 11,547 (update) 9,870 (run), return 0.922, ETA 1m25s
    """

    def __init__(self, interval: float = 10.0, stream: TextIO | None = None) -> None:
        self.interval = interval
        self.stream = stream
        self._last: float | None = None

    def __call__(self, p: dict[str, Any]) -> None:
        now = time.monotonic()
        if self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        print(line(p), file=self.stream or sys.stdout, flush=True)


def line(p: dict[str, Any]) -> str:
    """The plain progress line: steps, % of budget, both SPS, mean return, time left."""
    return (
        f"{p['env']}: {p['steps']:,} / {p['total_timesteps']:,} steps ({budget_used(p):.0%}), "
        f"SPS {p['sps']:,.0f} (update) {run_sps(p):,.0f} (run), return {_fmt(p['mean_return'])}, "
        f"ETA {_duration(time_left(p))}"
    )


def summary_table(summary: dict[str, Any], title: str = "summary") -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for key, value in summary.items():
        if key not in PATHS:
            table.add_row(SUMMARY_LABELS.get(key, key), _plain(value))
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
