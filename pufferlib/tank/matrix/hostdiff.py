"""--every-host: what differs between the boxes that ran the same bindings of the same image.

Every binding ran on every `--host`, so each cell exists once per host. A cell differs between hosts
when what it reports should not depend on the box but does:

status    it passed on one box and failed (or skipped) on another: a driver, a kernel, a missing device
renderer  the render check names a different renderer ("rendered by ..."): llvmpipe on one box, the
          NVIDIA driver's EGL on another
frames    the render check drew different pixels from the same seed, for a binding whose seeding is
          "full" (same seed, same frames by its contract), so the difference is the box's
speed     the hosts' fastest repeats differ beyond the noise band of their repeats (matrix/baseline.py's
          rule and band: interference only slows a repeat, so the fastest is each box's figure): the same
          image on two boxes of one kind should step alike

The worst kind first, then by binding and check. The step speed of two different machines may differ
for honest reasons (a 4090 box against a laptop): the report shows the ratio and leaves the verdict to
the reader. The exit status is the run's as ever: a `status` difference is a cell that failed on one
host, which fails the run already."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pufferlib.tank.matrix.baseline import TIMED, band
from pufferlib.tank.matrix.report import Cell

KINDS = ("status", "renderer", "frames", "speed")
_RENDERER = re.compile(r"rendered by (.+?)(?:;|$)")


def renderer(cell: Cell) -> str | None:
    """The renderer a passing render cell names, or None."""
    found = _RENDERER.search(cell.detail or "") if cell.status == "pass" else None
    return found.group(1).strip() if found else None


def _samples(cell: Cell) -> list[float]:
    return [s for s in cell.samples if s] or ([cell.sps] if cell.sps else [])


def differences(rows: Iterable[Cell], hosts: list[str], seeding: dict[str, str]) -> list[dict[str, Any]]:
    """The cells that differ between hosts, worst kind first. `seeding`: binding -> its catalog seeding
    (only "full" bindings' frames are compared)."""
    by_cell: dict[tuple[str, str], dict[str, Cell]] = {}
    for row in rows:
        by_cell.setdefault((row.env, row.check), {})[row.host] = row
    out: list[dict[str, Any]] = []
    for (env, check), on in by_cell.items():
        present = [h for h in hosts if h in on]
        if len(present) < 2:
            continue
        cells = [on[h] for h in present]
        entry: dict[str, Any] = {"env": env, "check": check, "hosts": present}
        statuses = [c.status for c in cells]
        if len(set(statuses)) > 1:
            out.append({**entry, "kind": "status", "values": statuses})
            continue
        if statuses[0] != "pass":
            continue
        if check == "render":
            names = [renderer(c) for c in cells]
            if len(set(names)) > 1:
                out.append({**entry, "kind": "renderer", "values": names})
                continue
            if seeding.get(env) == "full" and len({tuple(c.images) for c in cells}) > 1:
                out.append({**entry, "kind": "frames", "values": [f"{len(c.images)} frames" for c in cells]})
                continue
        speeds = [_samples(c) for c in cells]
        if check in TIMED and all(speeds):  # learn's steps/s is mostly start-up: not a speed
            fastest = [max(s) for s in speeds]
            order = sorted(range(len(cells)), key=fastest.__getitem__)
            slow, fast = order[0], order[-1]
            width, how = band(speeds[fast], speeds[slow])
            ratio = fastest[fast] / fastest[slow]
            if ratio > 1 / (1 - width):  # the baseline's improvement test: beyond the band
                values = [round(m) for m in fastest]
                out.append(
                    {
                        **entry,
                        "kind": "speed",
                        "values": values,
                        "ratio": round(ratio, 3),
                        "band": round(width, 3),
                        "band_kind": how,
                    }
                )
    out.sort(key=lambda d: (KINDS.index(d["kind"]), -d.get("ratio", 0.0), d["env"], d["check"]))
    return out
