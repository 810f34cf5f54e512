"""`puffer bench --pufferlib3 --to-score` (pufferlib/bench/pl3_to_score.py): the parts that need no
PufferLib 3.0 peer (CI has none): curves read back from both sides' logs, time to score and its median
with runs that never got there, the table, the plot file, and bad flags refused naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from pufferlib import cli, plot
from pufferlib.bench import pl3_dashboard, pl3_to_score, pufferlib3

LOG = Path(__file__).parent / "data" / "pl3_log_cartpole.jsonl"  # a real PufferLib 3.0 cartpole log
# two lines of a real PufferLib 3.0 snake log (its first and last with episodes): `score` a snake's length
SNAKE_LOG = Path(__file__).parent / "data" / "pl3_log_snake.jsonl"


def test_the_first_time_at_or_above_the_target_is_the_time_to_score():
    curve = [(1.0, 20.0), (2.0, 194.9), (3.0, 195.0), (4.0, 120.0), (5.0, 300.0)]
    assert pl3_to_score.first_reach(curve, 195) == 3.0
    assert pl3_to_score.first_reach(curve, 301) is None
    assert pl3_to_score.first_reach([], 195) is None


@pytest.mark.parametrize(
    ("times", "median"),
    [
        ([3.0, 1.0, 2.0], 2.0),
        ([3.0, None, 5.0], 5.0),  # the one that never got there is the slowest, not left out
        ([None, 2.0, None], None),  # 1 of 3 reached it: no median time
        ([1.0, 2.0], 1.5),
        ([1.0, None], None),
        ([], None),
    ],
)
def test_the_median_counts_a_run_that_never_reached_the_score_as_slowest(times, median):
    assert pl3_to_score.median_time(times) == median


def test_our_curve_is_read_back_from_a_real_training_run():
    """A short real `puffer train ocean/cartpole` run (pufferlib3.train_ours): wall seconds rise, the
    scores are its mean returns, and the time to a score it logged is one of its points."""
    missing = pufferlib3.native_missing("cartpole")
    if missing:
        pytest.skip(f"ocean/cartpole: {missing}")
    steps = ["--train.total_timesteps", "50000"]  # a step budget, not a time one: a loaded box is slow
    row = pufferlib3.train_ours("ocean/cartpole", 300, None, ["--train.seed", "1", *steps])
    curve = pl3_to_score.curve_of(row)
    assert curve, row
    seconds = [t for t, _ in curve]
    assert seconds == sorted(seconds) and seconds[-1] <= row["seconds"] + 1
    assert curve[-1][1] == pytest.approx(row["score"])
    top = max(s for _, s in curve)
    assert pl3_to_score.first_reach(curve, top) == min(t for t, s in curve if s == top)


def test_pufferlib3s_curve_is_read_back_from_its_real_log():
    curve = pl3_to_score.curve_of({"curve": pl3_dashboard.curve(pl3_dashboard.log_lines(LOG))})
    assert curve[0] == (pytest.approx(113.3103563785553), pytest.approx(19.637731960841588))
    assert len(curve) == 2


def test_pufferlib3s_snake_curve_reads_its_episode_return_not_a_snakes_length():
    """Ours reads the return on snake; so must its side, or 0 (10 food a life) would be a length of 0."""
    lines = pl3_dashboard.log_lines(SNAKE_LOG)
    curve = pl3_dashboard.curve(lines, pl3_to_score.PL3_SCORE_KEYS["snake"])
    assert [s for _, _, s in curve] == [pytest.approx(x["environment/episode_return"]) for x in lines]
    assert curve[0][2] < 0 < curve[1][2] and all(x["environment/score"] > 2 for x in lines)
    assert [s for _, _, s in pl3_dashboard.curve(lines)] == [x["environment/score"] for x in lines]
    assert "its curve reads environment/episode_return" in pl3_to_score.commands("snake", 30)["pl3-mlp"]
    assert "its curve reads" not in pl3_to_score.commands("cartpole", 30)["pl3-mlp"]


def _row(side: str, seed: int, curve: list[tuple[float, float]], target: float) -> dict:
    points = [(1000 * i, t, s) for i, (t, s) in enumerate(curve)]
    row = {"env": "cartpole", "side": side, "seed": seed, "curve": points, "score": curve[-1][1]}
    return {**row, "time_to_score": pl3_to_score.first_reach(curve, target)}


RESULTS = [
    _row("ours", 1, [(1.0, 50.0), (3.0, 200.0), (9.0, 500.0)], 195),
    _row("ours", 2, [(1.0, 60.0), (4.0, 196.0)], 195),
    _row("ours", 3, [(1.0, 70.0), (8.0, 150.0)], 195),
    _row("pl3-mlp", 1, [(2.0, 10.0), (7.0, 197.0), (20.0, 100.0)], 195),
    _row("pl3-mlp", 2, [(2.0, 10.0), (9.0, 100.0)], 195),
    {"env": "cartpole", "side": "pl3", "seed": 1, "error": "RuntimeError: logged nothing"},
]


def test_the_table_gives_each_configuration_its_median_and_every_seed():
    lines = pl3_to_score.table(RESULTS, 195).splitlines()
    assert lines[2] == "| cartpole | ours, own config | 4.0 | 2/3 | 3.0, 4.0, - |"
    assert lines[3] == "| cartpole | PufferLib 3.0, rnn_name = None | not reached (195) | 1/2 | 7.0, - |"
    assert len(lines) == 4  # the errored configuration has no row of times


def test_the_seeds_rotate_which_configuration_goes_first():
    orders = [pl3_to_score.rotate(i) for i in range(3)]
    assert sorted(o[0] for o in orders) == sorted(pl3_to_score.SIDES)
    assert all(sorted(o) == sorted(pl3_to_score.SIDES) for o in orders)


def test_every_configuration_is_named_with_its_command():
    lines = pl3_to_score.commands("cartpole", 30)
    assert set(lines) == set(pl3_to_score.SIDES)
    assert "--train.seed S" in lines["ours"] and "--train.max_seconds 30" in lines["ours"]
    assert "rnn_name=None" in lines["pl3-mlp"] and "rnn_name" not in lines["pl3"]
    assert pl3_to_score.seed_changes("pl3-mlp", 2) == {"train.seed": 2, "rnn_name": None}
    assert pl3_to_score.seed_changes("pl3", 2) == {"train.seed": 2}
    # its snake policy needs the LSTM wrapper: its MLP variant also names its MLP policy
    snake = {"train.seed": 2, "rnn_name": None, "policy_name": "Policy"}
    assert pl3_to_score.seed_changes("pl3-mlp", 2, "snake") == snake
    assert pl3_to_score.seed_changes("pl3", 2, "snake") == {"train.seed": 2}
    shown = pl3_to_score.commands("snake", 30)
    assert "rnn_name=None, policy_name=Policy" in shown["pl3-mlp"] and "policy_name" not in shown["pl3"]
    assert "torch_threads" not in lines["ours"] and "set_num_threads" not in lines["pl3"]
    one = pl3_to_score.commands("cartpole", 30, 1)
    assert one["ours"].endswith("--train.torch_threads 1") and "torch.set_num_threads(1)" in one["pl3-mlp"]


def test_the_plot_is_one_png_with_every_run(tmp_path):
    out = tmp_path / "to-score.png"
    assert pl3_to_score.draw(RESULTS, 195, out) == [str(out)]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(plot.PlotError, match="nothing to draw"):
        pl3_to_score.draw(RESULTS[-1:], 195, tmp_path / "empty.png")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--pufferlib3", "--to-score"], "--to-score needs --target SCORE"),
        (
            ["--pufferlib3", "--to-score", "--target", "195", "--repeats", "0"],
            "--repeats must be at least 1, got 0",
        ),
        (
            ["--pufferlib3", "--to-score", "--target", "195", "--train-seconds", "0"],
            "--train-seconds must be",
        ),
        (["--pufferlib3", "--to-score", "--target", "195", "--plot", "x.txt"], "--plot x.txt: write a .png"),
        (["--pufferlib3", "--to-score", "--target", "195", "--train-envs", "tetris"], "unknown tetris"),
        (["--pufferlib3", "--to-score", "--target", "195", "--train-envs", ""], "no env given"),
        (
            ["--pufferlib3", "--to-score", "--target", "195", "--torch-threads", "-1"],
            "--torch-threads must be",
        ),
        (["--pufferlib3", "--to-score", "--matched", "--target", "195"], "--matched and --to-score"),
        (["--pufferlib3", "--target", "195"], "--target and --plot belong to --to-score"),
        (["--to-score", "--target", "195"], "puffer bench --pufferlib3 --to-score"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(args, said, capsys):
    assert cli.main(["bench", *args]) == 2
    err = capsys.readouterr().err
    assert said in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_missing_peer_is_a_clear_error(tmp_path, capsys):
    python = str(tmp_path / "nowhere" / "bin" / "python")
    assert cli.main(["bench", "--pufferlib3", python, "--to-score", "--target", "195"]) == 2
    err = capsys.readouterr().err
    assert "no PufferLib 3.0 peer at" in err and "python -m pufferlib.bench.pufferlib3_peer" in err
    assert len(err.strip().splitlines()) == 1
