"""Matrix reports: matrix.json (the rows and what ran them), JUnit XML, and a self-contained HTML grid.

The HTML is read at a glance: a failed cell says FAIL in words and links to its entry under Failures
(no steps/s on it: a failed run's throughput means nothing); every skip reason is on the page (a
note per column when one reason covers it); each check's header carries its totals (`learn 8/79`);
the header row stays in view while scrolling; the grid fits 1280 px. Provenance says what ran where:
the machine puffertank ran on, every engine, the pufferlib version and git revision, the exact
command line, jobs and filters; a run over several hosts shows which host ran each binding. The page
loads nothing from anywhere (no scripts or fonts; the render check's thumbnails are inline data: PNGs), so
it works offline and as a CI artifact.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pufferlib.matrix_protocol import ENGINE, FAILED, STATUSES, Result
from pufferlib.tank.matrix.report_hosts import STYLE as HOSTS_STYLE
from pufferlib.tank.matrix.report_hosts import differs_html, grid_html
from pufferlib.tank.matrix.report_hosts import slug as _slug
from pufferlib.tank.matrix.report_since import change_words, since_html
from pufferlib.tank.matrix.schema import SCHEMA

CHANGE_ARROWS = {"new-failure": "!", "regression": "▼", "fixed": "✔", "improvement": "▲", "new-binding": "+"}
CHANGE_MARKS = {
    "new-failure": "new",
    "regression": "slower",
    "fixed": "fixed",
    "improvement": "faster",
    "new-binding": "new",
}
STATUS_COLOURS = {
    "pass": "#2e9e44",
    "fail": "#d03a2f",
    "timeout": "#e8710a",
    "skip": "#9aa0a6",
    "engine-error": "#7b1fa2",
    "pending": "#f1f3f4",
}
# How a cell that is not a pass reads in the grid (and the terminal summary): in words, not a colour alone.
STATUS_WORDS = {"fail": "FAIL", "timeout": "TIMEOUT", "engine-error": "ENGINE"}


@dataclass
class Cell(Result):
    """One binding x check: what the in-container smoke run reported (or why it never did), and where."""

    host: str = ""
    error: bool = False  # the check never reported (the container crashed, hung, or its engine failed)

    samples: list[float] = field(default_factory=list)  # steps/s of each repeat that passed (--repeats)


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
    provenance: dict[str, Any] = field(default_factory=dict)  # see matrix.provenance
    comparison: dict[str, Any] = field(default_factory=dict)  # against --baseline: matrix/baseline.py
    every_host: bool = False  # --every-host: each binding ran on every host (rows hold a cell per host)
    host_seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # host -> binding -> wall time
    host_differences: list[dict[str, Any]] = field(default_factory=list)  # matrix/hostdiff.py
    digests: dict[str, str] = field(default_factory=dict)  # host -> the image's id there (schema 4)
    # every attempt at a binding whose container the engine failed at least once (schema 5): env, host,
    # attempt (1, 2, ...), outcome (engine-error, or ran), detail, seconds
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for row in self.rows:
            out[row.status] = out.get(row.status, 0) + 1
        return out

    def check_counts(self) -> dict[str, dict[str, int]]:
        """Per check: {"pass": n, "fail": n, "skip": n, "total": n}, in the order checks first appear."""
        out: dict[str, dict[str, int]] = {}
        for row in self.rows:
            counts = out.setdefault(row.check, {**dict.fromkeys(STATUSES, 0), "total": 0})
            counts[row.status] = counts.get(row.status, 0) + 1
            counts["total"] += 1
        return out

    @property
    def failed(self) -> bool:
        """An env failed a check (fail, or its hang guard fired: timeout)."""
        return any(row.status in FAILED for row in self.rows)

    @property
    def engine_failed(self) -> bool:
        """The engine could not run some binding's container, even after the retries."""
        return any(row.status == ENGINE for row in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **asdict(self), "counts": self.counts()}


