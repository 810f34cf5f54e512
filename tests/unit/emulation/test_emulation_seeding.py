"""Same seed -> identical traces; different seeds -> different traces."""

import numpy as np
import pytest
from _vector_envs import random_actions

import pufferlib.environments as environments

ENVS = ["ocean/squared", "ocean/spaces", "ocean/memory", "classic_control/CartPole-v1"]


def trace(name: str, seed: int, steps: int = 60) -> np.ndarray:
    env = environments.make(name, seed=seed)
    rng = np.random.default_rng(0)  # the same action sequence for every seed
    env.reset()
    rows = []
    for _ in range(steps):
        if env.done:
            env.reset()
            rows.append(env.observations.copy().ravel().astype(np.float64))
            continue
        action = random_actions(env, rng)
        obs, rewards, terminals, truncations, _ = env.step(action)
        rows.append(np.concatenate([obs.ravel().astype(np.float64), rewards, terminals, truncations]))
    env.close()
    return np.concatenate(rows)


@pytest.mark.parametrize("name", ENVS)
def test_same_seed_same_trace(name):
    np.testing.assert_array_equal(trace(name, 7), trace(name, 7))


@pytest.mark.parametrize("name", ENVS)
def test_different_seeds_differ(name):
    assert not np.array_equal(trace(name, 7), trace(name, 8))


def test_explicit_reset_seed_overrides_constructor_seed():
    a = environments.make("ocean/squared", seed=1)
    b = environments.make("ocean/squared", seed=2)
    np.testing.assert_array_equal(a.reset(seed=5)[0], b.reset(seed=5)[0])
