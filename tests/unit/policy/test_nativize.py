"""nativize_tensor recovers structured observations in torch as zero-copy views, also compiled."""

import numpy as np
import torch
from _strict import skip_or_fail

import pufferlib.environments as environments
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.pytorch import nativize_dtype, nativize_tensor


def test_matches_numpy_leaves():
    env = environments.make("ocean/spaces")
    env.reset(seed=3)
    native = nativize_dtype(env.emulated)
    batch = torch.from_numpy(env.observations)
    obs = nativize_tensor(batch, native)
    assert obs["image"].dtype == torch.float32 and obs["image"].shape == (1, 5, 5)
    assert obs["flat"].dtype == torch.int8 and obs["flat"].shape == (1, 5)
    np.testing.assert_array_equal(obs["image"][0].numpy(), env.env.obs["image"])
    np.testing.assert_array_equal(obs["flat"][0].numpy(), env.env.obs["flat"])


def test_views_share_memory():
    env = environments.make("ocean/spaces")
    env.reset(seed=3)
    batch = torch.from_numpy(env.observations)
    obs = nativize_tensor(batch, nativize_dtype(env.emulated))
    start, end = batch.data_ptr(), batch.data_ptr() + batch.numel() * batch.element_size()
    for leaf in obs.values():
        assert start <= leaf.data_ptr() < end  # a view into the batch, not a copy
    env.reset(seed=4)  # the env writes in place: the views see it
    np.testing.assert_array_equal(obs["image"][0].numpy(), env.env.obs["image"])


def test_box_observations_pass_through():
    env = environments.make("classic_control/CartPole-v1")
    assert nativize_dtype(env.emulated) is None
    x = torch.zeros(2, 4)
    assert nativize_tensor(x, None) is x


def test_nested_tuple_and_batch():
    import gymnasium

    space = gymnasium.spaces.Tuple(
        [
            gymnasium.spaces.Discrete(4),
            gymnasium.spaces.Dict({"pos": gymnasium.spaces.Box(-1, 1, (2,), np.float64)}),
        ]
    )

    class Nested(gymnasium.Env):
        observation_space = space
        action_space = gymnasium.spaces.Discrete(2)

        def reset(self, seed=None, options=None):
            return (3, {"pos": np.array([0.5, -0.25])}), {}

    env = GymnasiumPufferEnv(env=Nested())
    env.reset()
    batch = torch.from_numpy(np.repeat(env.observations, 4, axis=0))
    obs = nativize_tensor(batch, nativize_dtype(env.emulated))
    assert obs["f0"].tolist() == [3] * 4
    assert obs["f1"]["pos"].dtype == torch.float64
    assert obs["f1"]["pos"][2].tolist() == [0.5, -0.25]


def test_works_under_torch_compile():
    env = environments.make("ocean/spaces")
    env.reset(seed=5)
    native = nativize_dtype(env.emulated)

    def features(x):
        obs = nativize_tensor(x, native)
        return obs["image"].sum(dim=(1, 2)) + obs["flat"].float().sum(dim=1)

    try:
        compiled = torch.compile(features)
        got = compiled(torch.from_numpy(env.observations))
    except Exception as exc:
        if not _missing_compiler(exc):  # any other torch.compile error is a real failure
            raise
        skip_or_fail(f"torch.compile needs a C++ compiler for inductor, and none was found: {exc}")
    torch.testing.assert_close(got, features(torch.from_numpy(env.observations)))


def _missing_compiler(exc: BaseException | None) -> bool:
    """Whether `exc` (or an error it wraps) is inductor's "no C++ compiler" error."""
    from torch._inductor.exc import InvalidCxxCompiler

    while exc is not None:
        if isinstance(exc, InvalidCxxCompiler):
            return True
        exc = getattr(exc, "inner_exception", None) or exc.__cause__
    return False