def load(path: Path) -> Report:
    data = json.loads(Path(path).read_text())
    data.pop("counts", None)
    data.pop("schema", None)
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
    """One testsuite (hostname: where puffertank ran); a case per cell, its detail in system-out even
    when it passed. An env's failure is a `failure` (a timeout one of type="timeout"); a cell the Docker
    engine could not run is an `error` (type="engine-error"): infrastructure, not the env. Under
    `--baseline ... --fail-on regression|any`, a cell that passed but regressed beyond its noise band is
    a failure too (CI dashboards then show it red, the same as the exit status)."""
    counts = report.counts()
    regressed = _junit_regressions(report)
    machine = report.provenance.get("machine", {})
    suite = ET.Element(
        "testsuite",
        name="puffertank-matrix",
        tests=str(len(report.rows)),
        failures=str(sum(counts[s] for s in FAILED) + len(regressed)),
        errors=str(counts[ENGINE]),
        skipped=str(counts["skip"]),
        time=f"{report.wall_seconds:.2f}",
        timestamp=report.started,
        hostname=str(machine.get("hostname", "")),
    )
    props = ET.SubElement(suite, "properties")
    facts = {"image": report.image, "digest": report.digest, "variant": report.variant, **report.versions}
    facts.update({f"provenance.{k}": v for k, v in _flat_provenance(report.provenance).items()})
    for key, value in facts.items():
        ET.SubElement(props, "property", name=key, value=str(value))
    for row in report.rows:
        host = row.host if report.every_host else ""  # --every-host: a case per host, named so
        name = f"{row.check} @ {host}" if host else row.check
        case = ET.SubElement(suite, "testcase", classname=row.env, name=name, time=f"{row.seconds:.3f}")
        first = row.detail.splitlines()[0][:200] if row.detail else row.status
        change = regressed.get((row.env, row.check, host))
        if row.status == ENGINE:
            ET.SubElement(case, "error", message=first, type=ENGINE).text = row.detail
        elif row.status in FAILED:
            ET.SubElement(case, "failure", message=first, type=row.status).text = row.detail
        elif row.status == "skip":
            ET.SubElement(case, "skipped", message=first)
        elif change:
            message = f"regression since the baseline: {change_words(change)}"
            ET.SubElement(case, "failure", message=message, type="regression").text = message
        out = [f"status: {row.status}", f"host: {row.host or 'local'}"]
        if row.sps and row.status == "pass":
            out.append(f"steps/s: {row.sps:,.0f}")
        if row.detail:
            out.append(row.detail)
        ET.SubElement(case, "system-out").text = "\n".join(out)
    tree = ET.ElementTree(suite)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def _junit_regressions(report: Report) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The regressed cells JUnit reports as failures: only when --fail-on counts regressions."""
    comparison = report.comparison
    if comparison.get("fail_on") not in ("regression", "any"):
        return {}
    changes = comparison.get("changes", [])
    return {(c["env"], c["check"], c.get("host", "")): c for c in changes if c["kind"] == "regression"}


def _flat_provenance(prov: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in prov.items():
        if isinstance(value, dict):
            out.update(_flat_provenance(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return out


# --------------------------------------------------------------------------------------------- HTML

STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #202124; max-width: 1248px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 20px 0 6px; }
.verdict { font-size: 15px; font-weight: 600; margin: 4px 0 10px; }
.verdict.fail { color: #b3261e; } .verdict.pass { color: #1e7e34; }
table.prov { border-collapse: collapse; margin-bottom: 8px; }
table.prov th { text-align: left; color: #5f6368; font-weight: normal; padding: 1px 12px 1px 0;
  vertical-align: top; white-space: nowrap; }
table.prov td { padding: 1px 0; word-break: break-word; }
code { font: 12px ui-monospace, monospace; background: #f1f3f4; padding: 0 3px; }
ul.notes { margin: 4px 0 10px; padding-left: 20px; } ul.notes li { margin: 2px 0; }
ul.notes .where, p.key { color: #5f6368; } li:target { background: #fff4e5; }
table.grid { border-collapse: separate; border-spacing: 0; width: 100%; table-layout: fixed; }
table.grid th, table.grid td { border-right: 1px solid #fff; border-bottom: 1px solid #fff;
  padding: 3px 4px; font-size: 12px; }
table.grid thead th { position: sticky; top: 0; z-index: 1; background: #e8eaed; vertical-align: bottom;
  font-weight: 600; text-align: center; word-break: break-word; }
table.grid thead th.env { text-align: left; width: 19em; }
th.env, td.env { text-align: left; font: 12px ui-monospace, monospace; word-break: break-all; }
td.env { background: #f8f9fa; }
.tot { display: block; font-weight: normal; color: #3c4043; }
.tot .bad { color: #b3261e; font-weight: 600; }
td.cell { text-align: center; color: #fff; }
td.cell small { display: block; opacity: .9; font-size: 11px; }
td.cell[data-status=pass] { background: #2e7d32; }
td.cell[data-status=fail] { background: #c62828; font-weight: 700; }
td.cell[data-status=timeout] { background: #e65100; font-weight: 700; }
td.cell[data-status=engine-error] { background: #6a1b9a; font-weight: 700; }
td.cell[data-status=skip] { background: #e0e0e0; color: #3c4043; }
td.cell[data-status=none] { background: #fff; }
td.cell a { color: inherit; }
td.cell[data-change] { outline: 3px solid #f9ab00; outline-offset: -3px; }
td.cell[data-change=fixed], td.cell[data-change=improvement], td.cell[data-change=new-binding] {
  outline-color: #1a73e8; }
td.cell small.chg { font-weight: 700; }
td.cell:target { outline: 3px solid #202124; }
td.meta { color: #5f6368; font-size: 11px; background: #f8f9fa; word-break: break-all; }
th.meta { width: 4.5em; } th.host { width: 10em; }
div.strip { display: flex; align-items: center; gap: 4px; margin: 2px 0; }
div.strip code { width: 19em; } div.strip img { image-rendering: pixelated; border: 1px solid #dadce0; }
div.strip:target { background: #fff4e5; }
details { margin: 4px 0; border-left: 4px solid #c62828; padding-left: 8px; }
details:target { background: #fff4e5; }
summary { cursor: pointer; font-family: ui-monospace, monospace; }
pre { background: #f8f9fa; padding: 8px; overflow-x: auto; font-size: 12px; white-space: pre-wrap; }
"""


