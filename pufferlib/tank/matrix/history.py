"""`puffertank matrix --history DIR...`: a series of matrix reports (one per image rebuild, one per box)
laid side by side: each binding's step steps/s and pass/fail, by image revision, oldest first.

Writes three files into --report (default ./matrix-history): history.csv (one row per report x binding
x check, for notebooks), history.html (self-contained: a row per binding, a column per report, each
cell its worst status and step steps/s, a sparkline of the steps/s) and history.png (matplotlib, the
step steps/s of every binding over the reports, log scale). Reports are ordered by the time they
started; each column is labelled by its image digest and pufferlib git revision, so a change in a
row lines up with the rebuild that caused it."""

from __future__ import annotations

import csv
import html
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pufferlib.tank.errors import UsageError
from pufferlib.tank.matrix.report import STATUS_COLOURS, STATUS_WORDS
from pufferlib.tank.matrix.schema import load_document

# A binding's summary status: fail if any cell failed, then timeout, then engine-error (not tested), else
# pass if any passed (every CPU run skips the gpu check), else skip.
WORST = ("fail", "timeout", "engine-error", "pass", "skip")
COLOURS = {**STATUS_COLOURS, None: "#ffffff"}  # the report's colours; none: not in that report


@dataclass
class Column:
    """One report of the series."""

    source: Path
    started: str
    image: str
    digest: str
    revision: str
    rows: dict[tuple[str, str], dict[str, Any]]

    @property
    def label(self) -> str:
        return f"{self.started[:16].replace('T', ' ')} {self.digest.removeprefix('sha256:')[:12]}"

    def status(self, env: str) -> str | None:
        """The binding's summary status in this report (WORST; None: the binding was not in it)."""
        found = {row["status"] for (e, _), row in self.rows.items() if e == env}
        return next((s for s in WORST if s in found), None)

    def step_sps(self, env: str) -> float | None:
        row = self.rows.get((env, "step"))
        if not row or row["status"] != "pass":
            return None
        samples = [float(s) for s in row.get("samples") or [] if s]
        return statistics.median(samples) if samples else (float(row["sps"]) if row.get("sps") else None)


def load_series(paths: list[Path]) -> list[Column]:
    """The reports, oldest first (each a matrix.json or a report folder, schema-checked)."""
    if len(paths) < 2:
        raise UsageError(
            f"--history needs two or more reports, got {len(paths)}",
            "pass the report folders of several runs: --history reports/2026-11-* reports/matrix",
        )
    columns = []
    for path in paths:
        doc = load_document(path, "--history")
        columns.append(
            Column(
                source=Path(path),
                started=str(doc.get("started", "")),
                image=str(doc.get("image", "")),
                digest=str(doc.get("digest", "")),
                revision=str(doc.get("provenance", {}).get("pufferlib", {}).get("git_revision") or ""),
                rows={(_binding(r, doc), r["check"]): r for r in doc["rows"]},
            )
        )
    return sorted(columns, key=lambda c: c.started)


def _binding(row: dict, doc: dict) -> str:
    """A row's binding; under --every-host the binding on its host ("ocean/squared @ ssh://box2"), so each
    box keeps its own line."""
    return f"{row['env']} @ {row.get('host', '')}" if doc.get("every_host") else row["env"]


def bindings(columns: list[Column]) -> list[str]:
    return sorted({env for column in columns for env, _ in column.rows})


def write_csv(columns: list[Column], path: Path) -> None:
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["started", "image", "digest", "git_revision", "env", "check", "status", "sps"])
        for c in columns:
            for (env, check), row in sorted(c.rows.items()):
                sps = row.get("sps") if row["status"] == "pass" else None
                writer.writerow(
                    [c.started, c.image, c.digest, c.revision, env, check, row["status"], sps or ""]
                )


def _sparkline(values: list[float | None], width: int = 120, height: int = 24) -> str:
    """An inline SVG polyline of the steps/s (log scale), gaps where a report has no figure."""
    known = [v for v in values if v]
    if len(known) < 2:
        return ""
    lo, hi = math.log(min(known)), math.log(max(known))
    span = (hi - lo) or 1.0
    step = width / max(1, len(values) - 1)
    points = " ".join(
        f"{i * step:.1f},{height - 2 - (math.log(v) - lo) / span * (height - 4):.1f}"
        for i, v in enumerate(values)
        if v
    )
    return (
        f'<svg width="{width}" height="{height}" role="img" aria-label="step steps/s">'
        f'<polyline fill="none" stroke="#1a73e8" stroke-width="1.5" points="{points}"/></svg>'
    )


def render_html(columns: list[Column]) -> str:
    head = "".join(
        f'<th title="{html.escape(str(c.source))}">{html.escape(c.label)}<small>'
        f"{html.escape(c.revision[:10] or 'no git')}</small></th>"
        for c in columns
    )
    body = []
    for env in bindings(columns):
        cells, values = [], []
        for c in columns:
            status, sps = c.status(env), c.step_sps(env)
            values.append(sps)
            text = (
                "&mdash;"
                if status is None
                else (STATUS_WORDS.get(status) or (f"{sps:,.0f}/s" if sps else status))
            )
            cells.append(
                f'<td data-status="{status or "none"}" style="background:{COLOURS[status]}">{text}</td>'
            )
        body.append(f"<tr><th>{html.escape(env)}</th>{''.join(cells)}<td>{_sparkline(values)}</td></tr>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PufferTank matrix history: {len(columns)} reports</title>
<style>
body {{ font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #202124; }}
table {{ border-collapse: collapse; }} th, td {{ padding: 3px 6px; border: 1px solid #fff; font-size: 12px; }}
thead th {{ background: #e8eaed; position: sticky; top: 0; }}
thead small {{ display: block; font-weight: normal; }}
tbody th {{ text-align: left; font-family: ui-monospace, monospace; background: #f8f9fa; }}
td[data-status] {{ color: #fff; text-align: right; }}
td[data-status=none] {{ color: #5f6368; text-align: center; }}
</style></head><body>
<h1>PufferTank matrix history</h1>
<p>{len(columns)} reports, oldest first; each cell is FAIL if any of the binding's checks failed, else its
step steps/s
(the median of the run's repeats); &mdash; = not in that report. history.csv has every cell,
history.png the steps/s.</p>
<table><thead><tr><th>binding</th>{head}<th>step steps/s</th></tr></thead>
<tbody>{"".join(body)}</tbody></table>
</body></html>
"""


def write_png(columns: list[Column], path: Path) -> bool:
    """Each binding's step steps/s over the reports (log scale); False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        return False
    envs = bindings(columns)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(columns)), 4 + 0.12 * len(envs)))
    x = list(range(len(columns)))
    for env in envs:
        ys = [c.step_sps(env) for c in columns]
        if any(ys):
            ax.plot(x, [y if y else float("nan") for y in ys], marker="o", label=env)
    ax.set_yscale("log")
    ax.set_xticks(x, [c.label for c in columns], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("step check, steps/s")
    ax.set_title("PufferTank matrix history")
    ax.legend(fontsize=7, ncol=max(1, len(envs) // 12), loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_history(paths: list[Path], out: Path) -> dict[str, Path]:
    """Load the series and write history.csv, history.html and (with matplotlib) history.png into `out`."""
    columns = load_series(paths)
    out.mkdir(parents=True, exist_ok=True)
    files = {"csv": out / "history.csv", "html": out / "history.html", "png": out / "history.png"}
    write_csv(columns, files["csv"])
    files["html"].write_text(render_html(columns))
    if not write_png(columns, files["png"]):
        files.pop("png")
    return files
