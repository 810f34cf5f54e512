"""Multi-agent padding: rows of absent agents (mask False) never train and never bootstrap."""

import numpy as np
import torch

import pufferlib.environments as envs
from pufferlib.train import config
from pufferlib.train.ppo.gae import advantages
from pufferlib.train.ppo.rollout import Runner, collect
from pufferlib.train.setup import make_policy, make_vecenv


def test_padded_rows_are_excluded():
    binding = envs.get("ocean/multiagent")
    cfg = config.load(binding.name, {"vec.num_envs": 2, "train.num_steps": 20, "env.leave_after": 2})
    torch.manual_seed(0)
    vecenv = make_vecenv(binding, cfg)
    try:
        run = Runner.create(vecenv, make_policy(binding, vecenv.driver_env, cfg), cfg, "cpu")
        vecenv.async_reset(0)
        collect(run)
    finally:
        vecenv.close()
    exp = run.exp
    masks, valid = exp.masks.bool(), exp.valid
    agent_0, agent_1 = slice(0, None, 2), slice(1, None, 2)  # agents are sorted: agent_0, agent_1 per env
    assert masks[agent_0].all()
    assert not masks[agent_1].all() and masks[agent_1].any()  # agent_1 leaves after 2 steps
    assert not (valid & ~masks).any()
    assert (exp.rewards[~masks] == 0).all()
    # 20 steps = 4 whole episodes (4 steps + the reset step); agent_1 trains on its 2 steps in each
    assert valid[agent_1].sum() * 2 == valid[agent_0].sum()

    # an advantage never reaches across padding: it depends only on the agent's own steps
    adv, _ = advantages(exp, 0.99, 0.95, bootstrap_truncation=True)
    before = adv[valid].clone()
    exp.values[~masks] = torch.randn(int((~masks).sum()))  # garbage in padded rows
    adv, _ = advantages(exp, 0.99, 0.95, bootstrap_truncation=True)
    np.testing.assert_allclose(adv[valid].numpy(), before.numpy(), rtol=1e-6)