def _fail_id(env: str, check: str, host: str = "") -> str:
    """The anchor of a failed cell's output; `host` only under --every-host (a cell per host)."""
    return f"fail-{_slug(env)}-{_slug(check)}" + (f"-{_slug(host)}" if host else "")


def _skip_notes(report: Report, checks: list[str]) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """Each distinct skip reason gets a number: (reason -> n, check -> n when one reason covers every
    skip of that check, the HTML notes: each reason once, with the checks it skipped)."""
    numbers: dict[str, int] = {}
    by_check: dict[str, dict[str, int]] = {}
    for row in report.rows:
        if row.status == "skip":
            reason = row.detail.strip() or "(no reason given)"
            numbers.setdefault(reason, len(numbers) + 1)
            reasons = by_check.setdefault(row.check, {})
            reasons[reason] = reasons.get(reason, 0) + 1
    covering = {check: numbers[next(iter(r))] for check, r in by_check.items() if len(r) == 1}
    items = []
    for reason, n in numbers.items():
        where = [
            f"{html.escape(check)} {by_check[check][reason]}" + (" (every skip)" if check in covering else "")
            for check in checks
            if reason in by_check.get(check, {})
        ]
        items.append(
            f'<li id="note-{n}"><b>[{n}]</b> {html.escape(reason)} <span class="where">'
            f"&mdash; skipped: {', '.join(where)}</span></li>"
        )
    return numbers, covering, items


def _frames_id(cell: Cell, host: str = "") -> str:
    return f"frames-{_slug(cell.env)}" + (f"-{_slug(host)}" if host else "")


