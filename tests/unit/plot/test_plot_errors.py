"""`puffer plot` on damaged runs: a torn last line of metrics.jsonl (what a kill leaves) is skipped
with a warning; a corrupt summary.json or config.toml, a record without global_step, or an output
that cannot be written is one error line naming the file (exit 2)."""

from __future__ import annotations

import json
import os

import pytest

from pufferlib.cli import main

pytest.importorskip("matplotlib", reason="puffer plot needs pufferlib[plot]")


def record(step: int) -> str:
    return json.dumps(
        {"update": step, "global_step": 100 * step, "time": 0.1 * step, "episodic_return": step}
    )


@pytest.fixture
def run(tmp_path):
    """A run directory as `puffer train` leaves it: metrics, config and summary."""
    path = tmp_path / "run"
    path.mkdir()
    (path / "metrics.jsonl").write_text("".join(record(i) + "\n" for i in range(1, 6)))
    (path / "config.toml").write_text('env_name = "ocean/squared"\n[train]\nseed = 1\n')
    (path / "summary.json").write_text(json.dumps({"env": "ocean/squared", "solved_score": 0.9}))
    return path


def plot(run, tmp_path, capsys, out: str = "c.png") -> tuple[int, str]:
    code = main(["plot", str(run), "-o", str(tmp_path / out)])
    return code, capsys.readouterr().err


def test_a_torn_last_line_is_skipped_with_a_warning(run, tmp_path, capsys):
    with open(run / "metrics.jsonl", "a") as f:
        f.write(record(6)[:25])  # killed mid-write: no newline
    code, err = plot(run, tmp_path, capsys)
    assert code == 0, err
    assert "puffer plot: warning:" in err and "skipped the torn last line 6" in err
    assert (tmp_path / "c.png").is_file()


def test_a_bad_line_that_is_not_the_torn_last_one_is_an_error(run, tmp_path, capsys):
    with open(run / "metrics.jsonl", "a") as f:
        f.write("{not json\n" + record(7) + "\n")
    code, err = plot(run, tmp_path, capsys)
    assert code == 2 and "metrics.jsonl line 6 is not JSON" in err


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("summary.json", '{"env": "ocean/sq', "summary.json is not JSON"),
        ("summary.json", "[1, 2]", "summary.json is not a JSON object"),
        ("config.toml", "[train\nseed = ", "config.toml is not TOML"),
        ("metrics.jsonl", '{"time": 1.0, "episodic_return": 0.5}\n', "line 1 has no numeric global_step"),
        ("metrics.jsonl", "[1, 2]\n", "line 1 is not a record"),
    ],
)
def test_a_corrupt_file_is_named(run, tmp_path, capsys, name, text, message):
    (run / name).write_text(text)
    code, err = plot(run, tmp_path, capsys)
    assert code == 2 and f"puffer plot: error: {run}/{name}" in err and message in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_metrics_are_streamed_so_an_endless_file_is_named_not_read_into_memory(run, tmp_path, capsys):
    """A metrics.jsonl that never ends a line (a link to /dev/zero): one line past the bound, exit 2."""
    (run / "metrics.jsonl").unlink()
    (run / "metrics.jsonl").symlink_to("/dev/zero")
    code = main(["plot", str(tmp_path), "-o", str(tmp_path / "c.png")])  # found by its folder
    err = capsys.readouterr().err
    assert code == 2 and "metrics.jsonl line 1 is longer than 1,024 KiB: not a metrics.jsonl" in err, err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permissions")
def test_an_unwritable_output_is_named(run, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, err = plot(run, tmp_path, capsys, out="locked/c.png")
    finally:
        locked.chmod(0o700)
    assert code == 2 and f"cannot write {locked}/c.png" in err and "choose another -o/--out" in err, err


def test_an_output_under_a_file_is_named(run, tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    code, err = plot(run, tmp_path, capsys, out="afile/c.png")
    assert code == 2 and "cannot write" in err and "choose another -o/--out" in err, err
