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


def test_compile_without_a_cpp_compiler_says_what_to_do(tmp_path, monkeypatch):
    """Inductor builds C++ on the CPU: with no compiler reachable, training stops before it starts and
    names what is missing and the way out (the cpu image ships no compiler)."""
    from pufferlib.train.config import ConfigError

    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no g++, c++ or clang++
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(ConfigError, match=r"needs a C\+\+ compiler .*train without --train.compile"):
        train("ocean/bandit", {"train.compile": True, "train.run_dir": ""}, checkpoint_dir=tmp_path)