def _frames_html(report: Report) -> str:
    """A thumbnail strip per binding (per host under --every-host) whose render check drew frames:
    Atari should look like Atari."""
    where = (lambda row: row.host) if report.every_host else (lambda row: "")
    strips = "".join(
        f'<div class="strip" id="{_frames_id(row, where(row))}"><code>{html.escape(row.env)}'
        f"{' @ ' + html.escape(row.host) if where(row) else ''}</code>"
        + "".join(
            f'<img alt="{html.escape(row.env)} frame {i}" src="data:image/png;base64,{image}">'
            for i, image in enumerate(row.images)
        )
        + "</div>"
        for row in report.rows
        if row.images
    )
    return f'<h2 id="frames">Frames the render check drew</h2>{strips}' if strips else ""


def _cell_id(env: str, check: str, host: str = "") -> str:
    return f"cell-{_slug(env)}-{_slug(check)}" + (f"-{_slug(host)}" if host else "")


def _cell(
    cell: Cell | None, notes: dict[str, int], change: dict[str, Any] | None = None, host: str = ""
) -> str:
    """One grid cell; `host` names it (its id and links) only under --every-host."""
    if cell is None:
        return '<td class="cell" data-status="none"></td>'
    mark, attrs = "", f' id="{_cell_id(cell.env, cell.check, host)}"'
    if change:  # changed since the baseline: outlined, and says how in words
        attrs += f' data-change="{change["kind"]}"'
        how = f"x{change['ratio']:.2f}" if "ratio" in change else CHANGE_MARKS[change["kind"]]
        mark = f'<small class="chg">{CHANGE_ARROWS[change["kind"]]} {how}</small>'
    if cell.status in STATUS_WORDS:  # fail, timeout, engine-error: in words, linked to the output
        what = {"timeout": "hit its hang guard", ENGINE: "was not run: the engine failed"}.get(cell.status)
        what = what or ("did not report" if cell.error else "failed")
        return (
            f'<td class="cell" data-status="{cell.status}"{attrs} title="{html.escape(cell.check)} {what}">'
            f'<a href="#{_fail_id(cell.env, cell.check, host)}">{STATUS_WORDS[cell.status]}</a>'
            f"<small>{cell.seconds:.1f}s</small>{mark}</td>"
        )
    if cell.status == "skip":
        n = notes.get(cell.detail.strip() or "(no reason given)")
        return f'<td class="cell" data-status="skip"{attrs}>skip <a href="#note-{n}">[{n}]</a>{mark}</td>'
    speed = f"<small>{cell.sps:,.0f}/s</small>" if cell.sps else ""
    if cell.images:
        speed += f'<small><a href="#{_frames_id(cell, host)}">frames</a></small>'
    status = html.escape(cell.status)
    return f'<td class="cell" data-status="{status}"{attrs}>✓ {cell.seconds:.1f}s{speed}{mark}</td>'


def _digests_note(report: Report) -> str:
    """Over several hosts: that every host ran that image, or (--allow-different-images) which ran what."""
    if len(report.digests) < 2:
        return ""
    if len(set(report.digests.values())) == 1:
        return f"; the same image on all {len(report.digests)} hosts"
    each = ", ".join(f"{html.escape(h)}: {html.escape(d[:19])}" for h, d in report.digests.items())
    return f'; <strong class="differs">different images</strong> ({each})'


