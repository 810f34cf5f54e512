"""The matrix report of an --every-host run: a column group per host (each check, then the binding's wall
time there), a "differs" column naming what differs between the hosts, and the "Differs between hosts"
section, each entry linking to the cells it compares (the differences are tank/matrix/hostdiff.py's)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

WORDS = {
    "status": "status differs",
    "renderer": "renderer differs",
    "frames": "frames differ",
    "speed": "steps/s differ",
}
STYLE = """
table.grid thead tr.group th { top: 0; background: #dadce0; }
table.grid thead tr.checks th { top: 22px; }
table.grid th.hostgroup { border-left: 3px solid #fff; font-family: ui-monospace, monospace; }
td.differs { font-size: 11px; background: #fff4e5; color: #202124; }
td.differs a { display: block; color: #b06000; font-weight: 600; }
"""


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-")


def differ_id(env: str, check: str) -> str:
    return f"differ-{slug(env)}-{slug(check)}"


def grid_html(
    rows: list[Any],
    hosts: list[str],
    envs: list[str],
    checks: list[str],
    cell: Callable[[str, str, str], str],
    host_seconds: dict[str, dict[str, float]],
    differences: list[dict[str, Any]],
) -> tuple[str, str]:
    """The grid's thead and tbody rows: `cell(env, check, host)` renders one cell."""
    totals: dict[tuple[str, str], dict[str, int]] = {}
    for row in rows:
        counts = totals.setdefault((row.host, row.check), {"pass": 0, "fail": 0, "total": 0})
        counts[row.status] = counts.get(row.status, 0) + 1
        counts["total"] += 1
    group = ['<th class="env" rowspan="2">environment</th>']
    group += [
        f'<th class="hostgroup" colspan="{len(checks) + 1}" scope="colgroup">{html.escape(h)}</th>'
        for h in hosts
    ]
    group.append('<th class="meta" rowspan="2">differs</th>')
    heads = []
    for host in hosts:
        for check in checks:
            c = totals.get((host, check), {"pass": 0, "fail": 0, "total": 0})
            bad = f' <span class="bad">{c["fail"]} FAIL</span>' if c["fail"] else ""
            tot = f'<span class="tot">{c["pass"]}/{c["total"]}{bad}</span>'
            heads.append(f'<th scope="col">{html.escape(check)}{tot}</th>')
        heads.append('<th class="meta">wall</th>')
    head = f'<tr class="group">{"".join(group)}</tr><tr class="checks">{"".join(heads)}</tr>'
    by_env: dict[str, list[dict[str, Any]]] = {}
    for diff in differences:
        by_env.setdefault(diff["env"], []).append(diff)
    body = []
    for env in envs:
        tds = []
        for host in hosts:
            tds += [cell(env, check, host) for check in checks]
            wall = host_seconds.get(host, {}).get(env)
            tds.append(f'<td class="meta">{f"{wall:.1f}s" if wall is not None else ""}</td>')
        marks = "".join(
            f'<a href="#{differ_id(env, d["check"])}">{html.escape(d["check"])}: {WORDS[d["kind"]]}</a>'
            for d in by_env.get(env, [])
        )
        differs = f'<td class="differs">{marks}</td>' if marks else '<td class="meta"></td>'
        body.append(f'<tr><th class="env" scope="row">{html.escape(env)}</th>{"".join(tds)}{differs}</tr>')
    return head, "".join(body)


def differs_html(
    differences: list[dict[str, Any]], hosts: list[str], cell_id: Callable[[str, str, str], str]
) -> str:
    """The section: how many cells differ, then each, worst kind first, linking to every host's cell."""
    items = []
    for d in differences:
        values = []
        for host, value in zip(d["hosts"], d["values"], strict=True):
            shown = f"{value:,.0f} steps/s" if d["kind"] == "speed" else str(value)
            link = f'<a href="#{cell_id(d["env"], d["check"], host)}">{html.escape(host)}</a>'
            values.append(f"{link} {html.escape(shown)}")
        extra = ""
        if d["kind"] == "speed":
            extra = f" (x{d['ratio']:.2f}; beyond the band of {d['band']:.0%}, {d['band_kind']})"
        items.append(
            f'<li id="{differ_id(d["env"], d["check"])}" data-kind="{d["kind"]}"><b>{WORDS[d["kind"]]}</b> '
            f"{html.escape(d['env'])} {html.escape(d['check'])}: {'; '.join(values)}{extra}</li>"
        )
    summary = f"{len(differences)} cell(s) differ" if differences else "no cell differs"
    return (
        f'<h2 id="differs">Differs between hosts</h2><p>every binding ran on each of {len(hosts)} hosts: '
        f'<b>{summary}</b></p><ul class="notes">{"".join(items)}</ul>'
    )
