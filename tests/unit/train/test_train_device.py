"""Device choice: auto picks CUDA when present; an explicit cuda without a GPU is a clear error.
The CUDA run itself is skipped where torch sees no GPU."""

import pytest
import torch

from pufferlib.train import ConfigError, train


def test_auto_device_runs_where_it_can():
    summary = train("ocean/bandit", {"vec.num_envs": 8, "train.device": "auto"})
    assert summary["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert summary["solved"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised when there is no GPU")
def test_cuda_without_gpu_says_what_to_do():
    with pytest.raises(ConfigError, match=r"torch sees no CUDA GPU here; use --train\.device cpu"):
        train("ocean/bandit", {"train.device": "cuda"})


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible to torch")
@pytest.mark.parametrize("env", ["ocean/squared", "ocean/memory"])
def test_trains_on_cuda(env, tmp_path):
    summary = train(env, {"train.device": "cuda"}, checkpoint_dir=tmp_path)
    assert summary["device"] == "cuda" and summary["solved"]
    from pufferlib.train import evaluate

    result = evaluate(env, summary["checkpoint"], episodes=20, overrides={"train.device": "cuda"})
    assert result["episodes"] == 20
