"""The matrix report's "since baseline" section: counts, then the changed cells worst first, then the
package versions that moved between the two images (the comparison is tank/matrix/baseline.py's)."""

from __future__ import annotations

import html
from typing import Any

WORDS = {
    "new-failure": "new failure",
    "regression": "regression",
    "gone": "gone",
    "new-binding": "new binding",
    "fixed": "fixed",
    "improvement": "improvement",
}


def change_words(c: dict[str, Any]) -> str:
    """A figure's change and its band in words: "28,900 -> 15,900 steps/s (x0.55; band: worse by more
    than 40 % counts, tolerance)"."""
    return (
        f"{c['was_value']:,.0f} -> {c['value']:,.0f} {c['figure']} (x{c['ratio']:.2f}; band: worse by more "
        f"than {c['band']:.0%} counts, {c['band_kind']})"
    )


def since_html(comparison: dict[str, Any], fail_id, cell_id) -> str:
    """The section's HTML; `fail_id(env, check, host)` is the anchor of a failed cell's output,
    `cell_id(env, check, host)` that of its grid cell (host: "" but under --every-host): a new failure
    links to its output, every other changed cell to itself."""
    if not comparison:
        return ""
    base = comparison.get("baseline", {})
    counts = ", ".join(f"{n} {WORDS[k]}" for k, n in comparison["counts"].items() if n) or "no changes"
    items = []
    for c in comparison["changes"]:
        host = c.get("host", "")
        what = f"{html.escape(c['env'])} {html.escape(c['check'])}".strip()
        what += f" on {html.escape(host)}" if host else ""
        if c["kind"] == "new-failure":
            what = f'<a href="#{fail_id(c["env"], c["check"], host)}">{what}</a>'
        elif c["check"]:  # a binding that is gone has no cell left to link to
            what = f'<a href="#{cell_id(c["env"], c["check"], host)}">{what}</a>'
        extra = ""
        if "ratio" in c:
            extra = ": " + html.escape(change_words(c))
        elif c.get("was"):
            extra = f": was {html.escape(str(c['was']))}, now {html.escape(str(c['status']))}"
        items.append(f'<li data-kind="{c["kind"]}"><b>{WORDS[c["kind"]]}</b> {what}{extra}</li>')
    moved = "".join(
        f"<li><code>{html.escape(v['name'])}</code> {html.escape(str(v['was']))} &rarr; "
        f"{html.escape(str(v['now']))}</li>"
        for v in comparison.get("versions", [])
    )
    return (
        f'<h2 id="since">Since baseline</h2><p>against <code>{html.escape(str(base.get("image")))}</code> '
        f"({html.escape(str(base.get('digest', ''))[:19])}, {html.escape(str(base.get('started')))}): "
        f'<b>{counts}</b></p><ul class="notes">{"".join(items)}</ul>'
        + (
            f'<p>versions moved:</p><ul class="notes">{moved}</ul>'
            if moved
            else "<p>versions moved: none</p>"
        )
    )
