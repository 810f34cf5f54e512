"""GymnasiumVectorEnv over Serial and Multiprocessing steps exactly like gymnasium's SyncVectorEnv:
same observations, rewards, flags and `episode` infos, in both autoreset modes."""

import functools

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import pufferlib.vector
from pufferlib import APIUsageError
from pufferlib.compat import GymnasiumVectorEnv, make_vector

CARTPOLE = functools.partial(gymnasium.make, "CartPole-v1")
BACKENDS = ["serial", "multiprocessing"]


def reference(mode: AutoresetMode, num_envs: int = 4) -> SyncVectorEnv:
    """What CleanRL builds: gymnasium's SyncVectorEnv of envs with RecordEpisodeStatistics."""
    thunk = lambda: gymnasium.wrappers.RecordEpisodeStatistics(CARTPOLE())  # noqa: E731
    return SyncVectorEnv([thunk] * num_envs, autoreset_mode=mode)


def rollout(envs, steps: int = 120, seed: int = 7):
    rng = np.random.default_rng(0)
    obs, _ = envs.reset(seed=seed)
    frames, episodes, finals = [obs.ravel().copy()], [], []
    for t in range(steps):
        obs, rewards, terminations, truncations, infos = envs.step(rng.integers(0, 2, envs.num_envs))
        frames.append(np.concatenate([obs.ravel(), rewards, terminations, truncations]))
        where = infos.get("final_info", infos)  # same-step: SyncVectorEnv keeps episodes there
        if "episode" in where:
            for i in np.flatnonzero(where["_episode"]):
                episodes.append((t, int(i), float(where["episode"]["r"][i]), int(where["episode"]["l"][i])))
            if where is not infos and "episode" in infos:  # ours has them at the top as well
                np.testing.assert_array_equal(infos["episode"]["r"], where["episode"]["r"])
        if "final_obs" in infos:
            finals += [(t, int(i), infos["final_obs"][i]) for i in np.flatnonzero(infos["_final_obs"])]
    envs.close()
    return np.concatenate(frames), episodes, finals


def ours(backend: str, mode: AutoresetMode, num_envs: int = 4):
    kwargs = {"num_workers": 2, "overwork": True} if backend == "multiprocessing" else {}
    return make_vector(CARTPOLE, num_envs=num_envs, backend=backend, autoreset_mode=mode, **kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.value)
def test_same_steps_as_sync_vector_env(backend, mode):
    envs = ours(backend, mode)
    assert envs.metadata["autoreset_mode"] is mode
    assert isinstance(envs.single_action_space, gymnasium.spaces.Discrete) and envs.single_action_space.n == 2
    got, got_episodes, got_finals = rollout(envs)
    want, want_episodes, want_finals = rollout(reference(mode))
    np.testing.assert_array_equal(got, want)
    assert got_episodes == want_episodes and len(got_episodes) > 4
    assert [(t, i) for t, i, _ in got_finals] == [(t, i) for t, i, _ in want_finals]
    for (_, _, a), (_, _, b) in zip(got_finals, want_finals, strict=True):
        np.testing.assert_array_equal(a, b)


def test_episode_infos_with_env_infos():
    envs = ours("serial", AutoresetMode.NEXT_STEP)
    envs.reset(seed=1)
    while True:
        *_, infos = envs.step(np.zeros(4, np.int64))
        if "episode" in infos:
            break
    rows = infos["_episode"]
    np.testing.assert_array_equal(infos["episode_return"][rows], infos["episode"]["r"][rows])
    np.testing.assert_array_equal(infos["_episode_return"], rows)
    envs.close()


def test_copy_false_returns_the_shared_buffer():
    vecenv = pufferlib.vector.make(CARTPOLE, backend=pufferlib.vector.Serial, num_envs=2)
    envs = GymnasiumVectorEnv(vecenv, copy=False)
    obs, _ = envs.reset(seed=0)
    assert np.shares_memory(obs, vecenv.buf.observations)
    envs.close()


def test_partial_batches_are_refused():
    vecenv = pufferlib.vector.make(CARTPOLE, backend=pufferlib.vector.Serial, num_envs=4, batch_size=2)
    with pytest.raises(APIUsageError, match="batch_size=num_envs"):
        GymnasiumVectorEnv(vecenv)
    vecenv.close()


def test_seed_lists_must_be_consecutive():
    envs = ours("serial", AutoresetMode.NEXT_STEP, num_envs=2)
    a, _ = envs.reset(seed=[5, 6])
    b, _ = envs.reset(seed=5)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(APIUsageError, match="consecutive"):
        envs.reset(seed=[5, 9])
    envs.close()
