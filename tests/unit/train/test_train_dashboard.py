"""The dashboard shows a real run's progress: both SPS (named for what they measure), a progress bar
over the budget, a sparkline of the return, length, losses, time left; off a terminal the same run
gives plain progress lines."""

import io

from rich.console import Console

from pufferlib.train import train
from pufferlib.train.run.dashboard import BLOCKS, Dashboard, ProgressLines, budget_used, sparkline, time_left


def test_dashboard_draws_a_real_run():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    seen = []

    def both(progress):
        seen.append(progress)
        board.update(progress)

    with Dashboard(console, refresh_seconds=0.0) as board:
        summary = train("ocean/bandit", {"vec.num_envs": 8, "train.total_timesteps": 8000}, on_update=both)
    text = out.getvalue()
    last = seen[-1]
    assert summary["steps"] == last["steps"] and last["solved"]
    labels = (
        "ocean/bandit",
        "SPS (update)",
        "SPS (run)",
        "of budget",
        "return",
        "length",
        "policy_loss",
        "value_loss",
        "entropy",
        "left",
        "SOLVED",
    )
    for label in labels:
        assert label in text, label
    assert f"{last['steps']:,}" in text
    assert "score" in text  # the env's own episode stats
    assert "━" in text  # the progress bar
    assert sum(text.count(block) for block in BLOCKS) >= 3  # the return's sparkline


def test_progress_lines_name_steps_budget_sps_return_eta():
    out = io.StringIO()
    lines = ProgressLines(interval=0.0, stream=out)
    summary = train("ocean/bandit", {"vec.num_envs": 8}, on_update=lines)
    printed = out.getvalue().splitlines()
    assert len(printed) == summary["updates"]
    last = printed[-1]
    assert last.startswith(f"ocean/bandit: {summary['steps']:,} / ")
    for part in ("steps (", "%)", "(update)", "(run)", "return 0.", "ETA "):
        assert part in last, (part, last)
    quiet = io.StringIO()
    every_minute = ProgressLines(interval=60.0, stream=quiet)
    train("ocean/bandit", {"vec.num_envs": 8}, on_update=every_minute)
    assert len(quiet.getvalue().splitlines()) == 1  # the first update, then one a minute


def test_sparkline_and_budget():
    assert sparkline([0.0, 0.5, 1.0]) == BLOCKS[0] + BLOCKS[len(BLOCKS) // 2] + BLOCKS[-1]
    assert sparkline([2.0, 2.0]) == BLOCKS[len(BLOCKS) // 2] * 2 and sparkline([]) == ""
    assert len(sparkline(list(range(100)), width=10)) == 10
    progress = {"steps": 250, "total_timesteps": 1000, "elapsed": 30.0, "max_seconds": 60.0}
    assert budget_used(progress) == 0.5  # the nearer budget: time
    assert budget_used({**progress, "max_seconds": 0.0}) == 0.25


def test_time_left_is_the_nearer_budget():
    progress = {"sps": 1e3, "steps": 10_000, "total_timesteps": 100_000, "max_seconds": 30.0, "elapsed": 20.0}
    assert time_left(progress) == 10.0
    assert time_left({**progress, "max_seconds": 0.0}) == 90.0
