"""The rollout stores each observation with the action taken on it and that action's outcome.

Password shows the bits entered so far, so the next observation reveals the action: any
misalignment of observations, actions, rewards or episode ends between rows or steps shows up.
Checked synchronously and with EnvPool-style batches (Serial blocks, Multiprocessing workers).
"""

import numpy as np
import pytest
import torch

import pufferlib.environments as envs
from pufferlib.train import config
from pufferlib.train.ppo.rollout import Runner, collect
from pufferlib.train.setup import make_policy, make_vecenv

LAYOUTS = {
    "serial-sync": {"vec.backend": "serial", "vec.num_envs": 4},
    "serial-async": {"vec.backend": "serial", "vec.num_envs": 4, "vec.batch_size": 2},
    "multiprocessing-async": {
        "vec.backend": "multiprocessing",
        "vec.num_envs": 4,
        "vec.num_workers": 2,
        "vec.batch_size": 2,
    },
}


def rollouts(layout, count=2, steps=24):
    binding = envs.get("ocean/password")
    cfg = config.load(binding.name, {**LAYOUTS[layout], "train.num_steps": steps})
    torch.manual_seed(0)
    vecenv = make_vecenv(binding, cfg)
    try:
        run = Runner.create(vecenv, make_policy(binding, vecenv.driver_env, cfg), cfg, "cpu")
        vecenv.async_reset(0)
        out = []
        for _ in range(count):
            collect(run)
            names = [name for name in run.exp.__dataclass_fields__ if name not in ("h0", "c0")]
            out.append({name: getattr(run.exp, name).clone().numpy() for name in names})
        solution = vecenv.driver_env.env.solution
    finally:
        vecenv.close()
    return out, solution


def check_row(exp, n, solution):
    obs, steps = exp["obs"][n], exp["obs"].shape[1]
    for t in range(steps - 1):
        entered = int((obs[t] != -1).sum())
        if not exp["valid"][n, t]:  # the final observation of an episode; the next one starts anew
            assert entered == len(solution)
            assert (obs[t + 1] == -1).all() and exp["starts"][n, t + 1] == 1
            continue
        expected = obs[t].copy()
        expected[entered] = exp["actions"][n, t]  # Discrete(2): one action per row
        np.testing.assert_array_equal(obs[t + 1], expected)
        final = entered + 1 == len(solution)
        assert exp["terminals"][n, t] == final
        assert exp["rewards"][n, t] == float(final and np.array_equal(expected, solution))
        assert exp["truncations"][n, t] == 0


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_row_is_aligned(layout):
    out, solution = rollouts(layout)
    for exp in out:
        assert exp["masks"].all()
        assert not exp["valid"].all() and exp["valid"].any()
        for n in range(exp["obs"].shape[0]):
            check_row(exp, n, solution)


@pytest.mark.parametrize("layout", ["serial-sync", "serial-async"])
def test_the_next_rollout_continues_where_the_last_ended(layout):
    (first, second), solution = rollouts(layout)
    joined = {k: np.concatenate([first[k], second[k][:, :1]], axis=1) for k in first if first[k].ndim >= 2}
    for n in range(first["obs"].shape[0]):
        check_row(joined, n, solution)
    np.testing.assert_array_equal(first["next_values"], second["values"][:, 0])
