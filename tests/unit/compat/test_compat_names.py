"""The names PufferLib code imports resolve here, to the same objects (aliases, not copies)."""

import gymnasium
import numpy as np
import pytest

import pufferlib
import pufferlib.emulation
import pufferlib.exceptions
import pufferlib.pytorch
import pufferlib.spaces
import pufferlib.wrappers
from pufferlib.ocean import Multiagent, Spaces


def test_exceptions_are_the_same_classes():
    assert pufferlib.exceptions.APIUsageError is pufferlib.APIUsageError
    assert pufferlib.exceptions.EnvironmentSetupError is pufferlib.EnvironmentSetupError
    error = pufferlib.exceptions.InvalidAgentError("bob", ["alice"])
    assert isinstance(error, ValueError) and isinstance(error, pufferlib.APIUsageError)
    assert "'bob' is not in possible_agents ['alice']" in str(error)


def test_spaces_are_gymnasiums():
    for name in ("Box", "Dict", "Discrete", "MultiBinary", "MultiDiscrete", "Tuple"):
        assert getattr(pufferlib.spaces, name) is getattr(gymnasium.spaces, name)
    assert isinstance(gymnasium.spaces.Discrete(3), pufferlib.spaces.Discrete)  # PufferLib's isinstance use
    assert pufferlib.spaces.joint_space is pufferlib.joint_space


def test_namespace():
    ns = pufferlib.namespace(lr=3e-4, env="ocean/squared")
    assert ns.lr == ns["lr"] == 3e-4 and dict(ns) == {"lr": 3e-4, "env": "ocean/squared"}
    assert pufferlib.namespace(ns, lr=1e-3) is ns and ns.lr == 1e-3


def test_emulation_names():
    assert pufferlib.emulation.GymPufferEnv is pufferlib.emulation.GymnasiumPufferEnv
    env = pufferlib.emulation.GymnasiumPufferEnv(env=Spaces())
    obs, _ = env.reset(seed=1)
    native = pufferlib.emulation.nativize(
        obs[0], env.emulated["emulated_observation_space"], env.emulated["observation_dtype"]
    )
    np.testing.assert_array_equal(native["image"], env.env.obs["image"])
    np.testing.assert_array_equal(native["flat"], env.env.obs["flat"])


def test_native_dtype_describes_nativize_dtype():
    env = pufferlib.emulation.GymnasiumPufferEnv(env=Spaces())
    native: pufferlib.pytorch.NativeDType = pufferlib.pytorch.nativize_dtype(env.emulated)
    assert set(native) == {"image", "flat"}


class OldPettingZoo(Multiagent):
    """The pre-1.24 PettingZoo API: reset returns observations alone; step returns `dones`."""

    def reset(self, seed=None, options=None):
        return super().reset(seed=seed)[0]

    def step(self, actions):
        obs, rewards, terminations, truncations, infos = super().step(actions)
        return obs, rewards, {a: terminations[a] or truncations[a] for a in obs}, infos


def test_pettingzoo_truncated_wrapper_brings_old_envs_to_the_current_api():
    with pytest.raises((ValueError, AttributeError)):  # emulation cannot unpack the old reset
        pufferlib.emulation.PettingZooPufferEnv(env=OldPettingZoo()).reset()
    env = pufferlib.emulation.PettingZooPufferEnv(
        env=pufferlib.wrappers.PettingZooTruncatedWrapper(OldPettingZoo())
    )
    env.reset(seed=0)
    _, rewards, _, truncations, _ = env.step(np.zeros(2, np.int64))
    assert not truncations.any() and rewards.shape == (2,)
