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
    ("ours / PL 3.0", "native", "pl3"),
    ("our engine / its binding", "catalog", "pl3"),
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


def machine_lines(info: dict[str, Any]) -> str:
    """Command, date, machine, load before and after, versions: the lines above every table."""
    v = info["versions"]
    load = lambda key: ", ".join(f"{x:.2f}" for x in info.get(key, ()))  # noqa: E731
    how = f"; start method `{info['start_method']}`" if "start_method" in info else ""
    how += f"; worker counts tried {info['workers']}" if "workers" in info else ""
    return (
        f"Command: `{info['command']}` ({info['date']})\n\n"
        f"Machine: {info['cpu']}, {info['physical_cores']} physical cores / {info['logical_cpus']} logical "
        f"CPUs, {info['os']}{how}.\n"
        f"Load average (1, 5, 15 min) at start {load('load_average_start')}, at end "
        f"{load('load_average_end')}.\n"
        f"Versions: {', '.join(f'{k} {x}' for k, x in v.items())}.\n"
    )


def markdown(info: dict[str, Any], text: str) -> str:
    return (
        machine_lines(info) + "\n"
        "Agent steps per second, median of the repeats ± half their range, each peer in its best "
        "configuration (`1w` = 1 worker, `async` = EnvPool batches of half the envs).\n\n"
        f"{text}\n"
    )


def _median(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def _cell(rows: list[dict], key: str, fmt: str, count_errors: bool = False) -> str:
    """The median of `key` over the rows that measured it (with `count_errors`, `error (n/N)` beside it);
    `n/a` if skipped."""
    done = [r for r in rows if key in r and "error" not in r]
    errors = [r for r in rows if "error" in r] if count_errors else []
    parts = []
    if done:
        med = _median(done, key)
        parts.append(
            fmt_rate([r[key] for r in done]) if fmt == "rate" else "-" if med is None else fmt.format(med)
        )
    if errors:
        parts.append(f"error ({len(errors)}/{len(rows)} samples)")
    if parts:
        return ", ".join(parts)
    return "n/a" if any("skip" in r for r in rows) else "-"


def train_table(rows: list[dict]) -> str:
    """`puffer train` end to end, PufferLib 3.0 beside ours: per env the median SPS over repeats, its
    ratio, and the median score and steps each reached in the wall-time budget (each stops at its first
    update or log past it, so the seconds it took are shown too)."""
    head = ["env", "budget", "PL 3.0 SPS", "ours SPS", "ours / PL 3.0", "PL 3.0 score", "ours score"]
    head += ["PL 3.0 steps in", "ours steps in"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for env in dict.fromkeys(r["env"] for r in rows):
        pl3 = [r for r in rows if r["env"] == env and r["side"] == "pl3"]
        ours = [r for r in rows if r["env"] == env and r["side"] == "ours"]
        a, b = _median(ours, "sps"), _median(pl3, "sps")
        seconds = _median(pl3 + ours, "seconds_asked")
        out = [
            env,
            f"{seconds:.0f} s" if seconds else "-",
            _cell(pl3, "sps", "rate", count_errors=True),
            _cell(ours, "sps", "rate", count_errors=True),
        ]
        out.append(f"{a / b:.2f}x" if a and b else "-")
        out += [_cell(pl3, "score", "{:.1f}"), _cell(ours, "score", "{:.1f}")]
        for side in (pl3, ours):
            steps, took = _median(side, "steps"), _median(side, "seconds")
            out.append(f"{steps:,.0f} in {took:.0f} s" if steps and took else _cell(side, "steps", "{:,.0f}"))
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines)
