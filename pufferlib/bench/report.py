"""The tables `puffer bench` prints: each peer's best configuration, and ratios that compare like with like.

A cell is the median over repeats of the peer's best configuration (e.g. `158k ±3% 1w`: one
worker, synchronous), `error (n/N samples)` when n of its N measurements raised (beside the
median when some succeeded), `n/a` when the peer does not apply (e.g. PufferLib 2.0.2 on NetHack).
The ratios set ours beside the peer that does the same work per call: Serial beside gymnasium's
SyncVectorEnv (every env in this process), MP sync beside AsyncVectorEnv (every env in worker
processes, every call), and each beside PufferLib 2.0.2's best of the same kind.
"""

from __future__ import annotations

import statistics
from typing import Any

from pufferlib.bench.peers import PEER_TITLES

# (title, ours, peer): a ratio column, shown when both peers ran
RATIOS = (
    ("MP sync / gym Async", "mp", "gym-async"),
    ("Serial / gym Sync", "serial", "gym-sync"),
    ("best MP / PL 2.0.2 best MP", ("mp", "mp-async"), ("pl202-mp", "pl202-mp-async")),
    ("Serial / PL 2.0.2 Serial", "serial", "pl202-serial"),
)


def fmt_rate(values: list[float]) -> str:
    med = statistics.median(values)
    spread = (max(values) - min(values)) / 2 / med * 100 if med else 0.0
    text = f"{med:,.0f}" if med < 1e4 else f"{med / 1e3:.1f}k" if med < 1e6 else f"{med / 1e6:.2f}M"
    return f"{text} ±{spread:.0f}%"


def row_keys(results: list[dict]) -> list[tuple[str, str, int]]:
    keys = []
    for r in results:
        key = (r["workload"], r["description"], r["num_envs"])
        if key not in keys:
            keys.append(key)
    return keys


class Cell:
    """One peer's measurements in one row: the best setup's samples, errors and skips."""

    def __init__(self, rows: list[dict]) -> None:
        by_setup: dict[str, list[float]] = {}
        for r in rows:
            if r.get("sps"):
                by_setup.setdefault(r.get("setup", ""), []).append(r["sps"])
        self.errors = [r for r in rows if "error" in r]
        self.skips = [r for r in rows if "skip" in r]
        self.measured = len(rows) - len(self.skips)
        self.setup, self.samples = "", []
        if by_setup:
            self.setup, self.samples = max(by_setup.items(), key=lambda kv: statistics.median(kv[1]))

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def text(self) -> str:
        parts = []
        if self.samples:
            parts.append(fmt_rate(self.samples) + (f" {self.setup}" if self.setup else ""))
        if self.errors:
            parts.append(f"error ({len(self.errors)}/{self.measured} samples)")
        if parts:
            return ", ".join(parts)
        return "n/a" if self.skips else "-"


def cells(results: list[dict], peers: list[str]) -> dict[tuple[str, int], dict[str, Cell]]:
    out = {}
    for name, _, n in row_keys(results):
        out[(name, n)] = {
            p: Cell([r for r in results if (r["workload"], r["num_envs"], r["peer"]) == (name, n, p)])
            for p in peers
        }
    return out


def _names(names: str | tuple[str, ...]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else names


def _best(row: dict[str, Cell], names: str | tuple[str, ...]) -> float | None:
    meds = [row[p].median for p in _names(names) if p in row and row[p].median]
    return max(meds) if meds else None


def table(results: list[dict], peers: list[str], cores: int | None = None) -> str:
    """The markdown table; with `cores`, also our best Multiprocessing as a share of the machine's
    limit: `cores` times Serial's rate (one process stepping the same envs)."""
    ratios = [
        (title, a, b)
        for title, a, b in RATIOS
        if any(p in peers for p in _names(a)) and any(p in peers for p in _names(b))
    ]
    limit = bool(cores) and "serial" in peers and any(p in peers for p in ("mp", "mp-async"))
    head = ["workload", "envs", *[PEER_TITLES[p] for p in peers], *[title for title, _, _ in ratios]]
    head += [f"best MP / ({cores} x Serial)"] if limit else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    grid = cells(results, peers)
    for name, desc, n in row_keys(results):
        row = grid[(name, n)]
        out = [desc, str(n), *[row[p].text() for p in peers]]
        for _, a, b in ratios:
            ours, theirs = _best(row, a), _best(row, b)
            out.append(f"{ours / theirs:.2f}x" if ours and theirs else "-")
        if limit:
            mp, serial = _best(row, ("mp", "mp-async")), _best(row, "serial")
            out.append(f"{mp / (cores * serial):.0%}" if mp and serial else "-")
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines)


def failed_rows(results: list[dict], peers: list[str]) -> list[str]:
    """Rows where measurements errored and none succeeded (what makes `puffer bench` exit 1)."""
    failed = []
    for (name, n), row in cells(results, peers).items():
        if any(c.errors for c in row.values()) and not any(c.samples for c in row.values()):
            failed.append(f"{name} envs={n}")
    return failed


def errors(results: list[dict]) -> list[str]:
    """Each distinct error once: peer, setup and message."""
    seen: list[str] = []
    for r in results:
        if "error" in r:
            line = f"{r['peer']} {r.get('setup', '')}".rstrip() + f": {r['error']}"
            if line not in seen:
                seen.append(line)
    return seen


def markdown(info: dict[str, Any], text: str) -> str:
    v = info["versions"]
    load = lambda key: ", ".join(f"{x:.2f}" for x in info.get(key, ()))  # noqa: E731
    return (
        f"Command: `{info['command']}` ({info['date']})\n\n"
        f"Machine: {info['cpu']}, {info['physical_cores']} physical cores / {info['logical_cpus']} logical "
        f"CPUs, {info['os']}; start method `{info['start_method']}`; worker counts tried "
        f"{info['workers']}.\n"
        f"Load average (1, 5, 15 min) at start {load('load_average_start')}, at end "
        f"{load('load_average_end')}.\n"
        f"Versions: {', '.join(f'{k} {x}' for k, x in v.items())}.\n\n"
        "Agent steps per second, median of the repeats ± half their range, each peer in its best "
        "configuration (`1w` = 1 worker, `async` = EnvPool batches of half the envs).\n\n"
        f"{text}\n"
    )
