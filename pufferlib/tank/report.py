"""Matrix reports: matrix.json (the rows and what ran them), JUnit XML, and a self-contained HTML grid."""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pufferlib.smoke import Result

STATUS_COLOURS = {"pass": "#2e9e44", "fail": "#d03a2f", "skip": "#9aa0a6", "pending": "#f1f3f4"}


@dataclass
class Cell(Result):
    """One binding x check: what the in-container smoke run reported (or why it never did), and where."""

    host: str = ""


@dataclass
class Report:
    image: str
    digest: str
    variant: str
    versions: dict[str, str] = field(default_factory=dict)
    hosts: list[str] = field(default_factory=list)
    started: str = ""
    wall_seconds: float = 0.0
    env_seconds: dict[str, float] = field(default_factory=dict)  # wall time of each binding's container
    rows: list[Cell] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "skip": 0}
        for row in self.rows:
            out[row.status] = out.get(row.status, 0) + 1
        return out

    @property
    def failed(self) -> bool:
        return any(row.status == "fail" for row in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "counts": self.counts()}


def load(path: Path) -> Report:
    data = json.loads(Path(path).read_text())
    data.pop("counts", None)
    rows = [Cell(**row) for row in data.pop("rows")]
    return Report(**data, rows=rows)


def write_all(report: Report, directory: Path) -> dict[str, Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": directory / "matrix.json",
        "junit": directory / "junit.xml",
        "html": directory / "matrix.html",
    }
    paths["json"].write_text(json.dumps(report.to_json(), indent=2) + "\n")
    write_junit(report, paths["junit"])
    paths["html"].write_text(render_html(report))
    return paths


def write_junit(report: Report, path: Path) -> None:
    counts = report.counts()
    suite = ET.Element(
        "testsuite",
        name="puffertank-matrix",
        tests=str(len(report.rows)),
        failures=str(counts["fail"]),
        skipped=str(counts["skip"]),
        time=f"{report.wall_seconds:.2f}",
        timestamp=report.started,
    )
    props = ET.SubElement(suite, "properties")
    for key, value in {"image": report.image, "digest": report.digest, **report.versions}.items():
        ET.SubElement(props, "property", name=key, value=str(value))
    for row in report.rows:
        case = ET.SubElement(suite, "testcase", classname=row.env, name=row.check, time=f"{row.seconds:.3f}")
        if row.status == "fail":
            first = row.detail.splitlines()[0] if row.detail else "failed"
            ET.SubElement(case, "failure", message=first[:200]).text = row.detail
        elif row.status == "skip":
            ET.SubElement(case, "skipped", message=row.detail[:200])
        if row.host:
            ET.SubElement(case, "system-out").text = f"host: {row.host}"
    tree = ET.ElementTree(suite)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def render_html(report: Report) -> str:
    """One HTML file, no external assets: envs down, checks across, a coloured cell each."""
    checks: list[str] = []
    envs: list[str] = []
    grid: dict[tuple[str, str], Cell] = {}
    for row in report.rows:
        if row.check not in checks:
            checks.append(row.check)
        if row.env not in envs:
            envs.append(row.env)
        grid[row.env, row.check] = row
    counts = report.counts()
    head = "".join(f"<th>{html.escape(c)}</th>" for c in checks)
    body = []
    for env in envs:
        cells = []
        host = ""
        for check in checks:
            cell = grid.get((env, check))
            if cell is None:
                cells.append('<td class="cell" style="background:#fff"></td>')
                continue
            host = cell.host or host
            label = "skip" if cell.status == "skip" else f"{cell.seconds:.1f}s"
            if cell.sps:
                label += f"<br><small>{cell.sps:,.0f}/s</small>"
            tip = html.escape(f"{cell.status}: {cell.detail}", quote=True)
            colour = STATUS_COLOURS.get(cell.status, "#fff")
            cells.append(f'<td class="cell" style="background:{colour}" title="{tip}">{label}</td>')
        wall = report.env_seconds.get(env)
        wall_text = f"{wall:.1f}s" if wall is not None else ""
        body.append(
            f"<tr><th class='env'>{html.escape(env)}</th>{''.join(cells)}"
            f"<td class='meta'>{html.escape(host)}</td><td class='meta'>{wall_text}</td></tr>"
        )
    versions = ", ".join(f"{html.escape(k)} {html.escape(str(v))}" for k, v in report.versions.items())
    failures = [row for row in report.rows if row.status == "fail"]
    failure_html = "".join(
        f"<details><summary>{html.escape(r.env)} / {html.escape(r.check)}</summary>"
        f"<pre>{html.escape(r.detail)}</pre></details>"
        for r in failures
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PufferTank matrix</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; color: #202124; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #dadce0; padding: 4px 8px; font-size: 13px; }}
td.cell {{ color: #fff; text-align: center; min-width: 64px; }}
th.env {{ text-align: left; font-weight: normal; font-family: monospace; }}
td.meta {{ color: #5f6368; font-size: 12px; }}
.legend span {{ display: inline-block; padding: 2px 8px; color: #fff; margin-right: 4px; }}
pre {{ background: #f8f9fa; padding: 8px; overflow-x: auto; }}
</style></head><body>
<h1>PufferTank integration matrix</h1>
<p><b>{html.escape(report.image)}</b> ({html.escape(report.digest[:19])}),
variant {html.escape(report.variant)}, started {html.escape(report.started)},
wall time {report.wall_seconds:.1f}s,
hosts: {html.escape(", ".join(report.hosts))}</p>
<p>{versions}</p>
<p class="legend"><span style="background:{STATUS_COLOURS["pass"]}">pass {counts["pass"]}</span>
<span style="background:{STATUS_COLOURS["fail"]}">fail {counts["fail"]}</span>
<span style="background:{STATUS_COLOURS["skip"]}">skip {counts["skip"]}</span> (hover a cell for details)</p>
<table><tr><th>environment</th>{head}<th>host</th><th>wall</th></tr>
{"".join(body)}
</table>
<h2>Failures</h2>{failure_html or "<p>none</p>"}
</body></html>
"""
