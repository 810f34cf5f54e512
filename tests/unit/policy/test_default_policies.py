"""The default policy of every installed binding runs a forward pass on real observations."""

import numpy as np
import pytest
import torch
from _strict import skip_or_fail

import pufferlib.environments as environments
from pufferlib.frameworks.cleanrl import Policy, RecurrentPolicy
from pufferlib.models import LSTMWrapper

BINDINGS = [b for b in environments.bindings() if b.name != "ocean/performance"]


@pytest.mark.parametrize("binding", BINDINGS, ids=lambda b: b.name)
def test_forward_pass(binding):
    if not binding.available():
        skip_or_fail(f"{binding.name} not installed: {binding.install_hint}")
    env = binding.make_env()
    try:
        obs, _ = env.reset(seed=0)
        policy = Policy(binding.policy_class()(env))
        with torch.no_grad():
            action, log_prob, entropy, value = policy.get_action_and_value(torch.from_numpy(obs))
        assert value.shape == (env.num_agents, 1)
        assert log_prob.shape == entropy.shape == (env.num_agents,)
        assert torch.isfinite(log_prob).all() and torch.isfinite(value).all()
        env.step(action.numpy().reshape(env.actions.shape))
    finally:
        env.close()


def test_lstm_wrapper_carries_state_and_resets_on_start():
    env = environments.make("ocean/memory")
    policy = RecurrentPolicy(LSTMWrapper(env, environments.get("ocean/memory").policy_class()(env)))
    obs = torch.from_numpy(np.ones((3, 4, 1), np.float32))
    starts = torch.zeros(3, 4)
    starts[1, 2] = 1  # row 1 begins a new episode at t=2
    with torch.no_grad():
        _, _, _, value, _ = policy.get_action_and_value(obs, starts=starts)
        _, _, _, fresh, _ = policy.get_action_and_value(obs[:, :2])
    value = value.reshape(3, 4)
    fresh = fresh.reshape(3, 2)
    torch.testing.assert_close(value[1, 2:], fresh[1])  # state was zeroed at the start
    assert not torch.allclose(value[0, 2:], fresh[0])  # row 0 carried its state


def test_action_masks_are_honoured():
    from pufferlib.frameworks.cleanrl import sample_logits

    logits = [torch.zeros(64, 3), torch.zeros(64, 2)]
    mask = torch.tensor([[0, 1, 0, 1, 0]]).repeat(64, 1)
    action, _, _ = sample_logits(logits, mask=mask)
    assert (action[:, 0] == 1).all() and (action[:, 1] == 0).all()


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_default_policy_depth_is_num_layers(layers):
    from pufferlib.models import Default

    env = environments.make("ocean/squared_py")
    try:
        policy = Default(env, hidden_size=16, num_layers=layers)
        linears = [m for m in policy.encoder if isinstance(m, torch.nn.Linear)]
        assert len(linears) == layers and all(m.out_features == 16 for m in linears)
        with torch.no_grad():
            _, value = policy(torch.from_numpy(env.reset(seed=0)[0]))
        assert value.shape == (env.num_agents, 1)
    finally:
        env.close()


def test_a_default_policy_without_layers_is_a_config_error():
    from pufferlib.train import config
    from pufferlib.train.config import ConfigError
    from pufferlib.train.setup import make_policy

    binding = environments.get("ocean/squared_py")
    env = binding.make_env()
    try:
        cfg = config.load("ocean/squared_py", {"policy.num_layers": 0})
        with pytest.raises(ConfigError, match="num_layers must be at least 1, got 0"):
            make_policy(binding, env, cfg)
    finally:
        env.close()
