"""Each Ocean env pays its documented reward: scripted optimal play reaches SOLVED, trivial play does not."""

import numpy as np
import pytest

from pufferlib import APIUsageError
from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv
from pufferlib.ocean import (
    Bandit,
    Continuous,
    Masked,
    Memory,
    Multiagent,
    Password,
    Performance,
    Spaces,
    Squared,
    Stochastic,
)


def mean_return(env, policy, episodes=50, seed=0):
    returns = []
    env.reset(seed=seed)
    while len(returns) < episodes:
        if env.done:
            env.reset()
        infos = env.step(policy(env))[4]
        returns += [info["episode_return"] for info in infos]
    return float(np.mean(returns))


def test_squared():
    def greedy(env):  # step onto any adjacent target (all border cells are adjacent at distance 1)
        grid, pos = env.env.grid, env.env.pos
        from pufferlib.ocean.squared import MOVES

        for i, move in enumerate(MOVES):
            x, y = np.clip(pos + move, 0, env.env.size - 1)
            if grid[x, y] == 1:
                return np.array([i])
        return np.array([0])

    env = GymnasiumPufferEnv(env=Squared())
    assert mean_return(env, greedy) == 1.0
    assert mean_return(env, lambda e: np.array([0])) < Squared.SOLVED


def test_password():
    env = GymnasiumPufferEnv(env=Password())
    solution = env.env.solution.astype(int)
    assert mean_return(env, lambda e: np.array([solution[e.env.tick]])) == 1.0
    assert mean_return(env, lambda e: np.array([1 - solution[e.env.tick]])) == 0.0
    assert np.array_equal(Password().solution, solution)  # the same password in every instance


def test_stochastic_rewards_the_coin_not_the_mode():
    env = GymnasiumPufferEnv(env=Stochastic())
    rng = np.random.default_rng(0)
    coin = mean_return(env, lambda e: np.array([int(rng.random() > 0.75)]), episodes=200)
    mode = mean_return(env, lambda e: np.array([0]))
    assert coin >= Stochastic.SOLVED > mode


def test_memory_needs_memory():
    env = GymnasiumPufferEnv(env=Memory(mem_length=2, mem_delay=1))
    assert mean_return(env, lambda e: np.array([e.env.bits[max(0, e.env.tick - 3)]])) == 1.0
    rng = np.random.default_rng(0)
    guess = mean_return(env, lambda e: rng.integers(0, 2, (1,)), episodes=400)
    assert guess < Memory.SOLVED and abs(guess - 0.5) < 0.1


def test_multiagent():
    env = PettingZooPufferEnv(env=Multiagent())
    assert mean_return(env, lambda e: np.array([[0], [1]])) == 1.0
    assert mean_return(env, lambda e: np.array([[0], [0]])) == 0.5


def test_spaces():
    def answer(env):
        obs = env.env.obs
        return np.array([int(obs["flat"].sum() > 0), int(obs["image"].sum() > 0)])  # Dict keys sorted

    env = GymnasiumPufferEnv(env=Spaces())
    assert mean_return(env, answer) == 1.0


def test_bandit():
    env = GymnasiumPufferEnv(env=Bandit())
    good = env.env.solution
    assert mean_return(env, lambda e: np.array([good])) == 1.0
    assert mean_return(env, lambda e: np.array([(good + 1) % 4])) == 0.0


@pytest.mark.parametrize("kwargs", [dict(distance_to_target=0), dict(num_targets=99)])
def test_squared_rejects_bad_config(kwargs):
    with pytest.raises(ValueError):
        Squared(**kwargs)


def test_performance_truncates_and_validates():
    env = Performance(delay_mean=5, delay_std=2, horizon=3)
    env.reset(seed=0)
    assert [env.step(0)[3] for _ in range(3)] == [False, False, True]
    assert env.loops > 0  # iterations per microsecond, calibrated once per process
    with pytest.raises(ValueError, match="microseconds"):
        Performance(delay_mean=-1)


def test_masked_pays_the_target_and_ends_on_an_illegal_action():
    def target(env):
        return np.array([env.env.targets])

    def lure(env):  # the hinted action that is not the target: always illegal
        hint, mask = env.env.obs["hint"], env.env.obs["action_mask"]
        return np.array([[int(np.flatnonzero(hint[:5] * (1 - mask[:5]))[0]), env.env.targets[1]]])

    env = GymnasiumPufferEnv(env=Masked())
    assert mean_return(env, target) == 1.0
    assert mean_return(env, lure) == -1.0
    rng = np.random.default_rng(0)
    assert mean_return(env, lambda e: rng.integers(0, (5, 3), (1, 2))) < 0  # random play breaks the rules
    strict = GymnasiumPufferEnv(env=Masked(illegal="raise"))
    strict.reset(seed=0)
    with pytest.raises(APIUsageError, match="not allowed by the action_mask"):
        strict.step(lure(strict))


def test_masked_draws_a_mask_with_the_target_legal_and_the_lure_not():
    env = Masked()
    obs, _ = env.reset(seed=0)
    single = 0
    for _ in range(500):
        for offset, n, t in zip((0, 5), (5, 3), env.targets, strict=True):
            hint, mask = obs["hint"][offset : offset + n], obs["action_mask"][offset : offset + n]
            assert hint.sum() == 2 and mask[t] == 1 and hint[t] == 1
            assert mask[(hint == 1) & (np.arange(n) != t)].sum() == 0  # the lure is masked
            single += int(mask.sum() == 1)
        obs = env.step(env.targets)[0]
        if env.tick >= env.horizon:
            obs, _ = env.reset()
    assert single > 0  # some steps allow only the target


def test_continuous_rewards_closeness_of_the_clipped_action():
    env = GymnasiumPufferEnv(env=Continuous())
    assert mean_return(env, lambda e: e.env.target.reshape(1, 2)) == 1.0
    zero = mean_return(env, lambda e: np.zeros((1, 2), np.float32), episodes=400)
    assert zero < Continuous.SOLVED and abs(zero - 0.5) < 0.05  # mean |target| is 1/2
    # far outside the box is as good as the box's edge: the emulation clips
    far = mean_return(env, lambda e: np.sign(e.env.target).reshape(1, 2) * 100, episodes=400)
    edge = mean_return(env, lambda e: np.sign(e.env.target).reshape(1, 2), episodes=400)
    assert far == edge
