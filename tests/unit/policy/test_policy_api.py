"""PufferLib's policy API: `policy(obs)` is get_action_and_value, as PufferLib users call it."""

import inspect

import numpy as np
import torch

import pufferlib.environments as environments
from pufferlib.frameworks.cleanrl import Policy, RecurrentPolicy
from pufferlib.models import Default, LSTMWrapper


def test_policy_call_is_get_action_and_value():
    env = environments.make("ocean/squared")
    obs = torch.from_numpy(env.reset(seed=0)[0])
    policy = Policy(Default(env))
    torch.manual_seed(0)
    called = policy(obs)
    torch.manual_seed(0)
    direct = policy.get_action_and_value(obs)
    assert len(called) == 4
    for a, b in zip(called, direct, strict=True):
        torch.testing.assert_close(a, b)
    action = called[0]
    _, log_prob, _, _ = policy(obs, action)  # evaluates a given action, as CleanRL's update does
    torch.testing.assert_close(log_prob, direct[1])


def test_recurrent_policy_call_carries_state():
    env = environments.make("ocean/memory")
    policy = RecurrentPolicy(LSTMWrapper(env, environments.get("ocean/memory").policy_class()(env)))
    obs = torch.from_numpy(np.ones((2, 1), np.float32))
    action, _, _, value, state = policy(obs)
    assert action.shape == (2,) and value.shape == (2, 1)
    *_, state2 = policy(obs, state)
    assert not torch.equal(state[0], state2[0])


def test_lstm_wrapper_docstring_names_its_parameters():
    doc = inspect.getdoc(LSTMWrapper)
    params = [p for p in inspect.signature(LSTMWrapper.forward).parameters if p != "self"]
    assert params == ["observations", "state", "starts"]
    assert "starts" in doc and "dones" not in doc
