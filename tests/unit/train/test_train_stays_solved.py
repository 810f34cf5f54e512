"""A solved run stays solved: ocean/cartpole at its default config, trained on past the update it first
reaches the solved score (`train.stop_when_solved false`), keeps its windowed mean return above a floor
for the rest of its step budget. PufferLib 3.0 does not (issue 39: its cartpole reaches 197-200 of 200,
then falls to ~100 and stays there).

Measured before choosing the budget and floor (2026-12-06, the 2-core box shared with other sessions,
load 5-7; the default config with `--train.torch_threads 1 --train.total_timesteps 2000000`): seeds 1,
2, 3 first reached 475 at 590k, 738k and 1,049k steps, and their lowest windowed mean after that was
468.3, 351.1 (seed 2 dipped from 500 to ~350 for ~200k steps, then held 500 to the end) and 500.0; 36,
46 and 66 s each at that load. A step budget, never a time one: nothing here is timed. A learning rate
of 3e-2 without annealing (ten times the toml's) makes the same check fail (docs/training.md).
"""

from __future__ import annotations

import pytest
from _strict import skip_or_fail

import pufferlib.environments as environments
from pufferlib.train import train

BUDGET = 2_000_000  # the default config first solved it in 0.59-1.05M steps (above): half the run is after
FLOOR = 300.0  # of 500, below seed 2's dip (351); PufferLib 3.0 falls to half its maximum (~100 of 200)


def lowest_after_solved(
    curve: list[tuple[int, float | None]], solved_score: float
) -> tuple[int, float] | None:
    """(steps, windowed mean) at the lowest point after the curve first reaches `solved_score`; None if it
    never does. `curve`: (steps, windowed mean return) per update."""
    reached = next(
        (i for i, (_, mean) in enumerate(curve) if mean is not None and mean >= solved_score), None
    )
    if reached is None:
        return None
    return min(((s, m) for s, m in curve[reached:] if m is not None), key=lambda point: point[1])


def test_the_lowest_point_after_solving_is_found_and_a_collapse_is_seen():
    """The check itself, on curves shaped like ours and like PufferLib 3.0's (it goes red on a collapse)."""
    held = [(1, 20.0), (2, 480.0), (3, 470.0), (4, 500.0)]
    collapsed = [(1, 20.0), (2, 197.0), (3, 150.0), (4, 100.0), (5, 110.0)]
    assert lowest_after_solved(held, 475) == (3, 470.0)
    assert lowest_after_solved(collapsed, 195) == (4, 100.0)
    assert lowest_after_solved(collapsed, 198) is None
    assert lowest_after_solved([(1, None), (2, 500.0)], 475) == (2, 500.0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1])
def test_cartpole_stays_solved_after_it_first_solves(seed):
    """The default config, one torch thread (a CI box runs other tests beside it), run on to BUDGET;
    seed 1 only, to stay within ~60 s on a 2-core box (the three measured seeds are above)."""
    binding = environments.get("ocean/cartpole")
    if not binding.available():
        skip_or_fail(f"ocean/cartpole not built: {binding.install_hint}")
    curve: list[tuple[int, float | None]] = []
    overrides = {
        "train.seed": seed,
        "train.total_timesteps": BUDGET,
        "train.stop_when_solved": False,
        "train.torch_threads": 1,
    }
    summary = train(
        "ocean/cartpole", overrides, on_update=lambda info: curve.append((info["steps"], info["mean_return"]))
    )
    assert summary["steps"] >= BUDGET, summary
    lowest = lowest_after_solved(curve, summary["solved_score"])
    assert lowest is not None, f"never reached {summary['solved_score']} in {BUDGET:,} steps: {curve[-5:]}"
    assert lowest[1] >= FLOOR, f"solved, then fell to {lowest[1]:.1f} at {lowest[0]:,} steps (floor {FLOOR})"
