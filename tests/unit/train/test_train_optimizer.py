"""train.optimizer: Adam, or Muon (ours, for 2-D weights; Adam for the rest) as one optimizer
that trains, anneals, checkpoints and resumes (pufferlib/train/ppo/optimizer.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

from pufferlib.train import config, train
from pufferlib.train.config import ConfigError
from pufferlib.train.ppo import optimizer as optimizers
from pufferlib.train.run import checkpoint, resume

ENV = "classic_control/CartPole-v1"
MUON = {"train.optimizer": "muon", "train.learning_rate": 0.02, "train.muon_adam_lr": 3e-3}
SHORT = {
    "vec.num_envs": 4,
    "train.num_steps": 64,
    "train.stop_when_solved": False,
    "track.tensorboard": False,
}


def _tc(**changes) -> dict:
    tc = config.defaults()["train"]
    tc.update(changes)
    return tc


def _net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 1))


def _fit(optimizer_name: str, lr: float, steps: int = 200) -> tuple[float, float]:
    """(first loss, last loss) of `steps` full-batch steps regressing a fixed random target."""
    net = _net()
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(256, 8, generator=gen)
    y = (x @ torch.randn(8, 1, generator=gen)).tanh() + 0.5
    opt = optimizers.build(net, _tc(optimizer=optimizer_name, learning_rate=lr, muon_adam_lr=1e-2))
    losses = []
    for _ in range(steps):
        loss = ((net(x) - y) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses[0], losses[-1]


@pytest.mark.parametrize(("name", "lr"), [("adam", 1e-2), ("muon", 0.02)])
def test_each_optimizer_fits_a_tiny_regression(name, lr):
    first, last = _fit(name, lr)
    assert last < first / 10


def test_muon_takes_the_matrices_and_adam_the_rest():
    net = _net()
    opt = optimizers.build(net, _tc(optimizer="muon", learning_rate=0.05, muon_adam_lr=1e-3))
    assert isinstance(opt, optimizers.MuonAdam) and optimizers.name_of(opt) == "muon"
    muon, adam = opt.parts["muon"], opt.parts["adam"]
    assert isinstance(muon, optimizers.Muon) and isinstance(adam, torch.optim.Adam)
    assert {p.ndim for g in muon.param_groups for p in g["params"]} == {2}
    assert {p.ndim for g in adam.param_groups for p in g["params"]} == {1}
    assert [g["lr"] for g in opt.param_groups] == [0.05, 1e-3]
    assert optimizers.name_of(optimizers.build(net, _tc())) == "adam"


@pytest.mark.parametrize("shape", [(128, 605), (605, 128), (1, 64), (32, 32)])
def test_orthogonalise_keeps_the_singular_vectors_and_flattens_the_values(shape):
    """The Newton-Schulz result is U f(S) V^T with every f(s) near 1 (the quintic leaves them in about
    0.5-1.5), computed in float32 on the CPU: within 1e-4 of the same iteration in float64, where a
    bfloat16 iteration (torch.optim.Muon's) is off by 2.5e-3 to 8e-3 on these shapes."""
    g = torch.randn(*shape, generator=torch.Generator().manual_seed(0)) * 3.0
    out = optimizers.orthogonalise(g)
    assert out.dtype == torch.float32 and out.shape == g.shape
    u, _, vh = torch.linalg.svd(g.double(), full_matrices=False)
    core = u.T @ out.double() @ vh.T  # diagonal when `out` shares g's singular vectors
    values = core.diagonal()
    assert (core - torch.diag(values)).abs().max() < 1e-3
    assert values.min() > 0.3 and values.max() < 1.3
    assert (_newton_schulz_float64(g) - out.double()).abs().max() < 1e-4


def _newton_schulz_float64(g: torch.Tensor) -> torch.Tensor:
    a, b, c = optimizers.NS_COEFFICIENTS
    x = g.double().T if g.size(0) > g.size(1) else g.double()
    x = x / x.norm()
    for _ in range(optimizers.NS_STEPS):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if g.size(0) > g.size(1) else x


def test_one_muon_step_is_torchs_muon_step_in_float32():
    """Our Muon against torch.optim.Muon (Nesterov, adjust_lr_fn="original", no weight decay) over the
    same gradients: equal to bfloat16's precision, so the update's semantics are torch's."""
    gen = torch.Generator().manual_seed(2)
    start = torch.randn(96, 24, generator=torch.Generator().manual_seed(3))
    ours, theirs = nn.Parameter(start.clone()), nn.Parameter(start.clone())
    a = optimizers.Muon([ours], lr=0.1, momentum=0.95)
    b = torch.optim.Muon(
        [theirs], lr=0.1, momentum=0.95, nesterov=True, weight_decay=0.0, adjust_lr_fn="original"
    )
    for _ in range(3):
        grad = torch.randn(96, 24, generator=gen)
        ours.grad, theirs.grad = grad.clone(), grad.clone()
        a.step()
        b.step()
    moved = (theirs.detach() - start).abs().max()
    assert moved > 0.1
    assert (ours.detach() - theirs.detach()).abs().max() < 0.05 * moved


def test_muon_refuses_a_parameter_that_is_not_a_matrix():
    with pytest.raises(ValueError, match=r"2-D parameters only, got shape \(4,\)"):
        optimizers.Muon([nn.Parameter(torch.zeros(4))], lr=0.02, momentum=0.95)


def test_annealing_scales_every_group_from_its_own_key():
    opt = optimizers.build(_net(), _tc(optimizer="muon", learning_rate=0.04, muon_adam_lr=2e-3))
    optimizers.set_learning_rates(opt, _tc(learning_rate=0.04, muon_adam_lr=2e-3), 0.25)
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.01, 5e-4])


