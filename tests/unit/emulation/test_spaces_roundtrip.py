"""Structured spaces survive flatten -> unflatten, for observations and actions (hypothesis-generated)."""

import gymnasium
import numpy as np
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferlib import spaces as pspaces

BOX_DTYPES = [np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64]
shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@st.composite
def boxes(draw):
    dtype = draw(st.sampled_from(BOX_DTYPES))
    shape = draw(shapes)
    if np.dtype(dtype).kind == "f":
        return spaces.Box(-10, 10, shape, dtype)
    return spaces.Box(0, 100, shape, dtype)


discretes = st.builds(spaces.Discrete, st.integers(1, 9), start=st.integers(-3, 3))
multi_discretes = st.lists(st.integers(1, 6), min_size=1, max_size=4).map(lambda n: spaces.MultiDiscrete(n))
leaves = st.one_of(boxes(), discretes, multi_discretes, st.builds(spaces.MultiBinary, st.integers(1, 5)))


def structured(leaf):
    return st.recursive(
        leaf,
        lambda children: st.one_of(
            st.dictionaries(
                st.text("abcdefgh", min_size=1, max_size=4), children, min_size=1, max_size=4
            ).map(spaces.Dict),
            st.lists(children, min_size=1, max_size=4).map(lambda xs: spaces.Tuple(xs)),
        ),
        max_leaves=8,
    )


observation_spaces = structured(leaves).filter(lambda s: not isinstance(s, spaces.Box))
action_spaces = structured(
    st.one_of(discretes, multi_discretes, st.builds(spaces.MultiBinary, st.integers(1, 4)))
)


def assert_same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@settings(max_examples=150, deadline=None)
@given(space=observation_spaces, seed=st.integers(0, 2**16))
def test_observation_round_trip(space: gymnasium.Space, seed: int):
    space.seed(seed)
    flat_space, dtype = pspaces.flat_observation_space(space)
    rows = np.zeros((3, *flat_space.shape), dtype=flat_space.dtype)
    struct = rows.view(dtype).reshape(3)
    samples = [space.sample() for _ in range(3)]
    for i, sample in enumerate(samples):
        pspaces.write_observation(struct[i], sample, space)
    for i, sample in enumerate(samples):  # rows do not overwrite each other
        restored = pspaces.read_observation(struct[i], space)
        if isinstance(space, spaces.Dict | spaces.Tuple):
            assert space.contains(restored)
        assert_same(restored if isinstance(space, spaces.Dict | spaces.Tuple) else restored[()], sample)


@settings(max_examples=150, deadline=None)
@given(space=action_spaces, seed=st.integers(0, 2**16))
def test_action_round_trip(space: gymnasium.Space, seed: int):
    space.seed(seed)
    flat_space = pspaces.flat_action_space(space)
    # a top-level Discrete stays Discrete (counted from 0); everything else becomes one MultiDiscrete
    assert isinstance(
        flat_space, spaces.Discrete if isinstance(space, spaces.Discrete) else spaces.MultiDiscrete
    )
    sample = space.sample()
    flat = pspaces.flatten_action(sample, space)
    assert flat_space.contains(flat)
    restored = pspaces.unflatten_action(flat, space)
    assert space.contains(restored)
    assert_same(restored, sample)


def test_box_action_stays_box():
    box = spaces.Box(-1, 1, (3,), np.float32)
    assert pspaces.flat_action_space(box) is box


def test_uniform_leaves_keep_their_dtype():
    space = spaces.Dict({"a": spaces.Box(0, 1, (2, 2), np.float32), "b": spaces.Box(0, 1, (3,), np.float32)})
    flat, _ = pspaces.flat_observation_space(space)
    assert flat.dtype == np.float32 and flat.shape == (7,)


def test_mixed_leaves_become_aligned_bytes():
    space = spaces.Dict({"a": spaces.Box(0, 1, (1,), np.int8), "b": spaces.Box(0, 1, (1,), np.float32)})
    flat, dtype = pspaces.flat_observation_space(space)
    assert flat.dtype == np.uint8 and flat.shape == (dtype.itemsize,)
    assert dtype.fields["b"][1] % 4 == 0  # aligned, so torch can view the field as float32
