"""`puffer plot`: three seeds of one config become one curve with a min-max band (PNG and SVG); another
config is told apart in the legend; bad input names what is wrong."""

from __future__ import annotations

import json
import struct

import pytest

from pufferlib.cli import main
from pufferlib.train import train


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for seed in (1, 2, 3):
        train("ocean/squared", {"train.seed": seed}, run_dir=root / "{env}" / f"seed{seed}")
    train("ocean/squared", {"train.learning_rate": 3e-3}, run_dir=root / "{env}" / "fast")
    return root


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_three_seeds_make_a_band(runs, tmp_path, capsys):
    seeds = [runs / "ocean" / "squared" / f"seed{s}" for s in (1, 2, 3)]
    out = [tmp_path / "curves.png", tmp_path / "curves.svg"]
    assert main(["plot", *map(str, seeds), "-o", str(out[0]), "-o", str(out[1]), "--json"]) == 0
    drawn = json.loads(capsys.readouterr().out)
    assert drawn["files"] == [str(p) for p in out]
    [group] = drawn["groups"]
    assert group["seeds"] == [1, 2, 3] and "mean and min-max of 3 seeds" in group["label"]
    width, height = png_size(out[0])
    assert width > 1000 and height > 400
    svg = out[1].read_text()
    assert svg.count("fill-opacity: 0.25") >= 1  # the band (matplotlib writes fill_between as a filled path)


def test_folders_are_searched_and_configs_told_apart(runs, tmp_path, capsys):
    out = tmp_path / "all.png"
    assert main(["plot", str(runs), "-o", str(out), "--json"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert sorted(len(g["runs"]) for g in groups) == [1, 3]
    single = next(g for g in groups if len(g["runs"]) == 1)
    assert "train.learning_rate=0.003" in single["label"]
    assert out.is_file()


def test_bad_input_is_named(runs, tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    assert "no run directory" in capsys.readouterr().err
    assert main(["plot", str(runs), "-o", str(tmp_path / "x.jpg")]) == 2
    assert "write .png or .svg" in capsys.readouterr().err
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "metrics.jsonl").write_text("{not json\n")
    assert main(["plot", str(tmp_path / "broken"), "-o", str(tmp_path / "b.png")]) == 2
    assert "line 1 is not JSON" in capsys.readouterr().err
