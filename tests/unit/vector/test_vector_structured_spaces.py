"""Dict observations and actions (ocean/spaces) through Serial and Multiprocessing: flat rows unflatten."""

import functools

import numpy as np
import pytest

import pufferlib.vector
from pufferlib import spaces as pspaces
from pufferlib.environments import ocean
from pufferlib.ocean import Spaces


@pytest.mark.parametrize("backend, kwargs", [("serial", {}), ("multiprocessing", {"num_workers": 2})])
def test_observations_unflatten_to_the_envs_own(backend, kwargs):
    creator = functools.partial(ocean.make_env, "spaces")
    with pufferlib.vector.make(creator, backend=backend, num_envs=4, seed=10, **kwargs) as vecenv:
        dtype = vecenv.emulated["observation_dtype"]
        space = vecenv.emulated["emulated_observation_space"]
        assert vecenv.single_action_space.nvec.tolist() == [2, 2]
        vecenv.async_reset()
        for step in range(6):
            obs, rewards, terminals, _truncations, _infos, ids, _masks = vecenv.recv()
            rows = obs.view(dtype).reshape(len(ids))
            for row in rows:
                assert space.contains(pspaces.read_observation(row, space))
            # what the env itself would observe: a fresh Spaces env reset with the same seed
            if step == 0:  # first batch: reset observations of envs with seed 10 + id
                for row, env_id in zip(rows, ids.tolist(), strict=True):
                    ref, _ = Spaces().reset(seed=10 + env_id)
                    ob = pspaces.read_observation(row, space)
                    np.testing.assert_array_equal(ob["image"], ref["image"])
                    np.testing.assert_array_equal(ob["flat"], ref["flat"])
            # the right answer for each part is rewarded 0.5: send it from the unflattened obs
            keys = list(vecenv.emulated["emulated_action_space"].spaces)  # the flat action's order
            answers = [
                [int(ob[key].sum() > 0) for key in keys]
                for ob in (pspaces.read_observation(r, space) for r in rows)
            ]
            vecenv.send(np.array(answers))
            obs, rewards, terminals, *_ = vecenv.recv()
            assert (rewards[terminals] == 1.0).all() and terminals.any()
            vecenv.send(np.zeros((len(ids), 2), int))  # this send resets the finished envs
