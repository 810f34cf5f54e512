"""The template env (pufferlib/ocean/native/template): the ladder, and `puffer train` solving it under
vec.backend native. Copy this file with the folder when you write an env (docs/native.md)."""

import pytest
from _native_ladder import Ladder

from pufferlib.train import evaluate, train

ladder = Ladder("template")


@pytest.mark.parametrize(
    "rung",
    [
        "same_seed_identical",
        "threads_identical",
        "seeds_differ",
        "reset_reseeds",
        "actions_refused",
        "every_element_written",
        "episodes_logged",
        "renders",
        "close_frees",
    ],
)
def test_ladder(rung):
    getattr(ladder, rung)()


def test_fuzz_under_asan_and_ubsan(tmp_path):
    ladder.fuzz_clean(tmp_path)


def test_trains_to_solved_with_the_native_backend(tmp_path):
    summary = train("ocean/template", {"train.total_timesteps": 200_000}, checkpoint_dir=tmp_path)
    assert summary["solved"], summary
    result = evaluate(
        "ocean/template", summary["checkpoint"], episodes=300
    )  # 256 instances: some infos hold n > 1
    assert result["episodes"] == 300 and result["solved"], result
