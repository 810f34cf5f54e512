"""What PufferLib 3.0's `puffer train` shows and logs, read back: its dashboard frames and its log lines.

The dashboard is a rich table redrawn every 0.25 s after the escape `ESC[0;0H`; in a terminal (or
with FORCE_COLOR) its text is wrapped in colour escapes. `frames(text)` strips the escapes and reads
each frame's Steps, SPS, Epoch, Uptime and the user stats (score, episode_length, ...). Steps and
SPS are abbreviated there (`262.1K`, `1.2M`: 3 to 4 digits), Uptime is whole seconds, so the bench
takes its figures from the log lines the driver records (pl3_driver.py) and the dashboard only as a
cross-check. The frame printed once a run completes shows an inflated step count and SPS (32 more
evaluations without training); `steady` leaves out the first frames (SPS 0) and such a frame.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

HOME = "\x1b[0;0H"
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
NUMBER = r"(-?\d+(?:\.\d+)?)([KMBT]?)"
SUMMARY = {"steps": "Steps", "sps": "SPS", "epoch": "Epoch"}
UPTIME = re.compile(r"Uptime\s+(?:(\d+)h\s+)?(?:(\d+)m\s+)?(\d+)s")
STAT = re.compile(r"([a-z][a-z0-9_/]*)\s+(-?\d+\.\d{3})\b")


class DashboardError(ValueError):
    """The text holds no dashboard frame this module can read; says what it lacked."""


def strip(text: str) -> str:
    """`text` without terminal escapes (colours, cursor moves)."""
    return ESCAPE.sub("", text)


def _number(value: str, unit: str) -> float:
    return float(value) * UNITS[unit]


def frame(text: str) -> dict[str, Any]:
    """One frame (escapes stripped) as {steps, sps, epoch, uptime, stats: {name: value}}."""
    out: dict[str, Any] = {}
    for key, label in SUMMARY.items():
        found = re.search(rf"\b{label}\s+{NUMBER}\b", text)
        if found is None:
            raise DashboardError(f"no '{label}' row in the dashboard frame: {text[:120]!r}")
        out[key] = round(_number(*found.groups()), 6)
    up = UPTIME.search(text)
    if up is None:
        raise DashboardError(f"no 'Uptime' row in the dashboard frame: {text[:120]!r}")
    hours, minutes, seconds = (int(g or 0) for g in up.groups())
    out["uptime"] = 3600 * hours + 60 * minutes + seconds
    stats_at = text.find("User Stats")
    out["stats"] = {k: float(v) for k, v in STAT.findall(text[stats_at:])} if stats_at >= 0 else {}
    return out


def frames(text: str) -> list[dict[str, Any]]:
    """Every complete frame in a captured stdout, in order (a frame cut off by the capture is left out)."""
    parts = [strip(p) for p in text.split(HOME) if p.strip()]
    out = []
    for part in parts:
        try:
            out.append(frame(part))
        except DashboardError:
            continue
    if not out:
        raise DashboardError(f"no PufferLib dashboard frame in {len(text)} characters of output")
    return out


def steady(shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The frames of a running trainer: SPS > 0, and not the completion frame (SPS over twice the median)."""
    running = [f for f in shown if f["sps"] > 0]
    if len(running) > 2:
        median = statistics.median(f["sps"] for f in running)
        if running[-1]["sps"] > 2 * median:
            running = running[:-1]
    return running


def log_lines(path: Path) -> list[dict[str, Any]]:
    """The driver's log: one dict per line, as PufferLib 3.0's mean_and_log returned it."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


SCORE_KEYS = ("environment/score", "environment/episode_return")
RETURN_KEYS = ("environment/episode_return",)  # the episode return only, where `score` means another thing


def score(line: dict[str, Any], keys: tuple[str, ...] = SCORE_KEYS) -> float | None:
    """An episode score from a log line: the first of `keys` it has (by default the env's `score`, else
    its episode return)."""
    for key in keys:
        if key in line:
            return float(line[key])
    return None


def curve(lines: list[dict[str, Any]], keys: tuple[str, ...] = SCORE_KEYS) -> list[tuple[int, float, float]]:
    """(agent steps, uptime seconds, score) at every log line that has a score (`keys`: as score's)."""
    points = ((int(x["agent_steps"]), float(x["uptime"]), score(x, keys)) for x in lines)
    return [(steps, uptime, s) for steps, uptime, s in points if s is not None]


def export_run(points: list[tuple[int, float, float]], directory: Path, env: str) -> Path:
    """The curve as a run directory `puffer plot` draws (metrics.jsonl, summary.json), curve.csv beside."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "metrics.jsonl", "w") as f:
        for steps, seconds, value in points:
            f.write(json.dumps({"global_step": steps, "time": seconds, "episodic_return": value}) + "\n")
    (directory / "summary.json").write_text(json.dumps({"env": env}) + "\n")
    rows = ["agent_steps,seconds,score", *(f"{s},{t:.3f},{v:.4f}" for s, t, v in points)]
    (directory / "curve.csv").write_text("\n".join(rows) + "\n")
    return directory
