"""A run compared with a baseline run (`puffertank matrix --baseline PREV`): per cell a new failure,
a fix, a new binding or one gone, and for the timed figures (steps/s) a regression or improvement
when the change lies outside the noise band; the version pins that moved; the exit status --fail-on
asks for.

The noise band is the runs' own spread, not a fixed percentage: each timed cell's relative spread
((max - min) / median of its repeats, `Cell.samples`) on either side, times NOISE_FACTOR, with a
floor of MIN_BAND. A cell with a single sample on both sides has no spread to measure; it is
compared against SINGLE_RUN_BAND and marked `band: "assumed"` so the report says so."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pufferlib.tank.errors import UsageError
from pufferlib.tank.matrix.schema import load_document

FAIL_ON = ("new-failure", "regression", "any")
NOISE_FACTOR = 2.0
MIN_BAND = 0.05
SINGLE_RUN_BAND = 0.5  # no repeats on either side: only below 1/1.5 (0.67x) or past 1.5x counts
ORDER = ("new-failure", "regression", "gone", "new-binding", "fixed", "improvement")


def load_baseline(path: Path) -> dict[str, Any]:
    """The baseline's matrix.json document (a file, or a report folder holding one), schema-checked."""
    return load_document(path, "--baseline")


def check_fail_on(value: str) -> str:
    if value not in FAIL_ON:
        raise UsageError(
            f"--fail-on {value!r}: not one of {', '.join(FAIL_ON)}", "pass --fail-on new-failure"
        )
    return value


def _samples(row: dict[str, Any]) -> list[float]:
    got = [float(s) for s in row.get("samples") or [] if s]
    return got or ([float(row["sps"])] if row.get("sps") else [])


def _spread(samples: list[float]) -> float | None:
    if len(samples) < 2:
        return None
    return (max(samples) - min(samples)) / statistics.median(samples)


def band(now: list[float], base: list[float]) -> tuple[float, str]:
    """The relative change that counts as noise for one cell, and whether it was measured or assumed."""
    spreads = [s for s in (_spread(now), _spread(base)) if s is not None]
    if not spreads:
        return SINGLE_RUN_BAND, "assumed"
    return max(MIN_BAND, NOISE_FACTOR * max(spreads)), "measured"


def compare(now: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """The comparison of two matrix.json documents: counts, changed cells worst first, moved versions.
    Under --every-host each host's cell is compared (and its change names the host)."""
    old: dict[tuple[str, str], dict[str, Any]] = {}
    for r in base["rows"]:
        old.setdefault((r["env"], r["check"]), r)  # an --every-host baseline: its first host's cell
    old_on = {(r["env"], r["check"], r.get("host", "")): r for r in base["rows"]}
    per_host = bool(now.get("every_host"))
    old_envs = {env for env, _ in old}
    new_envs = {r["env"] for r in now["rows"]}
    changes: list[dict[str, Any]] = []
    for row in now["rows"]:
        env, check, host = row["env"], row["check"], row.get("host", "")
        # each host's cell against the same host's in an --every-host baseline, else the baseline's cell
        prev = old_on.get((env, check, host)) if base.get("every_host") else None
        prev = prev or old.get((env, check))
        if env not in old_envs:
            kind = "new-binding" if check == "import" else None
        elif prev is None:
            kind = "new-failure" if row["status"] == "fail" else None
        elif row["status"] == "fail" and prev["status"] != "fail":
            kind = "new-failure"
        elif prev["status"] == "fail" and row["status"] != "fail":
            kind = "fixed"
        else:
            kind = None
        change: dict[str, Any] = {"env": env, "check": check, "status": row["status"]}
        if per_host:
            change["host"] = host
        change["was"] = prev["status"] if prev else None
        if kind is None and prev and row["status"] == prev["status"] == "pass":
            a, b = _samples(row), _samples(prev)
            if a and b:
                ratio = statistics.median(a) / statistics.median(b)
                width, how = band(a, b)
                change.update(sps=statistics.median(a), was_sps=statistics.median(b), ratio=round(ratio, 3))
                change.update(band=round(width, 3), band_kind=how)
                # symmetric in log space: a band past 100 % (a noisy box) still catches a 10x drop
                if ratio < 1 / (1 + width):
                    kind = "regression"
                elif ratio > 1 + width:
                    kind = "improvement"
        if kind:
            changes.append({"kind": kind, **change})
    for env in sorted(old_envs - new_envs):
        changes.append({"kind": "gone", "env": env, "check": "", "status": None, "was": "present"})
    changes.sort(key=lambda c: (ORDER.index(c["kind"]), c.get("ratio", 1.0), c["env"], c["check"]))
    counts = {kind: sum(c["kind"] == kind for c in changes) for kind in ORDER}
    versions = _moved(now.get("versions", {}), base.get("versions", {}))
    return {
        "baseline": {
            "image": base.get("image"),
            "digest": base.get("digest"),
            "started": base.get("started"),
        },
        "counts": counts,
        "changes": changes,
        "versions": versions,
    }


def _moved(now: dict[str, str], base: dict[str, str]) -> list[dict[str, str | None]]:
    """The packages whose version differs (or that appeared or went) between the two images."""
    names = sorted(set(now) | set(base))
    return [{"name": n, "was": base.get(n), "now": now.get(n)} for n in names if now.get(n) != base.get(n)]


def exit_status(comparison: dict[str, Any], fail_on: str) -> int:
    """1 when the comparison holds what --fail-on names (any: any new failure, regression or gone)."""
    counts = comparison["counts"]
    wanted = {"new-failure": ("new-failure",), "regression": ("new-failure", "regression")}
    kinds = wanted.get(fail_on, ("new-failure", "regression", "gone"))
    return 1 if any(counts[k] for k in kinds) else 0
