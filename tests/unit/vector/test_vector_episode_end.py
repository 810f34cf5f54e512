"""Emulated envs reset on the send after a done: that slot's action is ignored and reward is 0."""

import pytest
from _vector_envs import counter

import pufferlib.vector

BACKENDS = [("serial", {}), ("multiprocessing", {"num_workers": 2})]


@pytest.mark.parametrize("backend, kwargs", BACKENDS)
def test_reset_on_the_send_after_truncation(backend, kwargs):
    with pufferlib.vector.make(
        counter, backend=backend, num_envs=2, seed=0, env_kwargs={"horizon": 2}, **kwargs
    ) as v:
        obs, _ = v.reset()
        assert obs[:, 1].tolist() == [0, 0]
        obs, rewards, terminals, truncations, infos = v.step([1, 2])
        assert obs[:, 1].tolist() == [1, 1] and rewards.tolist() == [1, 2] and not truncations.any()
        obs, rewards, terminals, truncations, infos = v.step([3, 3])
        assert obs[:, 1].tolist() == [2, 2] and truncations.all() and not terminals.any()
        assert [i["episode_length"] for i in infos] == [2, 2]
        assert [i["episode_return"] for i in infos] == [4.0, 5.0]
        obs, rewards, terminals, truncations, infos = v.step([3, 3])  # consumed by the reset
        assert obs[:, 1].tolist() == [0, 0] and obs[:, 2].tolist() == [-1, -1]
        assert rewards.tolist() == [0, 0] and not truncations.any() and infos == []
        obs, rewards, *_ = v.step([2, 1])
        assert obs[:, 1].tolist() == [1, 1] and rewards.tolist() == [2, 1]
