"""GAE matches returns summed forward by hand: no bootstrap past terminals or padding, bootstrap on
truncation (emulated envs) and at the end of the rollout."""

import numpy as np
import pytest
import torch

import pufferlib.environments as envs
from pufferlib.train.ppo.gae import advantages
from pufferlib.train.ppo.rollout import Experience


def random_rollout(rows=6, steps=12, seed=0):
    rng = np.random.default_rng(seed)
    exp = Experience.allocate(envs.make("ocean/bandit"), rows, steps, "cpu")
    exp.rewards[:] = torch.from_numpy(rng.normal(size=(rows, steps)).astype(np.float32))
    exp.values[:] = torch.from_numpy(rng.normal(size=(rows, steps)).astype(np.float32))
    ends = rng.random((rows, steps))
    exp.terminals[:] = torch.from_numpy((ends < 0.15).astype(np.float32))
    exp.truncations[:] = torch.from_numpy(((ends >= 0.15) & (ends < 0.3)).astype(np.float32))
    exp.masks[:] = torch.from_numpy((rng.random((rows, steps)) > 0.1).astype(np.float32))
    exp.next_values[:] = torch.from_numpy(rng.normal(size=rows).astype(np.float32))
    exp.next_masks[:] = torch.from_numpy((rng.random(rows) > 0.2).astype(np.float32))
    return exp


def forward_return(exp, n, t, gamma, bootstrap_truncation):
    """Discounted rewards from (n, t) to the end of the episode, plus the bootstrap that applies."""
    steps = exp.values.shape[1]
    total, discount = 0.0, 1.0
    for k in range(t, steps):
        total += discount * float(exp.rewards[n, k])
        last = k + 1 == steps
        next_value = float(exp.next_values[n] if last else exp.values[n, k + 1])
        next_present = bool(exp.next_masks[n] if last else exp.masks[n, k + 1])
        if not next_present or exp.terminals[n, k]:
            return total
        if exp.truncations[n, k]:  # a time limit: the episode would have gone on
            return total + (discount * gamma * next_value if bootstrap_truncation else 0.0)
        if last:  # the rollout ends mid-episode
            return total + discount * gamma * next_value
        discount *= gamma
    raise AssertionError("unreachable")


@pytest.mark.parametrize("bootstrap_truncation", [True, False])
def test_lambda_one_gives_monte_carlo_returns_with_bootstraps(bootstrap_truncation):
    exp, gamma = random_rollout(), 0.9
    _, returns = advantages(exp, gamma, 1.0, bootstrap_truncation)
    rows, steps = exp.values.shape
    expected = [
        [forward_return(exp, n, t, gamma, bootstrap_truncation) for t in range(steps)] for n in range(rows)
    ]
    np.testing.assert_allclose(returns.numpy(), np.array(expected), rtol=1e-5, atol=1e-5)


def test_lambda_zero_gives_one_step_td_errors():
    exp, gamma = random_rollout(seed=1), 0.95
    adv, _ = advantages(exp, gamma, 0.0, bootstrap_truncation=True)
    next_values = torch.cat([exp.values[:, 1:], exp.next_values[:, None]], 1)
    next_masks = torch.cat([exp.masks[:, 1:], exp.next_masks[:, None]], 1)
    td = exp.rewards + gamma * next_values * next_masks * (1 - exp.terminals) - exp.values
    torch.testing.assert_close(adv, td)
