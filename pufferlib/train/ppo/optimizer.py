"""The PPO optimizer, built from the config: train.optimizer = "adam" or "muon".

- adam: torch.optim.Adam (eps 1e-5, fused: one kernel for every parameter) at train.learning_rate.
- muon: `Muon` (Newton-Schulz orthogonalised Nesterov momentum, train.muon_momentum) for every 2-D
  weight matrix, at train.learning_rate, with Adam at train.muon_adam_lr for everything else (biases,
  the continuous head's log-std, conv kernels: Muon orthogonalises matrices only), stepped together as
  one `MuonAdam`. Ours, not torch.optim.Muon: torch's runs Newton-Schulz in bfloat16, which a CPU
  without bf16 matrix units emulates (65 ms for one 128 x 605 weight on such a 2-core box, 4.5 ms in
  float32); ours iterates in float32 on the CPU and in bfloat16 on CUDA, otherwise the same update.
  PufferLib 3.0's default optimizer is Muon too (heavyball's ForeachMuon, lr 0.015 in its
  default.ini, 0.05 for cartpole): Muon's step is about the size of its learning rate whatever the
  gradient's scale, so its learning rates sit near 0.01-0.05, ten to a hundred times Adam's
  (docs/training.md).

Each parameter group remembers the config key its learning rate comes from (`lr_key`), so
`set_learning_rates` anneals both groups of Muon by the same fraction, and a resumed run takes its
rates from its config, as Adam's always did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from pufferlib.train.config import CHOICES, ConfigError

NAMES = CHOICES[("train", "optimizer")]
ADAM_EPS = 1e-5  # CleanRL's PPO


NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # Keller Jordan's quintic, as torch's and heavyball's
NS_STEPS = 5
NS_EPS = 1e-7


def orthogonalise(matrix: torch.Tensor, steps: int = NS_STEPS) -> torch.Tensor:
    """An approximately orthogonal matrix with `matrix`'s singular vectors (singular values near 1):
    the quintic Newton-Schulz iteration on the wide orientation, in bfloat16 on CUDA, float32 elsewhere."""
    a, b, c = NS_COEFFICIENTS
    x = matrix.to(torch.bfloat16 if matrix.is_cuda else torch.float32)
    tall = x.size(0) > x.size(1)
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=NS_EPS)  # spectral norm at most 1
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


class Muon(torch.optim.Optimizer):
    """Muon over 2-D weights: Nesterov momentum (`buf = momentum * buf + (1 - momentum) * grad`, the
    update `grad` lerped toward `buf`), orthogonalised, applied at lr * sqrt(max(1, rows / cols)), the
    scaling PufferLib 3.0's heavyball and torch's adjust_lr_fn="original" use. No weight decay."""

    def __init__(self, params: Any, lr: float, momentum: float) -> None:
        super().__init__(params, {"lr": lr, "momentum": momentum})
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon takes 2-D parameters only, got shape {tuple(p.shape)}")

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> None:
        if closure is not None:
            raise ValueError("Muon.step takes no closure")
        for group in self.param_groups:
            momentum = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p)
                buf = state["momentum_buffer"]
                buf.lerp_(p.grad, 1 - momentum)
                update = orthogonalise(p.grad.lerp(buf, momentum))
                scale = max(1.0, p.size(0) / p.size(1)) ** 0.5
                p.add_(update.to(p.dtype), alpha=-group["lr"] * scale)


class MuonAdam:
    """Muon for the 2-D weight matrices and Adam for the other parameters, stepped as one optimizer:
    `step`, `zero_grad`, `param_groups` (Muon's first) and a `state_dict` holding both."""

    def __init__(self, muon: torch.optim.Optimizer, adam: torch.optim.Optimizer | None) -> None:
        self.parts = {"muon": muon, "adam": adam} if adam is not None else {"muon": muon}

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return [group for part in self.parts.values() for group in part.param_groups]

    def step(self, closure: Callable[[], float] | None = None) -> None:
        if closure is not None:
            raise ValueError("MuonAdam.step takes no closure")
        for part in self.parts.values():
            part.step()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for part in self.parts.values():
            part.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict[str, Any]:
        return {name: part.state_dict() for name, part in self.parts.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if set(state) != set(self.parts):
            raise ValueError(f"the saved optimizer holds {sorted(state)}, this one {sorted(self.parts)}")
        for name, part in self.parts.items():
            part.load_state_dict(state[name])


Optimizer = torch.optim.Optimizer | MuonAdam


def build(policy: nn.Module, tc: dict[str, Any]) -> Optimizer:
    """The optimizer train.optimizer names, over the policy's trainable parameters; ConfigError
    for a name it does not know."""
    kind = tc.get("optimizer", "adam")  # a run from before the key: Adam
    params = [p for p in policy.parameters() if p.requires_grad]
    if kind == "adam":
        return torch.optim.Adam(_group(params, "learning_rate", tc), eps=ADAM_EPS, fused=True)
    if kind == "muon":
        matrices = [p for p in params if p.ndim == 2]
        others = [p for p in params if p.ndim != 2]
        if not matrices:
            raise ConfigError(
                "train.optimizer muon: the policy has no 2-D weight matrix for Muon to train; "
                "use --train.optimizer adam"
            )
        momentum = tc["muon_momentum"]
        muon = Muon(_group(matrices, "learning_rate", tc), lr=tc["learning_rate"], momentum=momentum)
        adam = (
            torch.optim.Adam(_group(others, "muon_adam_lr", tc), eps=ADAM_EPS, fused=True) if others else None
        )
        return MuonAdam(muon, adam)
    raise ConfigError(f"train.optimizer must be one of {', '.join(NAMES)}, got {kind!r}")


def _group(params: list[torch.Tensor], lr_key: str, tc: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"params": params, "lr": tc[lr_key], "lr_key": lr_key}]


def set_learning_rates(optimizer: Optimizer, tc: dict[str, Any], fraction: float) -> None:
    """Every group's learning rate at `fraction` of its config value (train.anneal_lr)."""
    for group in optimizer.param_groups:
        group["lr"] = fraction * tc[group.get("lr_key", "learning_rate")]


def name_of(optimizer: Optimizer) -> str:
    """The train.optimizer value that builds an optimizer like this one."""
    return "muon" if isinstance(optimizer, MuonAdam) else "adam"
