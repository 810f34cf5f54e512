"""train.precision bf16: the forward passes and the loss under bfloat16 autocast (torch's CPU autocast
here), the parameters and Adam's state in float32, and learning as good as fp32's.

The tolerance: ocean/squared, 24k steps without stopping when solved, seeds 1 and 2. At 16k steps
(seeds 1-5, 2026-12-05, CPU): fp32 ended at a mean return of 0.915-0.948, bf16 at 0.913-0.930; on a CPU
with AVX512-BF16 (2026-12-08; bfloat16 kernels differ by instruction set) bf16 seed 2 ended at 0.8825,
below solved. At 24k steps there (seeds 1-3): fp32 0.9725-0.995, bf16 0.98-0.9925, at most 0.0075
apart for a seed (uniformly random actions average 0.56). So both precisions must solve (0.9) and
their means over the two seeds stay within 0.05 of each other.
"""

from __future__ import annotations

import pytest
import torch

from pufferlib.cli import main
from pufferlib.train import train
from pufferlib.train.config import ConfigError, load
from pufferlib.train.ppo import precision

TOLERANCE = 0.05
BUDGET = {"train.total_timesteps": 24_000, "train.stop_when_solved": False}


class DtypeProbe:
    """An on_update hook that, from the first update on, records (grad enabled, output dtype) of every
    Linear layer's forward: the rollout's act step runs without grad, the loss's forward with it."""

    def __init__(self) -> None:
        self.seen: set[tuple[bool, torch.dtype]] = set()
        self.params: set[torch.dtype] = set()
        self.hooked = False

    def __call__(self, progress: dict) -> None:
        policy = progress["policy"]
        self.params.update(p.dtype for p in policy.parameters())
        if self.hooked:
            return
        self.hooked = True
        for module in policy.modules():
            if isinstance(module, torch.nn.Linear):
                module.register_forward_hook(self.record)

    def record(self, module, inputs, output) -> None:
        self.seen.add((torch.is_grad_enabled(), output.dtype))


def run(precision_name: str, seed: int, device: str = "cpu", **kwargs) -> tuple[dict, DtypeProbe]:
    probe = DtypeProbe()
    overrides = {**BUDGET, "train.precision": precision_name, "train.seed": seed, "train.device": device}
    return train("ocean/squared", overrides, on_update=probe, **kwargs), probe


def test_bf16_learns_squared_as_well_as_fp32_with_float32_weights_and_adam_state(tmp_path):
    returns = {"fp32": [], "bf16": []}
    for seed in (1, 2):
        for name in ("fp32", "bf16"):
            summary, probe = run(name, seed, run_dir=tmp_path / f"{name}-{seed}")
            assert summary["solved"], (name, seed, summary)
            returns[name].append(summary["mean_return"])
            low = torch.bfloat16 if name == "bf16" else torch.float32
            # both forward passes in the precision asked for: the act step (no grad) and the loss's
            assert probe.seen == {(False, low), (True, low)}, (name, probe.seen)
            assert probe.params == {torch.float32}, probe.params  # master weights stay float32
            saved = torch.load(summary["checkpoint"], weights_only=True)
            assert {t.dtype for t in saved["state_dict"].values()} == {torch.float32}
            moments = saved["resume"]["optimizer"]["state"].values()
            dtypes = {state[key].dtype for state in moments for key in ("exp_avg", "exp_avg_sq")}
            assert dtypes == {torch.float32}, dtypes  # Adam's moments too
    fp32, bf16 = (sum(returns[name]) / len(returns[name]) for name in ("fp32", "bf16"))
    assert abs(bf16 - fp32) <= TOLERANCE, returns


def test_bf16_trains_the_lstm_and_a_continuous_head():
    """The recurrent state (stored as float32 between steps) and a Normal head (taken back to float32
    before its log-probs) both run under autocast."""
    for env in ("ocean/memory", "ocean/continuous"):
        overrides = {
            "train.precision": "bf16",
            "train.total_timesteps": 2048,
            "train.stop_when_solved": False,
        }
        summary = train(env, overrides)
        assert summary["stop_reason"] == "steps" and summary["updates"] >= 1, summary


def test_a_bad_precision_exits_2_naming_the_key_and_the_valid_values(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "ocean/squared", "--train.precision", "fp16"]) == 2
    err = capsys.readouterr().err
    assert "train.precision must be one of fp32, bf16, got 'fp16'" in err
    assert list(tmp_path.iterdir()) == []  # nothing made


def test_a_bad_precision_in_a_config_built_in_python_is_refused_too():
    cfg = load("ocean/squared")
    cfg["train"]["precision"] = "half"
    from pufferlib.train.setup import check_config

    with pytest.raises(ConfigError, match=r"train\.precision must be one of fp32, bf16, got 'half'"):
        check_config(cfg)


def test_the_default_is_fp32_and_fp32_adds_no_autocast():
    assert load("ocean/squared")["train"]["precision"] == "fp32"
    with precision.autocast("cpu", "fp32"):
        assert not torch.is_autocast_enabled("cpu")
    with precision.autocast("cpu", "bf16"):
        assert torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible to torch")
def test_bf16_on_cuda_keeps_float32_weights():
    summary, probe = run("bf16", 1, device="cuda")
    assert (
        summary["device"].startswith("cuda")
        and probe.params == {torch.float32}
        and (True, torch.bfloat16) in probe.seen
    )