def _provenance_rows(report: Report) -> list[tuple[str, str]]:
    prov = report.provenance
    rows = [
        ("image", f"<code>{html.escape(report.image)}</code> ({html.escape(report.digest[:19])}), "
         f"variant {html.escape(report.variant)}{_digests_note(report)}"),
        ("started", f"{html.escape(report.started)}, wall time {report.wall_seconds:.1f} s"),
    ]  # fmt: skip
    if prov.get("command"):
        rows.append(("command", f"<code>{html.escape(prov['command'])}</code>"))
    run = prov.get("run", {})
    if run:
        filters = ", ".join(run.get("filters") or []) or "none (every binding)"
        plugins = ", ".join(run.get("plugins") or []) or "none"
        gpus = run.get("gpus", "")
        rows.append(
            (
                "run",
                f"jobs {run.get('jobs')} per host; filters {html.escape(filters)}; plugins "
                f"{html.escape(plugins)}; timeout {html.escape(str(run.get('timeout') or 'per binding'))}; "
                f"GPUs {html.escape(str(gpus))}",
            )
        )
    code = prov.get("pufferlib", {})
    if code:
        revision = code.get("git_revision") or "not a git checkout"
        rows.append(("pufferlib", f"{html.escape(code.get('version', ''))}, git {html.escape(revision)}"))
    machine = prov.get("machine", {})
    if machine:
        load = ", ".join(str(x) for x in machine.get("load", []))
        end = ", ".join(str(x) for x in prov.get("load_end", []))
        rows.append(
            (
                "ran on",
                f"{html.escape(str(machine.get('hostname')))}: {html.escape(str(machine.get('cpu')))}, "
                f"{machine.get('cpus')} logical CPUs, load {load} at the start"
                + (f", {end} at the end" if end else "")
                + f"; {html.escape(str(machine.get('os')))}",
            )
        )
    for url, engine in prov.get("engines", {}).items():
        rows.append(
            (
                f"engine {html.escape(url)}",
                f"{html.escape(str(engine.get('name')))}: Docker {html.escape(str(engine.get('version')))}, "
                f"{engine.get('cpus')} CPUs, {html.escape(str(engine.get('os')))}",
            )
        )
    if report.versions:
        versions = ", ".join(f"{html.escape(k)} {html.escape(str(v))}" for k, v in report.versions.items())
        rows.append(("in the image", versions))
    return rows


def _grid_html(
    report: Report,
    envs: list[str],
    checks: list[str],
    grid: dict[tuple[str, str, str], Cell],
    numbers: dict[str, int],
    covering: dict[str, int],
    changes: dict[tuple[str, str, str], dict[str, Any]],
) -> tuple[str, str]:
    """The grid's thead and tbody rows of a one-queue run: each check with its totals, then (over several
    hosts) which host ran the binding, then its wall time."""
    totals = report.check_counts()
    several_hosts = len(report.hosts) > 1
    head = ['<th class="env">environment</th>']
    for check in checks:
        c = totals[check]
        bad = f' <span class="bad">{c["fail"]} FAIL</span>' if c["fail"] else ""
        note = f' <a href="#note-{covering[check]}">[{covering[check]}]</a>' if check in covering else ""
        head.append(
            f'<th scope="col">{html.escape(check)}'
            f'<span class="tot">{c["pass"]}/{c["total"]}{bad}{note}</span></th>'
        )
    if several_hosts:
        head.append('<th class="host">host</th>')
    head.append('<th class="meta">wall</th>')
    body = []
    for env in envs:
        cells = [
            _cell(grid.get((env, check, "")), numbers, changes.get((env, check, ""))) for check in checks
        ]
        hosts = sorted(
            {grid[env, c, ""].host for c in checks if (env, c, "") in grid and grid[env, c, ""].host}
        )
        host = f'<td class="meta">{html.escape(", ".join(hosts))}</td>' if several_hosts else ""
        wall = report.env_seconds.get(env)
        wall_text = f"{wall:.1f}s" if wall is not None else ""
        body.append(
            f'<tr><th class="env" scope="row">{html.escape(env)}</th>{"".join(cells)}'
            f'{host}<td class="meta">{wall_text}</td></tr>'
        )
    return f"<tr>{''.join(head)}</tr>", "".join(body)


def tally(counts: dict[str, int]) -> str:
    """The counts in words, each status that occurred: "3 failed, 1 timed out, 2 engine errors, 40 passed,
    4 skipped" (failed, passed and skipped always)."""
    words = {"fail": "failed", "timeout": "timed out", ENGINE: "engine errors", "pass": "passed"}
    words["skip"] = "skipped"
    shown = [k for k in words if counts.get(k) or k in ("fail", "pass", "skip")]
    return ", ".join(f"{counts.get(k, 0)} {words[k]}" for k in shown)


