"""The dashboard shows a real run's progress: SPS, return, length, losses, time left."""

import io

from rich.console import Console

from pufferlib.train import train
from pufferlib.train.dashboard import Dashboard, time_left


def test_dashboard_draws_a_real_run():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    seen = []

    def both(progress):
        seen.append(progress)
        board.update(progress)

    with Dashboard(console, refresh_seconds=0.0) as board:
        summary = train("ocean/bandit", {"vec.num_envs": 8}, on_update=both)
    text = out.getvalue()
    last = seen[-1]
    assert summary["steps"] == last["steps"] and last["solved"]
    labels = (
        "ocean/bandit",
        "SPS",
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


def test_time_left_is_the_nearer_budget():
    progress = {"sps": 1e3, "steps": 10_000, "total_timesteps": 100_000, "max_seconds": 30.0, "elapsed": 20.0}
    assert time_left(progress) == 10.0
    assert time_left({**progress, "max_seconds": 0.0}) == 90.0
