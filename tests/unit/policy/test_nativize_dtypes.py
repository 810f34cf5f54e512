"""Every dtype a gymnasium Box may carry survives nativize and the default policy."""

import gymnasium
import numpy as np
import pytest
import torch

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.frameworks.cleanrl import Policy
from pufferlib.models import Default
from pufferlib.pytorch import NUMPY_TO_TORCH, nativize_dtype, nativize_tensor, torch_dtype

BOX_DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64]
BOX_DTYPES += [np.float16, np.float32, np.float64, np.bool_]


class Mixed(gymnasium.Env):
    """A Dict observation whose 'x' leaf has the dtype under test, beside a float32 leaf."""

    action_space = gymnasium.spaces.Discrete(3)

    def __init__(self, dtype):
        high = 1 if np.dtype(dtype).kind == "b" else 7
        self.observation_space = gymnasium.spaces.Dict(
            {
                "x": gymnasium.spaces.Box(0, high, (3,), dtype),
                "y": gymnasium.spaces.Box(-1, 1, (2,), np.float32),
            }
        )
        self.value = np.array([1, 0, 1], dtype=dtype)

    def reset(self, seed=None, options=None):
        return {"x": self.value, "y": np.zeros(2, np.float32)}, {}

    def step(self, action):
        return self.reset()[0], 0.0, False, False, {}


@pytest.mark.parametrize("dtype", BOX_DTYPES, ids=lambda d: np.dtype(d).name)
def test_dict_leaf_of_every_box_dtype(dtype):
    env = GymnasiumPufferEnv(env=Mixed(dtype))
    obs, _ = env.reset()
    native = nativize_dtype(env.emulated)
    leaf = nativize_tensor(torch.from_numpy(obs), native)["x"]
    assert leaf.dtype == NUMPY_TO_TORCH[np.dtype(dtype)]
    assert leaf.float().tolist() == [[1.0, 0.0, 1.0]]
    policy = Policy(Default(env))
    with torch.no_grad():
        action, _, _, value = policy.get_action_and_value(torch.from_numpy(obs))
    assert torch.isfinite(value).all()
    env.step(action.numpy())


def test_refused_dtype_is_named_with_its_leaf():
    with pytest.raises(TypeError, match=r"numpy float128 at observation\.x.*Supported"):
        torch_dtype(np.longdouble, "observation.x")


def test_big_endian_leaf_is_stored_in_native_order():
    env = GymnasiumPufferEnv(env=Mixed(np.dtype(">f4")))
    obs, _ = env.reset()
    leaf = nativize_tensor(torch.from_numpy(obs), nativize_dtype(env.emulated))["x"]
    assert leaf.tolist() == [[1.0, 0.0, 1.0]]
