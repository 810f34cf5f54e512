"""bsuite bindings: every experiment's ids (MNIST aside), dm_env steps as terminals or truncations, seeds."""

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib.environments import bsuite

BINDINGS = environments.bindings("bsuite")


@pytest.fixture(autouse=True)
def _installed():
    require(BINDINGS[0])


def test_catalog_is_the_sweep_without_mnist():
    from bsuite import sweep

    expected = {f"bsuite/{i}" for i in sweep.SWEEP if not i.startswith("mnist")}
    assert set(environments.catalog("bsuite")) == expected and len(expected) == 408
    assert {b.name for b in BINDINGS} == {"bsuite/catch/0", "bsuite/deep_sea/0", "bsuite/memory_len/0"}


@pytest.mark.parametrize("experiment", list(bsuite.EXPERIMENTS))
def test_first_setting_of_every_experiment(experiment):
    env = environments.make(f"bsuite/{experiment}/0")
    try:
        run_contract(env, steps=30)
    finally:
        env.close()


def test_catch_ends_with_a_terminal_and_cartpole_time_limit_is_a_truncation():
    catch = environments.make("bsuite/catch/0")
    try:
        catch.reset(seed=0)
        for _ in range(9):  # the ball falls 9 rows
            _, rewards, terminals, truncations, _ = catch.step(np.array([1]))
        assert terminals[0] and not truncations[0] and rewards[0] in (-1.0, 1.0)
    finally:
        catch.close()
    env = bsuite.BSuite("cartpole/0")
    env.reset(seed=0)
    assert env.num_episodes == 1000  # bsuite's recommended run length is kept for the user


def test_same_seed_same_episodes_other_seed_others():
    def make():
        return environments.make("bsuite/catch/0")

    first, again, other = trace(make(), 60, seed=1), trace(make(), 60, seed=1), trace(make(), 60, seed=2)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_unknown_id_is_named():
    with pytest.raises(ValueError, match="Unknown bsuite id 'catch/99'"):
        bsuite.make_env("catch/99")
