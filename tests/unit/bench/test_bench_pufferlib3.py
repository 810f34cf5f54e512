"""`puffer bench --pufferlib3`: PufferLib 3.0's dashboard and logs read back (from a real capture of its
`puffer train puffer_cartpole` on this box's CPU), the tables, the CLI's errors, and the peer build's plan.
Nothing here builds or runs the peer."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _strict import skip_or_fail

from pufferlib import cli, plot
from pufferlib.bench import pl3_dashboard, pufferlib3, pufferlib3_peer, report

DATA = Path(__file__).parent / "data"
CAPTURE = DATA / "pl3_dashboard_cartpole.txt"  # stdout of the driver's train mode, FORCE_COLOR=1, 160 columns
LOG = DATA / "pl3_log_cartpole.jsonl"  # the log lines of that same run


def test_the_dashboard_frames_are_read_through_the_colour_escapes():
    text = CAPTURE.read_text()
    assert "\x1b[" in text  # the capture really has terminal escapes to strip
    shown = pl3_dashboard.frames(text)
    assert [f["epoch"] for f in shown] == [0, 1, 2]
    last = shown[-1]
    assert last["steps"] == 524_300 and last["sps"] == 3_500 and last["uptime"] == 187
    assert last["stats"]["score"] == 24.918 and last["stats"]["episode_length"] == 24.918
    assert "policy_loss" not in last["stats"]  # the losses column is not a user stat


def test_the_dashboard_agrees_with_the_log_lines_of_the_same_run():
    shown = pl3_dashboard.frames(CAPTURE.read_text())
    lines = pl3_dashboard.log_lines(LOG)
    assert len(lines) == len(shown) - 1  # the first frame comes before any log
    for f, line in zip(shown[1:], lines, strict=True):
        assert abs(f["steps"] - line["agent_steps"]) <= 50  # abbreviated to 4 digits
        assert abs(f["sps"] - line["SPS"]) / line["SPS"] < 0.05
        assert f["stats"]["score"] == round(line["environment/score"], 3)
        assert f["uptime"] == int(line["uptime"])


def test_steady_frames_leave_out_the_start_and_the_inflated_completion_frame():
    base = {"steps": 1.0, "epoch": 1.0, "uptime": 1, "stats": {}}
    shown = [{**base, "sps": s} for s in (0, 30e3, 35e3, 34e3, 156e3)]
    assert [f["sps"] for f in pl3_dashboard.steady(shown)] == [30e3, 35e3, 34e3]
    real = pl3_dashboard.steady(pl3_dashboard.frames(CAPTURE.read_text()))
    assert [f["epoch"] for f in real] == [1, 2]


def test_text_without_a_readable_frame_is_an_error_naming_what_it_lacks():
    with pytest.raises(pl3_dashboard.DashboardError, match="no PufferLib dashboard frame"):
        pl3_dashboard.frames("Traceback (most recent call last):\n  ...\n")
    broken = pl3_dashboard.strip(CAPTURE.read_text().split(pl3_dashboard.HOME)[-1]).replace("SPS", "XPS")
    with pytest.raises(pl3_dashboard.DashboardError, match="no 'SPS' row"):
        pl3_dashboard.frame(broken)


def test_the_exported_curve_is_a_run_puffer_plot_reads(tmp_path):
    points = pl3_dashboard.curve(pl3_dashboard.log_lines(LOG))
    assert [p[0] for p in points] == [262_144, 524_288]
    out = pl3_dashboard.export_run(points, tmp_path / "pl3", "PufferLib 3.0 puffer_cartpole")
    run = plot.load_run(out)
    assert run.env == "PufferLib 3.0 puffer_cartpole"
    assert list(run.steps) == [262_144, 524_288] and run.returns[-1] == pytest.approx(24.9175, abs=1e-3)
    assert (out / "curve.csv").read_text().splitlines()[0] == "agent_steps,seconds,score"


def raw(peer, sps=None, skip=None, name="cartpole"):
    row = {"repeat": 0, "workload": name, "description": name, "num_envs": 1024, "peer": peer}
    row.update({"sps": sps} if sps else {"skip": skip})
    return row


def test_the_raw_table_sets_ours_beside_pufferlib3_with_a_ratio():
    rows = [raw("pl3", s) for s in (5.0e6, 5.4e6, 5.2e6)] + [raw("native", s) for s in (6.0e6, 6.4e6, 6.2e6)]
    rows += [raw("pl3", 1.7e6, name="breakout"), raw("native", skip="not built yet", name="breakout")]
    lines = report.table(rows, ["pl3", "native"]).splitlines()
    assert lines[0] == "| workload | envs | PufferLib 3.0 | ours (native) | ours / PL 3.0 |"
    assert lines[2] == "| cartpole | 1024 | 5.20M ±4% | 6.20M ±3% | 1.19x |"
    assert lines[3] == "| breakout | 1024 | 1.70M ±0% | n/a | - |"


def test_the_train_table_gives_medians_a_ratio_and_counts_errors():
    def row(side, sps=None, score=None, error=None):
        r = {"repeat": 0, "env": "cartpole", "seconds_asked": 60.0, "side": side}
        r.update(
            {"error": error} if error else {"sps": sps, "score": score, "steps": int(sps * 61), "seconds": 61}
        )
        return r

    rows = [row("pl3", 35e3, 180.0), row("pl3", 34e3, 170.0), row("pl3", 36e3, 190.0)]
    rows += [row("ours", 42e3, 200.0), row("ours", 44e3, 210.0), row("ours", error="RuntimeError: x")]
    line = report.train_table(rows).splitlines()[-1]
    assert line == (
        "| cartpole | 60 s | 35.0k ±3% | 43.0k ±2%, error (1/3 samples) | 1.23x | 180.0 | 205.0 "
        "| 2,135,000 in 61 s | 2,623,000 in 61 s |"
    )
    skipped = [
        row("pl3", 35e3, 180.0),
        {"repeat": 0, "env": "cartpole", "side": "ours", "skip": "not built yet"},
    ]
    assert (
        report.train_table(skipped).splitlines()[-1].endswith("| - | 180.0 | n/a | 2,135,000 in 61 s | n/a |")
    )


def bench(*args, capsys):
    code = cli.main(["bench", "--pufferlib3", *args])
    return code, capsys.readouterr().err


def test_a_missing_peer_venv_names_the_build_script(tmp_path, capsys):
    code, err = bench(str(tmp_path / "nowhere" / "bin" / "python"), capsys=capsys)
    assert code == 2
    assert "no PufferLib 3.0 peer at" in err and "python -m pufferlib.bench.pufferlib3_peer" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_unknown_env_is_refused_with_the_valid_ones(capsys):
    code, err = bench("--pl3-envs", "cartpole,tetris", capsys=capsys)
    assert code == 2
    assert "--pl3-envs: unknown tetris; valid: squared, cartpole, breakout, pong, snake, connect4" in err


def test_a_timed_span_too_short_to_measure_is_refused(capsys):
    code, err = bench("--raw-seconds", "0", capsys=capsys)
    assert code == 2 and "--raw-seconds must be at least 0.1, got 0.0" in err
    code, err = bench("--repeats", "0", capsys=capsys)
    assert code == 2 and "--repeats must be at least 1, got 0" in err


def test_a_native_env_not_in_this_checkout_is_not_built_yet():
    assert pufferlib3.native_missing("no_such_env").startswith("not built yet")


def test_the_driver_refuses_an_unknown_mode():
    out = subprocess.run(
        [sys.executable, str(pufferlib3.DRIVER), "bogus", "{}"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "valid: steps, envs, train" in out.stderr


def test_the_build_plan_is_shown_and_nothing_is_made(tmp_path, capsys):
    venv = tmp_path / "peer"
    assert pufferlib3_peer.main(["--venv", str(venv), "--python", sys.executable, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.count(": to do") == 6 and not venv.exists()
    assert "pip download --no-clean --no-deps --no-build-isolation" in out
    assert "install --no-build-isolation --no-deps" in out and "heavyball==2.2.1" in out


def test_the_build_runs_without_nvcc_on_path(tmp_path):
    cuda, other = tmp_path / "cuda" / "bin", tmp_path / "bin"
    for d in (cuda, other):
        d.mkdir(parents=True)
    (cuda / "nvcc").write_text("#!/bin/sh\n")
    os.chmod(cuda / "nvcc", 0o755)
    assert pufferlib3_peer.path_without("nvcc", f"{cuda}:{other}:/usr/bin") == f"{other}:/usr/bin"


def test_prepare_prunes_the_c_envs_not_compared_and_makes_the_missing_folders(tmp_path):
    ocean = tmp_path / "pufferlib" / "ocean"
    for name in ("cartpole", "impulse_wars", "tetris"):
        (ocean / name).mkdir(parents=True)
        (ocean / name / "binding.c").write_text("")
    (ocean / "torch.py").write_text("")
    assert pufferlib3_peer.pruned(tmp_path) == ["impulse_wars", "tetris"]
    assert not pufferlib3_peer._prepared(tmp_path)
    pufferlib3_peer._prepare(tmp_path)
    assert pufferlib3_peer._prepared(tmp_path)
    assert sorted(p.name for p in ocean.iterdir()) == ["cartpole", "torch.py"]
    assert all((tmp_path / d).is_dir() for d in pufferlib3_peer.EMPTY_DIRS)


def test_envs_keeps_more_c_envs_and_puts_back_one_an_earlier_build_pruned(tmp_path, capsys):
    """--envs rware: the prune keeps it, and a source pruned by an earlier build gets its folder back from
    the pinned sdist (the build then reinstalls, compiling it: the step checks its binding)."""
    from pufferlib.ocean.contracts import catalog

    ocean = tmp_path / "pufferlib" / "ocean"
    (ocean / "cartpole").mkdir(parents=True)
    (ocean / "cartpole" / "binding.c").write_text("")
    pufferlib3_peer._prepare(tmp_path)
    assert pufferlib3_peer._prepared(tmp_path) and not pufferlib3_peer._prepared(tmp_path, ("rware",))
    venv = tmp_path / "peer"
    assert (
        pufferlib3_peer.main(
            ["--venv", str(venv), "--python", sys.executable, "--dry-run", "--envs", "rware"]
        )
        == 0
    )
    assert (
        "prune Ocean to cartpole, squared, breakout, pong, snake, connect4, rware: to do"
        in capsys.readouterr().out
    )
    if not (catalog.sdist_cache() / catalog.SDIST).is_file():
        skip_or_fail(
            f"no {catalog.SDIST} in {catalog.sdist_cache()}: `python -m pufferlib.ocean.contracts.catalog "
            "fetch`"
        )
    pufferlib3_peer._prepare(tmp_path, ("rware",))
    assert (ocean / "rware" / "binding.c").is_file() and (ocean / "rware" / "rware.py").is_file()
    assert pufferlib3_peer._prepared(tmp_path, ("rware",)) and not pufferlib3_peer._prepared(tmp_path)
    with pytest.raises(SystemExit, match=r"pufferlib 3\.0\.0 has no C env no_such_env"):
        pufferlib3_peer._prepare(tmp_path, ("no_such_env",))


def test_a_missing_interpreter_for_the_venv_is_a_one_line_error(capsys):
    assert pufferlib3_peer.main(["--python", "no-such-python-3.11", "--dry-run"]) == 2
    assert "no interpreter 'no-such-python-3.11'" in capsys.readouterr().err
