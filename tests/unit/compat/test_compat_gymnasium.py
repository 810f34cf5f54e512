"""to_gymnasium passes gymnasium's check_env for every installed single-agent binding.

The registry is iterated, so families added later are covered without touching this file.
"""

import warnings

import gymnasium
import numpy as np
import pytest
from _strict import skip_or_fail
from gymnasium.utils.env_checker import check_env

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.compat import to_gymnasium
from pufferlib.emulation import GymnasiumPufferEnv

SINGLE = [b for b in environments.bindings() if not b.multiagent]
# What check_env says of any env without a registered spec, of unbounded/asymmetric Boxes, or of
# text renderers that declare no frame rate.
BENIGN = (
    "alternative render modes",
    "infinity",
    "symmetric and normalized",
    "precision lowered",
    "render fps",
)


def checked(env: gymnasium.Env) -> None:
    """check_env, with every warning it raises (obs outside the space, wrong dtypes...) an error."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=False)
    problems = [str(w.message) for w in seen if not any(b in str(w.message) for b in BENIGN)]
    assert not problems, problems


@pytest.mark.parametrize("binding", SINGLE, ids=lambda b: b.name)
def test_check_env(binding):
    if not binding.available():
        skip_or_fail(f"{binding.name} not installed: {binding.install_hint}")
    env = to_gymnasium(binding.make_env())
    try:
        if binding.seeding != "full":  # the binding says it does not honour seeds: check_env must see it
            with pytest.raises(AssertionError, match="not equivalent for the same seed"):
                checked(env)
            return
        checked(env)
    finally:
        env.close()


def test_structured_spaces_pass_check_env():
    env = to_gymnasium(environments.make("ocean/spaces"), structured=True)
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)
    assert isinstance(env.action_space, gymnasium.spaces.Dict)
    checked(env)
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    env.step(env.action_space.sample())


def test_same_trajectory_as_the_env_itself():
    """The adapter adds nothing: CartPole through it steps exactly like gymnasium's CartPole."""
    ours = to_gymnasium(environments.make("classic_control/CartPole-v1"))
    theirs = gymnasium.make("CartPole-v1")
    a, _ = ours.reset(seed=11)
    b, _ = theirs.reset(seed=11)
    np.testing.assert_array_equal(a, b)
    for t in range(40):
        out_a, out_b = ours.step(t % 2), theirs.step(t % 2)
        np.testing.assert_array_equal(out_a[0], out_b[0])
        assert out_a[1:4] == out_b[1:4]
        if out_a[2] or out_a[3]:
            assert {"episode_return", "episode_length"} <= out_a[4].keys()
            break


def test_multiagent_env_is_refused():
    with pytest.raises(APIUsageError, match="to_pettingzoo"):
        to_gymnasium(environments.make("ocean/multiagent"))


class Broken(gymnasium.Env):
    """Steps deterministically but truncates after one step: check_env must go red."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, True, {}


def test_check_env_goes_red_on_a_broken_env():
    with pytest.raises(AssertionError, match="truncates after 1 step"):
        checked(to_gymnasium(GymnasiumPufferEnv(env=Broken())))


def test_pufferlib3_reset_without_a_seed_starts_a_fresh_episode():
    """reset() after reset(seed=s) is a new start, the same one every time after s (3.0.0's cartpole resets
    with seed 0 whenever none is given; blastar's C refuses None)."""
    if not environments.bindings("pufferlib3"):
        skip_or_fail("no pufferlib3 catalog registered: tests/run.sh builds it ($PUFFERTANK_TEST_PL3_HOME)")
    for name in ("pufferlib3/cartpole", "pufferlib3/blastar"):
        env = to_gymnasium(environments.make(name))
        try:
            seeded, _ = env.reset(seed=5)
            fresh = [env.reset()[0] for _ in range(2)]
            env.reset(seed=5)
            assert np.array_equal(fresh[0], env.reset()[0]), name  # determined by the last seed
            if name.endswith("cartpole"):  # its start is random: a fresh one differs
                assert not np.array_equal(seeded, fresh[0]) and not np.array_equal(fresh[0], fresh[1])
        finally:
            env.close()
