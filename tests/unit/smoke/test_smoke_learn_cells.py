"""The matrix's learn cells beyond Ocean and CartPole: continuous control (InvertedPendulum), self-play
(tic-tac-toe judged by win rate against a random opponent) and bsuite's catch. Each trains for real
through `puffer smoke`'s learn check, and the check goes red when the run cannot reach its score.

MicroRTS's learn cell (4x4 games won against passiveAI, judged on the env's own `win` info:
train.solve_metric "wins") is ~2 minutes of JVM games: the matrix runs it in the image
(tests/integration/test_matrix_cells.py, test_microrts_learns_to_win), not again here."""

import dataclasses

import pytest
from _strict import skip_or_fail

import pufferlib.environments as environments
from pufferlib.environments import registry
from pufferlib.smoke import Smoke

pytestmark = pytest.mark.slow

CELLS = {
    "mujoco/InvertedPendulum-v5": ("mujoco", "mean return", "(solved at 950.0)"),
    "open_spiel/tic_tac_toe": ("pyspiel", "win rate against a random opponent", "(solved at 0.9)"),
    "bsuite/catch/0": ("bsuite", "mean return", "(solved at 0.9)"),
}


LEARN = ("import", "make", "spaces", "reset", "step", "policy", "learn")  # learn and what it needs


def _learn(name: str):
    results = list(Smoke(name).run(LEARN))
    assert [r.status for r in results[:-1]] == ["pass"] * (len(LEARN) - 1), results
    return results[-1]


def _needs(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        skip_or_fail(f"{module} is not installed: pip install 'pufferlib[common]'")


@pytest.mark.parametrize("name", list(CELLS))
def test_the_learn_cell_trains_to_the_solved_score(name):
    module, what, goal = CELLS[name]
    _needs(module)
    assert environments.get(name).smoke.learn, f"{name} lost its learn cell"
    result = _learn(name)
    assert result.status == "pass", result.detail
    assert result.detail.startswith(what) and goal in result.detail, result.detail
    assert "stopped by solved" in result.detail
    score = float(result.detail.removeprefix(what).split()[0])
    assert score <= 1.0 or what == "mean return", result.detail  # a rate, not a return (microrts: ~38)


def test_the_learn_cell_goes_red_when_the_run_cannot_solve(monkeypatch):
    """The same binding with a step budget far too small to train in fails, naming the score it reached."""
    _needs("bsuite")
    name = "bsuite/catch/0"
    binding = environments.get(name)
    starved = dataclasses.replace(binding, smoke=dataclasses.replace(binding.smoke, learn_steps=512))
    monkeypatch.setitem(registry._REGISTRY, name, starved)
    result = _learn(name)
    assert result.status == "fail", result.detail
    assert "not solved within the step budget: mean return" in result.detail, result.detail
    assert "of 512 steps" in result.detail and "stopped by steps)" in result.detail
