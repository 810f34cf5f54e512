"""The per-step fast paths of emulation and Serial give exactly what the plain numpy writes give.

GymnasiumPufferEnv writes a step's outcome through memoryviews, and vector backends hand one-agent
Discrete envs their checked actions as ints. These tests step envs whose outputs change
kind from step to step (float32, float64, lists, strided arrays, numpy and Python scalars, a reward
past float32's range, one given as a string) and compare every buffer with what numpy's casting
makes of the same values.
"""

import gymnasium
import numpy as np
import pytest

import pufferlib.vector
from pufferlib import APIUsageError
from pufferlib.emulation import GymnasiumPufferEnv

pytestmark = pytest.mark.filterwarnings("ignore:Shifty. observation is float64:UserWarning")

BOX = gymnasium.spaces.Box(-np.inf, np.inf, (3,), np.float32)


def outputs(t: int, a: int):
    """Step t's (observation, reward, terminated, truncated), of a kind that changes with t."""
    base = np.array([t, a, -t], np.float64)
    obs = [
        base.astype(np.float32),  # the declared dtype: copied through a memoryview
        base,  # float64: numpy casts
        base.tolist(),  # a list
        np.repeat(base.astype(np.float32), 2)[::2],  # strided float32
        base.astype(np.float32),  # float32 again after all of that
    ][t % 5]
    reward = [1.5, np.float32(-2.25), 3, True, 1e39, np.float64(0.1), "0.5"][t % 7]
    terminated = [False, np.bool_(False), 0][t % 3]
    return obs, reward, terminated, t % 7 == 6


class Shifty(gymnasium.Env):
    """Discrete(4, start=3); returns outputs(t, action) and records the actions it was given."""

    observation_space = BOX
    action_space = gymnasium.spaces.Discrete(4, start=3)

    def reset(self, seed=None, options=None):
        self.t, self.seen = 0, []
        return np.zeros(3, np.float32), {}

    def step(self, action):
        self.seen.append(action)
        self.t += 1
        return (*outputs(self.t, action), {})


def expected(t: int, a: int) -> tuple[list, float, bool, bool]:
    obs, reward, terminated, truncated = outputs(t, a)
    buf = np.zeros((1, 3), np.float32), np.zeros(1, np.float32), np.zeros(1, bool), np.zeros(1, bool)
    with np.errstate(over="ignore"):
        buf[0][0], buf[1][0], buf[2][0], buf[3][0] = obs, reward, terminated, truncated
    return buf[0][0].tolist(), float(buf[1][0]), bool(buf[2][0]), bool(buf[3][0])


def test_step_writes_what_numpy_casting_writes():
    env = GymnasiumPufferEnv(env=Shifty())
    env.reset()
    for t in range(1, 40):
        if env.done:
            env.reset()
            continue
        a = t % 4
        obs, rewards, terminals, truncations, _ = env.step(np.array([a]))
        got = obs[0].tolist(), float(rewards[0]), bool(terminals[0]), bool(truncations[0])
        assert got == expected(env.env.t, a + 3), f"step {t}"
    assert all(type(a) is int for a in env.env.seen)  # the env gets Python ints, start added


def test_serial_fast_path_matches_stepping_each_env():
    """Serial (ints from the batch check, no per-env check) against the same envs stepped by hand."""
    n = 3
    vecenv = pufferlib.vector.make(
        lambda buf=None, seed=0: GymnasiumPufferEnv(env=Shifty(), buf=buf), num_envs=n, backend="serial"
    )
    assert vecenv.envs.discrete is not None  # the fast path is the one under test
    hand = [GymnasiumPufferEnv(env=Shifty()) for _ in range(n)]
    vecenv.reset()
    for env in hand:
        env.reset()
    rng = np.random.default_rng(0)
    for t in range(60):
        actions = rng.integers(0, 4, size=n)
        obs, rewards, terminals, truncations, infos = vecenv.step(
            actions.astype([np.int64, np.int32, np.uint8][t % 3])
        )
        want_infos = []
        for i, env in enumerate(hand):
            if env.done:
                env.reset()
            else:
                want_infos += env.step(actions[i : i + 1])[4]
            assert obs[i].tolist() == env.observations[0].tolist()
            assert (rewards[i], terminals[i], truncations[i]) == (
                env.rewards[0],
                env.terminals[0],
                env.truncations[0],
            )
        assert infos == want_infos
    assert [e.env.seen for e in vecenv.envs.envs] == [e.env.seen for e in hand]
    vecenv.close()


class Doubling(GymnasiumPufferEnv):
    """Overrides step(): the backends must call it, not the fast path."""

    def step(self, action):
        out = super().step(action)
        self.rewards[0] *= 2
        return out


def test_an_overridden_step_is_called():
    creator = lambda buf=None, seed=0: Doubling(env=Shifty(), buf=buf)  # noqa: E731
    with pufferlib.vector.make(creator, num_envs=2, backend="serial") as vecenv:
        assert vecenv.envs.discrete is None
        vecenv.reset()
        _, rewards, *_ = vecenv.step(np.array([0, 1]))
        assert rewards.tolist() == [-4.5, -4.5]  # step 1's reward -2.25, doubled


@pytest.mark.parametrize("backend", ["serial", "multiprocessing"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_the_batch_check_refuses_what_the_envs_no_longer_check(backend, dtype):
    """The envs trust the batch: an out-of-range action of any dtype, the buffer's int32 included,
    must be refused by the vector env, naming the value."""
    with pufferlib.vector.make(
        lambda buf=None, seed=0: GymnasiumPufferEnv(env=Shifty(), buf=buf),
        num_envs=2,
        backend=backend,
        num_workers=1,
    ) as vecenv:
        vecenv.reset()
        for bad in (4, -1):
            with pytest.raises(APIUsageError, match=rf"action {bad}(\.0)? out of range for Discrete\(4\)"):
                vecenv.send(np.array([0, bad], dtype))
        with pytest.raises(APIUsageError, match="must be integers"):
            vecenv.send(np.array([0, 1.5]))
        vecenv.send(np.array([3, 0], dtype))  # still usable
        vecenv.recv()


class Branches(gymnasium.Env):
    """A Dict action of two Discrete branches of different sizes: MultiDiscrete([2, 5]) when flat."""

    observation_space = BOX
    action_space = gymnasium.spaces.Dict(
        {"a": gymnasium.spaces.Discrete(2), "b": gymnasium.spaces.Discrete(5)}
    )

    def reset(self, seed=None, options=None):
        return np.zeros(3, np.float32), {}

    def step(self, action):
        return np.zeros(3, np.float32), 0.0, False, False, {}


def test_each_multidiscrete_branch_is_checked_against_its_own_size():
    with pufferlib.vector.make(
        lambda buf=None, seed=0: GymnasiumPufferEnv(env=Branches(), buf=buf), num_envs=2, backend="serial"
    ) as vecenv:
        vecenv.reset()
        vecenv.step(np.array([[1, 4], [0, 0]]))
        with pytest.raises(
            APIUsageError, match=r"action 3 out of range .*entry 0 must be an integer in \[0, 1\]"
        ):
            vecenv.send(np.array([[1, 4], [3, 0]]))
