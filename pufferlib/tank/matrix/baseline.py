"""A run compared with a baseline run (`puffertank matrix --baseline PREV`): per cell a new failure,
a fix, a new binding or one gone, and for a passing cell's figure a regression or improvement when it
moved beyond the noise band; the version pins that moved; the exit status --fail-on asks for.

A cell's figure: steps/s for the timed checks (step, serial, multiprocessing; higher is better), and for
`learn` the agent steps it took to solve (`steps`; lower is better; its steps/s is not compared: a
short training run's wall time is mostly start-up). A status change (pass to fail, fail to pass) always
counts; a figure counts only beyond its band. Of a figure's repeats the best is compared (the fastest for
steps/s): on a shared box interference only ever slows a repeat down, and a median falls with two slow
repeats of three (a rerun of an unchanged image, 2026-12-07: multiprocessing samples 22.1k, 10.1k, 10.6k
against 18.5k, 19.0k, 15.8k steps/s, median x0.57, fastest x1.16). A real slowdown slows every repeat.

The band is a relative tolerance: a regression is a figure worse than the baseline's by more than
max(MIN_TOLERANCE, MAD_FACTOR x the relative median absolute deviation of either side's samples),
capped at MAX_TOLERANCE (so a 5x drop always counts). MIN_TOLERANCE is the run-to-run noise of a shared
box, which a spread measured within one run misses: reruns of the same image on this 2-core box moved
steps/s by up to x0.71 (2026-12-05, loaded), and a whole rerun's fastest repeats by x0.70 (2026-12-07,
quiet: step and serial, every repeat slower). The band is symmetric in log space: an improvement is a figure
better by more than 1 / (1 - band). `band_kind` says whether the samples widened it ("measured") or the
tolerance alone set it ("tolerance")."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from pufferlib.matrix_protocol import ENGINE, FAILED
from pufferlib.tank.errors import UsageError
from pufferlib.tank.matrix.schema import load_document

FAIL_ON = ("new-failure", "regression", "any")
MIN_TOLERANCE = 0.4  # a figure 40 % worse than the baseline's is noise on a shared box; more is not
MAD_FACTOR = 3.0
MAX_TOLERANCE = 0.8
TIMED = ("step", "serial", "multiprocessing")  # compared on steps/s; learn on its steps to solve
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


def figure(row: dict[str, Any]) -> tuple[str, list[float], bool] | None:
    """A passing cell's figure: (its name, its samples, whether higher is better), or None: nothing to
    compare (a check without one, or a baseline row from before `steps` was recorded)."""
    if row["check"] == "learn":
        return ("steps to solve", [float(row["steps"])], False) if row.get("steps") else None
    if row["check"] not in TIMED:
        return None
    got = [float(s) for s in row.get("samples") or [] if s]
    got = got or ([float(row["sps"])] if row.get("sps") else [])
    return ("steps/s", got, True) if got else None


def _mad(samples: list[float]) -> float | None:
    """The relative median absolute deviation of `samples` (None for fewer than 2)."""
    if len(samples) < 2:
        return None
    median = statistics.median(samples)
    return statistics.median(abs(s - median) for s in samples) / median


def band(now: list[float], base: list[float]) -> tuple[float, str]:
    """The relative tolerance within which a figure's change is noise, and whether the samples set it
    ("measured") or MIN_TOLERANCE did ("tolerance")."""
    spreads = [MAD_FACTOR * m for m in (_mad(now), _mad(base)) if m is not None]
    widest = max(spreads, default=0.0)
    if widest <= MIN_TOLERANCE:
        return MIN_TOLERANCE, "tolerance"
    return min(widest, MAX_TOLERANCE), "measured"


def judge(now: list[float], base: list[float], higher_is_better: bool) -> dict[str, Any]:
    """The comparison of one figure: each side's best repeat, their ratio (now / baseline), the band, and
    `kind`: regression, improvement or None (inside the band)."""
    best = max if higher_is_better else min
    a, b = best(now), best(base)
    ratio = a / b
    width, how = band(now, base)
    better = ratio if higher_is_better else 1 / ratio  # > 1: better than the baseline
    kind = "regression" if better < 1 - width else "improvement" if better > 1 / (1 - width) else None
    return {"kind": kind, "value": a, "was_value": b, "ratio": round(ratio, 3), "band": round(width, 3),
            "band_kind": how}  # fmt: skip


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
            kind = "new-failure" if row["status"] in FAILED else None
        elif row["status"] in FAILED and prev["status"] not in FAILED:
            kind = "new-failure"
        elif prev["status"] in FAILED and row["status"] not in FAILED:
            kind = None if row["status"] == ENGINE else "fixed"  # engine-error: not tested, so not fixed
        else:
            kind = None
        change: dict[str, Any] = {"env": env, "check": check, "status": row["status"]}
        if per_host:
            change["host"] = host
        change["was"] = prev["status"] if prev else None
        if kind is None and prev and row["status"] == prev["status"] == "pass":
            a, b = figure(row), figure(prev)
            if a and b:
                judged = judge(a[1], b[1], a[2])
                kind = judged.pop("kind")
                change.update(figure=a[0], **judged)
        if kind:
            changes.append({"kind": kind, **change})
    for env in sorted(old_envs - new_envs):
        changes.append({"kind": "gone", "env": env, "check": "", "status": None, "was": "present"})
    changes.sort(key=lambda c: (ORDER.index(c["kind"]), _better(c), c["env"], c["check"]))
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


def _better(change: dict[str, Any]) -> float:
    """How much better a change's figure got (below 1: worse), to sort the changes worst first."""
    ratio = change.get("ratio", 1.0)
    return 1 / ratio if change.get("figure") == "steps to solve" else ratio


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
