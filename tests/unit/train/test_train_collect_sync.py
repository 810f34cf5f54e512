"""The synchronous collect (one slice per value, numpy writes on the CPU) stores exactly
what the general collect stores: every rollout tensor, the bootstrap values and the transitions in
flight, for a plain, a multi-agent (padding masks) and a recurrent policy."""

import numpy as np
import pytest
import torch

import pufferlib.environments as envs
from pufferlib.train import config
from pufferlib.train.ppo.rollout import Runner, collect
from pufferlib.train.setup import make_policy, make_vecenv

CASES = {
    "password": ("ocean/password", {}),
    "multiagent": ("ocean/multiagent", {}),
    "memory-lstm": ("ocean/memory", {"rnn.enabled": True, "train.bptt_horizon": 4}),
}


def rollouts(env: str, overrides: dict, sync: bool, count: int = 3) -> list[dict]:
    binding = envs.get(env)
    cfg = config.load(
        binding.name, {"vec.backend": "serial", "vec.num_envs": 3, "train.num_steps": 16, **overrides}
    )
    torch.manual_seed(0)
    vecenv = make_vecenv(binding, cfg)
    try:
        run = Runner.create(vecenv, make_policy(binding, vecenv.driver_env, cfg), cfg, "cpu")
        assert run.sync  # a synchronous Serial vector env: the fast path is the default
        run.sync = sync
        vecenv.async_reset(0)
        out = []
        for _ in range(count):
            collect(run)
            got = {
                name: value.clone()
                for name, value in vars(run.exp).items()
                if isinstance(value, torch.Tensor)
            }
            got.update({f"carry.{name}": value.clone() for name, value in run.carry.items()})
            got["ptr"] = torch.from_numpy(run.ptr.copy())
            got["steps"] = torch.tensor(run.steps)
            out.append(got)
    finally:
        vecenv.close()
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_sync_collect_matches_the_general_one(case):
    fast, general = rollouts(*CASES[case], sync=True), rollouts(*CASES[case], sync=False)
    for i, (a, b) in enumerate(zip(fast, general, strict=True)):
        assert a.keys() == b.keys()
        for name in a:
            torch.testing.assert_close(a[name], b[name], msg=lambda m, n=name, i=i: f"rollout {i}, {n}: {m}")
    assert not np.all(fast[-1]["valid"].numpy())  # episodes ended inside the rollouts compared
