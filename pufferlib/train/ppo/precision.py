"""train.precision: the arithmetic of the policy's forward passes and the PPO loss.

`fp32` (the default, on every device) runs everything in float32. `bf16` runs the rollout's act step
and each minibatch's forward pass and loss under `torch.autocast(device_type, dtype=torch.bfloat16)`:
matrix products and convolutions in bfloat16, everything else as torch's autocast lists say. What
autocast never touches stays float32: the parameters (the master weights), their gradients, Adam's
moments and the rollout's storage. bfloat16 has float32's exponent range, so no loss scaling is
needed (unlike float16). The policy's outputs are taken back to float32 before they become
log-probabilities, values and the loss (`cleanrl.sample_logits`, `loss.ppo_loss`): bfloat16's 8-bit
mantissa is too coarse for PPO's ratio exp(new - old log-prob).

Why fp32 stays the default on CUDA too: the trainer's policies are small (a few 128-wide layers), so
a step is bound by kernel launches and Python, not by matrix throughput; autocast adds a cast kernel
per layer and may cost more than it saves. bf16 becomes the cuda default only once a GPU run
(tests/gpu/run.sh, docs/training.md "On a GPU") measures it faster at an equal score.

The valid values are config.CHOICES' (one place); `check` refuses a device that cannot run bf16.
"""

from __future__ import annotations

import contextlib

import torch

from pufferlib.train.config import ConfigError


def autocast(device: str | torch.device, precision: str) -> contextlib.AbstractContextManager:
    """The context a forward pass and loss run in: bfloat16 autocast on `device`'s type for `bf16`,
    nothing for `fp32`."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(torch.device(device).type, dtype=torch.bfloat16)


def check(device: str, precision: str) -> None:
    """ConfigError where `precision` cannot run on `device` (checked before anything is built)."""
    if precision == "fp32":
        return
    kind = torch.device(device).type
    if not torch.amp.is_autocast_available(kind):
        raise ConfigError(
            f"train.precision {precision} needs torch's autocast on {kind}, which this torch lacks: "
            "use --train.precision fp32"
        )
    if kind == "cuda" and not torch.cuda.is_bf16_supported(including_emulation=False):
        name = torch.cuda.get_device_name(torch.device(device))
        raise ConfigError(
            f"train.precision bf16 needs a GPU with bfloat16 arithmetic (compute capability 8.0 or newer: "
            f"Ampere, Ada, Hopper); {name} has none: use --train.precision fp32"
        )
