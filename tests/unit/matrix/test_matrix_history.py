"""`puffertank matrix --history`: three reports derived from a real run's matrix.json (the fixture of
test_matrix_baseline) laid side by side, oldest first, as HTML, CSV and PNG; bad input exits 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pufferlib.tank.cli import main

FIXTURE = Path(__file__).parent / "data" / "matrix-ocean.json"


def write_series(tmp_path: Path) -> tuple[list[Path], dict]:
    """Three report folders, given out of order: the newest has a failed step cell on one binding and
    half the step steps/s on the other."""
    doc = json.loads(FIXTURE.read_text())
    envs = sorted({r["env"] for r in doc["rows"]})
    folders = []
    for name, started, digest in [
        ("c", "2026-12-03T10:00:00+00:00", "sha256:cccccccccccccccc"),
        ("a", "2026-12-01T10:00:00+00:00", "sha256:aaaaaaaaaaaaaaaa"),
        ("b", "2026-12-02T10:00:00+00:00", "sha256:bbbbbbbbbbbbbbbb"),
    ]:
        copy = json.loads(json.dumps(doc))
        copy["started"], copy["digest"] = started, digest
        if name == "c":
            for row in copy["rows"]:
                if row["check"] == "step" and row["env"] == envs[0]:
                    row["status"], row["detail"] = "fail", "AssertionError: planted"
                if row["check"] == "step" and row["env"] == envs[1]:
                    row["sps"] /= 2
                    row["samples"] = [s / 2 for s in row.get("samples") or []]
        (tmp_path / name).mkdir()
        (tmp_path / name / "matrix.json").write_text(json.dumps(copy))
        folders.append(tmp_path / name)
    return folders, {"envs": envs, "doc": doc}


def test_history_writes_html_csv_and_png_oldest_first(tmp_path, capsys):
    folders, facts = write_series(tmp_path)
    out = tmp_path / "history"
    assert main(["matrix", "--history", *map(str, folders), "--report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "history.html" in printed and "history.png" in printed

    rows = list(csv.DictReader((out / "history.csv").open()))
    assert [r["digest"][7:8] for r in rows][:: len(rows) // 3] == ["a", "b", "c"]  # by time, not argv
    first, second = facts["envs"][:2]
    step = {(r["digest"][7], r["env"]): r for r in rows if r["check"] == "step"}
    assert step["c", first]["status"] == "fail" and step["c", first]["sps"] == ""
    assert float(step["c", second]["sps"]) == pytest.approx(float(step["b", second]["sps"]) / 2)

    page = (out / "history.html").read_text()
    head = page.split("<thead>")[1].split("</thead>")[0]
    assert head.index("aaaaaaaaaaaa") < head.index("bbbbbbbbbbbb") < head.index("cccccccccccc")
    row = page.split(f"<th>{first}</th>")[1].split("</tr>")[0]
    assert row.count('data-status="pass"') == 2 and row.rstrip().count("FAIL") == 1
    assert "<polyline" in page.split(f"<th>{second}</th>")[1].split("</tr>")[0]  # its sparkline
    assert "http" not in page  # self-contained
    assert (out / "history.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_history_of_one_report_or_with_baseline_is_a_usage_error(tmp_path, capsys):
    folders, _ = write_series(tmp_path)
    assert main(["matrix", "--history", str(folders[0])]) == 2
    assert "two or more reports" in capsys.readouterr().err
    assert main(["matrix", "--history", *map(str, folders), "--baseline", str(folders[0])]) == 2
    assert "do not go together" in capsys.readouterr().err


def test_history_with_an_old_schema_names_the_file(tmp_path, capsys):
    folders, _ = write_series(tmp_path)
    doc = json.loads((folders[1] / "matrix.json").read_text())
    doc.pop("schema")
    (folders[1] / "matrix.json").write_text(json.dumps(doc))
    assert main(["matrix", "--history", *map(str, folders), "--report", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err
    assert "--history" in err and "schema" in err and str(folders[1]) in err and "Traceback" not in err
