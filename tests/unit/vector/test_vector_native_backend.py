"""backend=PufferEnv returns the env itself, which already speaks the vector API."""

import functools

import numpy as np
from _vector_envs import counter

import pufferlib
import pufferlib.vector
from pufferlib.environments import ocean


def test_returns_the_env_with_the_vector_api():
    env = pufferlib.vector.make(counter, backend=pufferlib.PufferEnv, seed=5)
    assert isinstance(env, pufferlib.PufferEnv)
    env.async_reset()
    obs, rewards, _terminals, _truncations, _infos, ids, masks = env.recv()
    assert obs[0, 0] == 5 and ids.tolist() == [0] and masks.all()
    env.send(np.array([2]))
    obs, rewards, *_ = env.recv()
    assert rewards.tolist() == [2]
    env.close()


def test_backend_by_name():
    env = pufferlib.vector.make(functools.partial(ocean.make_env, "squared"), backend="PufferEnv")
    assert env.agents_per_batch == env.num_agents
    env.close()