def test_an_unknown_optimizer_is_refused_naming_the_valid_ones():
    with pytest.raises(ConfigError, match=r"train\.optimizer must be one of adam, muon, got 'sgd'"):
        config.load(ENV, {"train.optimizer": "sgd"})
    with pytest.raises(ConfigError, match="must be one of adam, muon"):  # a config built in Python
        optimizers.build(_net(), _tc(optimizer="sgd"))
    with pytest.raises(ConfigError, match=r"train\.muon_momentum must be in \[0, 1\)"):
        config.load(ENV, {"train.muon_momentum": 1.0})


def test_the_cli_refuses_an_unknown_optimizer_in_one_line():
    out = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "train", ENV, "--train.optimizer", "sgd"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "train.optimizer must be one of adam, muon, got 'sgd'" in out.stderr.strip().splitlines()[-1]


def test_muon_without_a_matrix_is_refused():
    with pytest.raises(ConfigError, match="no 2-D weight matrix"):
        optimizers.build(nn.LayerNorm(4), _tc(optimizer="muon"))


def test_a_short_cartpole_run_learns_with_muon(tmp_path):
    """Steps, not seconds: the same on a loaded machine. Random play returns ~22."""
    summary = train(ENV, {**SHORT, **MUON, "train.total_timesteps": 40_000}, run_dir=tmp_path / "run")
    assert summary["steps"] >= 40_000
    assert summary["mean_return"] > 100  # measured: 281 (Adam at its config: 251)


@pytest.fixture(scope="module")
def cut_run(tmp_path_factory):
    """A Muon run stopped after its 4th update (checkpointed every 2), and its checkpoint."""
    base = tmp_path_factory.mktemp("muon-resume")

    def stop(progress: dict) -> None:
        if progress["update"] == 4:
            raise KeyboardInterrupt

    overrides = {**SHORT, **MUON, "train.total_timesteps": 8 * 4 * 64, "train.checkpoint_interval": 2}
    summary = train(ENV, overrides, run_dir=base / "run", on_update=stop)
    assert summary["updates"] == 4
    return base / "run", checkpoint.load(base / "run" / checkpoint.name(4))


def test_a_checkpoint_round_trips_muons_state(cut_run):
    _, saved = cut_run
    state = saved["resume"]
    assert state["optimizer_name"] == "muon"
    buffers = state["optimizer"]["muon"]["state"]
    assert buffers and all(s["momentum_buffer"].abs().sum() > 0 for s in buffers.values())
    assert all(s["exp_avg"].abs().sum() > 0 for s in state["optimizer"]["adam"]["state"].values())
    net = _policy_like(saved["state_dict"])
    fresh = optimizers.build(net, _tc(**{k.split(".")[1]: v for k, v in MUON.items()}))
    assert _differs(fresh.state_dict(), state["optimizer"])  # the check below can go red
    fresh.load_state_dict(state["optimizer"])
    assert not _differs(fresh.state_dict(), state["optimizer"])


def test_a_muon_run_resumes_and_finishes(cut_run):
    run_dir, _ = cut_run
    resumed = train(None, resume=run_dir)
    assert resumed["updates"] == 8 and resumed["resumed_from"].endswith(checkpoint.name(4))


def test_resuming_with_another_optimizer_names_the_one_to_use(cut_run):
    _, saved = cut_run
    with pytest.raises(
        resume.ResumeError, match=r"trained with train.optimizer muon.*--train.optimizer muon"
    ):
        resume.restore(saved["resume"], None, optimizers.build(_policy_like(saved["state_dict"]), _tc()))


def _policy_like(state_dict: dict[str, torch.Tensor]) -> nn.Module:
    """Parameters of the saved shapes, in the saved order (what the optimizer's state indexes)."""
    module = nn.Module()
    for i, tensor in enumerate(state_dict.values()):
        module.register_parameter(f"p{i}", nn.Parameter(torch.zeros_like(tensor)))
    return module


def _differs(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() != b.keys() or any(_differs(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) != len(b) or any(_differs(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, torch.Tensor):
        return not torch.equal(a, b)
    return a != b