def _attempts_html(report: Report) -> str:
    """Every attempt at a binding whose container the engine failed at least once."""
    if not report.attempts:
        return ""
    items = "".join(
        f"<li>{html.escape(a['env'])} on {html.escape(a['host'])}, attempt {a['attempt']}: "
        f"<b>{html.escape(a['outcome'])}</b> after {a['seconds']:.1f}s &mdash; "
        f"{html.escape(a['detail'].splitlines()[0] if a['detail'] else '')}</li>"
        for a in report.attempts
    )
    return f'<p>Attempts (retried with --retries):</p><ul class="notes">{items}</ul>'


def render_html(report: Report) -> str:
    """One HTML file, no external assets: envs down, checks across, a cell each that says what happened."""
    checks: list[str] = []
    envs: list[str] = []
    grid: dict[tuple[str, str, str], Cell] = {}
    per_host = report.every_host  # a cell per host: keyed, and its ids named, by host too
    for row in report.rows:
        if row.check not in checks:
            checks.append(row.check)
        if row.env not in envs:
            envs.append(row.env)
        grid[row.env, row.check, row.host if per_host else ""] = row
    counts = report.counts()
    numbers, covering, notes = _skip_notes(report, checks)
    changes = {
        (c["env"], c["check"], c.get("host", "")): c
        for c in report.comparison.get("changes", [])
        if c["check"]
    }

    if per_host:

        def host_cell(env: str, check: str, host: str) -> str:
            key = (env, check, host)
            return _cell(grid.get(key), numbers, changes.get(key), host)

        thead, tbody = grid_html(
            report.rows, report.hosts, envs, checks, host_cell, report.host_seconds, report.host_differences
        )
    else:
        thead, tbody = _grid_html(report, envs, checks, grid, numbers, covering, changes)
    differs = differs_html(report.host_differences, report.hosts, _cell_id) if per_host else ""

    def entry(r: Cell) -> str:
        why = {"timeout": " (timed out)", ENGINE: " (not run: the engine failed)"}.get(r.status, "")
        why = why or (" (did not report)" if r.error else "")
        return (
            f'<details id="{_fail_id(r.env, r.check, r.host if per_host else "")}" open>'
            f"<summary>{html.escape(r.env)} / {html.escape(r.check)}{why}"
            f"{f' on {html.escape(r.host)}' if r.host else ''}</summary>"
            f"<pre>{html.escape(r.detail)}</pre></details>"
        )

    failure_html = "".join(entry(r) for r in report.rows if r.status in FAILED)
    engine_html = "".join(entry(r) for r in report.rows if r.status == ENGINE) + _attempts_html(report)
    # under --baseline the exit status is --fail-on's: the headline says the same as the exit status
    against = report.comparison.get("failed")
    failed = against if against is not None else report.failed
    verdict, word = ("fail", "FAILED") if failed else ("pass", "PASSED")
    if against is not None:
        word += f" under --fail-on {html.escape(str(report.comparison.get('fail_on')))}"
    prov = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in _provenance_rows(report))
    skips = (
        f'<h2 id="skips">Why cells were skipped</h2><ul class="notes">{"".join(notes)}</ul>' if notes else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>PufferTank matrix: {tally(counts)}</title>
<style>{STYLE}{HOSTS_STYLE if per_host else ""}</style></head><body>
<h1>PufferTank integration matrix</h1>
<p class="verdict {verdict}">{word}: {tally(counts)} of {len(report.rows)} cells
({len(envs)} bindings &times; {len(checks)} checks)</p>
{since_html(report.comparison, _fail_id, _cell_id)}
{differs}
<table class="prov">{prov}</table>
{skips}
<p class="key">Under each check: bindings that passed it / bindings run, and the failures; FAIL links to
its output below; [n] is the skip reason above; an outlined cell changed since the baseline (&#9660; slower,
&#9650; faster, ! a new failure, &#10004; fixed, + a new binding).</p>
<table class="grid"><thead>{thead}</thead>
<tbody>{tbody}</tbody>
</table>
<h2 id="failures">Failures</h2>{failure_html or "<p>none</p>"}
{f'<h2 id="engine">Engine errors (not the envs)</h2>{engine_html}' if engine_html else ""}
{_frames_html(report)}
</body></html>
"""
