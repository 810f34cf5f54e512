"""Action masks end to end: sampling, greedy choice, log-probs and entropy all honour the mask, and
`puffer train`'s rollouts never send an illegal action.

ocean/masked (MultiDiscrete [5, 3], a mask per branch, a lure that is always illegal) is trained
with `illegal="raise"` (its config), so a single illegal action fails the run.
"""

import re

import gymnasium
import numpy as np
import pytest
import torch
from torch import nn

import pufferlib.environments as envs
import pufferlib.frameworks.cleanrl as cleanrl
from pufferlib import APIUsageError
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.frameworks.cleanrl import Policy, mask_layout, read_mask
from pufferlib.train import config, train
from pufferlib.train.ppo.act import Actor, greedy
from pufferlib.train.ppo.rollout import Runner, collect
from pufferlib.train.run.failure import TrainingError
from pufferlib.train.setup import make_policy, make_vecenv

BRANCHES = (5, 3)


def legal(actions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row: every branch's action is allowed by the row's mask."""
    offsets = torch.tensor([0, BRANCHES[0]])
    picked = mask.gather(1, actions.reshape(-1, 2).long() + offsets)
    return (picked != 0).all(1)


@pytest.mark.parametrize("rnn", [False, True], ids=["mlp", "lstm"])
def test_training_never_sends_an_illegal_action(rnn):
    """10k steps of rollouts (and updates between them) on an env that raises on an illegal action."""
    overrides = {"train.total_timesteps": 10_000, "train.stop_when_solved": False, "rnn.enabled": rnn}
    assert config.load("ocean/masked", overrides)["env"]["illegal"] == "raise"
    summary = train("ocean/masked", overrides)
    assert summary["steps"] >= 10_000 and summary["stop_reason"] == "steps", summary


def test_the_same_run_fails_when_masks_are_ignored(monkeypatch):
    """The check above can fail: with the mask ignored, the env raises within the first rollout."""
    monkeypatch.setattr(cleanrl, "mask_layout", lambda env: None)
    with pytest.raises(TrainingError, match="not allowed by the action_mask") as failed:
        train("ocean/masked", {"train.total_timesteps": 10_000, "train.stop_when_solved": False})
    assert isinstance(failed.value.__cause__, APIUsageError)  # the env's refusal ends the run as an error


class Adversarial(nn.Module):
    """Logits that favour exactly the actions the mask forbids (by 30 nats); no `native` of its own,
    so only the env's mask layout (Policy(module, env)) can protect it."""

    def __init__(self, env) -> None:
        super().__init__()
        self.layout = mask_layout(env)
        self.value = nn.Linear(1, 1)

    def forward(self, obs: torch.Tensor):
        mask = read_mask(self.layout, obs).float()
        logits = 30.0 * (1 - mask)
        return list(logits.split(BRANCHES, dim=-1)), self.value(torch.zeros(len(obs), 1))


def _observations(rows: int) -> torch.Tensor:
    env = envs.make("ocean/masked")
    out = []
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while len(out) < rows:
        out.append(env.observations.copy())
        if env.done:
            env.reset()
        else:
            env.step(rng.integers(0, BRANCHES, (1, 2)))
    env.close()
    return torch.from_numpy(np.concatenate(out))


def test_a_policy_that_favours_illegal_actions_never_picks_one():
    env = envs.make("ocean/masked")
    policy = Policy(Adversarial(env), env)
    obs = _observations(10_000)
    mask = policy.action_mask(obs)
    assert mask is not None and mask.shape == (10_000, 8)
    with torch.no_grad():
        action, log_prob, entropy, _ = policy.get_action_and_value(obs)
        logits, _ = policy.policy(obs)
    assert legal(action, mask).all()
    assert legal(greedy(logits, mask), mask).all()
    assert torch.isfinite(log_prob).all() and torch.isfinite(entropy).all()
    # with the illegal logits out of the way every allowed action is equally likely
    allowed = [m.sum(1) for m in mask.split(BRANCHES, dim=-1)]
    torch.testing.assert_close(log_prob, -(allowed[0].log() + allowed[1].log()).float())
    torch.testing.assert_close(entropy, (allowed[0].log() + allowed[1].log()).float())
    only_target = (allowed[0] == 1) & (allowed[1] == 1)
    assert only_target.any() and (log_prob[only_target] == 0).all() and (entropy[only_target] == 0).all()
    # the same policy, unmasked, would pick an illegal action almost every time
    unmasked, _, _ = cleanrl.sample_logits(logits)
    assert (~legal(unmasked, mask)).float().mean() > 0.99

    # and acting through the trainer's act step over a vector env that raises on illegal actions
    binding = envs.get("ocean/masked")
    cfg = config.load(binding.name, {"vec.num_envs": 8})
    vecenv = make_vecenv(binding, cfg)
    try:
        actor = Actor(vecenv, Policy(Adversarial(vecenv.driver_env), vecenv.driver_env), "cpu")
        vecenv.async_reset(0)
        for _ in range(10_000 // 8):
            obs, _, terminals, truncations, _, ids, masks = vecenv.recv()
            step = actor(obs, terminals, truncations, np.asarray(ids), np.array(masks))
            vecenv.send(step.action.numpy())
    finally:
        vecenv.close()


def test_update_log_probs_and_entropy_are_those_the_actions_were_sampled_with():
    """A rollout's stored log-probs equal the update's recomputed ones (ratio 1 before any step) and
    both are of the masked distribution."""
    binding = envs.get("ocean/masked")
    cfg = config.load(binding.name, {"vec.num_envs": 4, "train.num_steps": 32})
    torch.manual_seed(0)
    vecenv = make_vecenv(binding, cfg)
    policy = make_policy(binding, vecenv.driver_env, cfg)
    try:
        run = Runner.create(vecenv, policy, cfg, "cpu")
        vecenv.async_reset(0)
        collect(run)
    finally:
        vecenv.close()
    obs, actions = run.exp.obs.reshape(4 * 32, -1), run.exp.actions.reshape(4 * 32, 2)
    with torch.no_grad():
        _, log_prob, entropy, _ = policy.get_action_and_value(obs, actions)
        logits, _ = policy.policy(obs)
    torch.testing.assert_close(log_prob, run.exp.logprobs.reshape(-1))
    mask = policy.action_mask(obs)
    expected_logp, expected_entropy = 0.0, 0.0
    for lg, m, a in zip(logits, mask.split(BRANCHES, dim=-1), actions.unbind(-1), strict=True):
        logp = torch.log_softmax(lg.masked_fill(m == 0, float("-inf")), dim=-1)
        expected_logp = expected_logp + logp.gather(1, a.reshape(-1, 1)).squeeze(1)
        p = logp.exp()
        expected_entropy = expected_entropy - (p * logp.nan_to_num(neginf=0.0)).sum(-1)
    torch.testing.assert_close(log_prob, expected_logp)
    torch.testing.assert_close(entropy, expected_entropy)
    _, unmasked_logp, _ = cleanrl.sample_logits(logits, actions)
    assert not torch.allclose(unmasked_logp, log_prob)  # the mask matters to these numbers


class WrongMask(gymnasium.Env):
    def __init__(self, actions: gymnasium.Space, width: int):
        self.observation_space = gymnasium.spaces.Dict(
            {
                "x": gymnasium.spaces.Box(0, 1, (2,)),
                "action_mask": gymnasium.spaces.Box(0, 1, (width,), np.int8),
            }
        )
        self.action_space = actions


@pytest.mark.parametrize(
    "actions, width, words",
    [
        (gymnasium.spaces.Discrete(3), 4, "action_mask has 4 entries but the action space Discrete(3) has 3"),
        (gymnasium.spaces.MultiDiscrete([5, 3]), 5, "has 8 actions"),
        (gymnasium.spaces.Box(-1, 1, (2,)), 2, "masks need Discrete or MultiDiscrete actions"),
    ],
)
def test_a_mask_that_cannot_fit_the_actions_is_an_error(actions, width, words):
    env = GymnasiumPufferEnv(env=WrongMask(actions, width))
    with pytest.raises(APIUsageError, match=re.escape(words)):
        Policy(nn.Identity(), env)
