"""--train.compile trains through torch.compile and still saves plain weights that eval loads."""

import pytest
import torch

from pufferlib.train import evaluate, train


@pytest.mark.slow
def test_compiled_training_saves_loadable_weights(tmp_path):
    overrides = {
        "train.compile": True,
        "vec.num_envs": 8,
        "train.total_timesteps": 2048,
        "train.stop_when_solved": False,
    }
    summary = train("ocean/bandit", overrides, checkpoint_dir=tmp_path)
    assert summary["updates"] >= 1 and summary["stop_reason"] == "steps"
    state = torch.load(summary["checkpoint"], weights_only=True)["state_dict"]
    assert not any("_orig_mod" in key for key in state)
    result = evaluate("ocean/bandit", summary["checkpoint"], episodes=10, overrides={"train.compile": False})
    assert result["episodes"] == 10
