"""Multi-agent envs through Serial and Multiprocessing: agent rows, ids and masks (an agent leaving)."""

import functools

import numpy as np
import pytest

import pufferlib.vector
from pufferlib.environments import ocean

CREATOR = functools.partial(ocean.make_env, "multiagent", horizon=4, leave_after=2)
BACKENDS = [
    ("serial", {}),
    ("multiprocessing", {"num_workers": 2}),
    ("multiprocessing", {"num_workers": 2, "batch_size": 1, "zero_copy": False}),
]


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_masks_follow_agent_1_leaving(backend, kwargs):
    """agent_1 leaves at tick 2: its row is present at ticks 0-2, masked at 3-4, back after the reset."""
    with pufferlib.vector.make(CREATOR, backend=backend, num_envs=2, seed=0, **kwargs) as vecenv:
        assert vecenv.num_agents == 4
        assert vecenv.agents_per_batch == 2 * kwargs.get("batch_size", 2)
        expected = {0: True, 1: True, 2: True, 3: False, 4: False}
        tick = {}
        vecenv.async_reset()
        for _ in range(16):
            obs, _rewards, terminals, _truncations, _infos, ids, masks = vecenv.recv()
            for env in sorted(set((ids // 2).tolist())):
                t = tick[env] = (tick.get(env, -1) + 1) % 5  # 4 steps, then the reset on the next send
                row0, row1 = np.flatnonzero(ids == 2 * env), np.flatnonzero(ids == 2 * env + 1)
                assert masks[row0].all() and obs[row0, 0] == 0  # agent_0 is always there and sees 0
                assert bool(masks[row1][0]) == expected[t], f"env {env} tick {t}"
                if masks[row1][0]:
                    assert obs[row1, 0] == 1  # agent_1 sees 1
                else:
                    assert obs[row1, 0] == 0  # absent agents are zero-padded
                if t == 2:
                    assert terminals[row1][0]  # agent_1's last step: terminal, still unmasked
            vecenv.send(ids % 2)  # each agent's right answer


@pytest.mark.parametrize("backend, kwargs", BACKENDS[:2])
def test_right_answers_are_rewarded_per_agent(backend, kwargs):
    with pufferlib.vector.make(CREATOR, backend=backend, num_envs=2, seed=0, **kwargs) as vecenv:
        vecenv.reset()
        _, rewards, _, _, _ = vecenv.step(np.array([0, 1, 1, 0]))  # env 0 right, env 1 wrong
        np.testing.assert_allclose(rewards, [0.25, 0.25, 0.0, 0.0])
