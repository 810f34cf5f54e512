"""float64 observations for a float32 Box are cast with one warning naming the leaf.

Only values the declared dtype cannot represent are refused; NaN is refused as before.
"""

import warnings

import gymnasium
import numpy as np
import pytest

from pufferlib import APIUsageError
from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv
from pufferlib.ocean import Multiagent


class Sloppy(gymnasium.Env):
    """Declares float32 (and uint8) leaves and returns whatever `make` builds."""

    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, space, make):
        self.observation_space = space
        self.make = make

    def reset(self, seed=None, options=None):
        return self.make(), {}

    def step(self, action):
        return self.make(), 1.0, False, False, {}


BOX = gymnasium.spaces.Box(-10, 10, (3,), np.float32)
DICT = gymnasium.spaces.Dict({"pos": BOX, "grid": gymnasium.spaces.Box(0, 255, (2,), np.uint8)})


def casts(env, steps=3):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        env.reset()
        for _ in range(steps):
            env.step(np.array([0]))
    return [str(w.message) for w in seen]


def test_float64_box_is_cast_and_warned_once():
    env = GymnasiumPufferEnv(env=Sloppy(BOX, lambda: np.array([0.5, -1.25, 3.0])))
    messages = casts(env)
    assert len(messages) == 1 and "observation is float64" in messages[0] and "float32" in messages[0]
    assert env.observations.dtype == np.float32
    assert env.observations[0].tolist() == [0.5, -1.25, 3.0]


def test_dict_leaf_is_named():
    make = lambda: {"pos": np.array([1.0, 2.0, 3.0]), "grid": np.array([4, 5], np.int64)}  # noqa: E731
    env = GymnasiumPufferEnv(env=Sloppy(DICT, make))
    messages = casts(env)
    assert sorted(m.split(" is ")[0].split(": ")[1] for m in messages) == [
        "observation.grid",
        "observation.pos",
    ]


def test_python_list_observation_is_cast():
    env = GymnasiumPufferEnv(env=Sloppy(BOX, lambda: [1, 2, 3]))
    casts(env)
    assert env.observations[0].tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    ("space", "make", "match"),
    [
        (
            gymnasium.spaces.Box(-np.inf, np.inf, (1,), np.float32),
            lambda: np.array([1e300]),
            "cannot represent",
        ),
        (DICT, lambda: {"pos": np.zeros(3), "grid": np.array([1, 300])}, r"observation\.grid .*\[300\]"),
        (DICT, lambda: {"pos": np.zeros(3), "grid": np.array([1.5, 2.0])}, r"observation\.grid .*\[1\.5\]"),
        (BOX, lambda: np.array([np.nan, 0, 0]), "does not match the declared observation space"),
        (BOX, lambda: np.array([11.0, 0, 0]), "does not match the declared observation space"),
    ],
    ids=["overflow", "int-out-of-range", "fraction-for-int", "nan", "out-of-bounds"],
)
def test_unrepresentable_values_are_refused(space, make, match):
    env = GymnasiumPufferEnv(env=Sloppy(space, make))
    with pytest.raises(APIUsageError, match=match):
        env.reset()


class SloppyAgents(Multiagent):
    def reset(self, seed=None, options=None):
        obs, infos = super().reset(seed=seed, options=options)
        return {agent: ob.astype(np.float64) for agent, ob in obs.items()}, infos


def test_multiagent_leaf_warned_once():
    env = PettingZooPufferEnv(env=SloppyAgents())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        env.reset()
    assert len([w for w in seen if "float64" in str(w.message)]) == 1
