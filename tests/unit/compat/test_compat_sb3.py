"""stable-baselines3's PPO learns CartPole on our Multiprocessing through SB3VecEnv."""

import functools

import gymnasium
import numpy as np
import pytest
from _strict import skip_or_fail

import pufferlib.environments as environments
from pufferlib import APIUsageError
from pufferlib.compat import make_vector, to_gymnasium

try:
    import stable_baselines3 as sb3
except ImportError:
    skip_or_fail("stable-baselines3 is not installed: pip install 'pufferlib[dev]'")
from stable_baselines3.common.evaluation import evaluate_policy

from pufferlib.compat.sb3 import SB3VecEnv

CARTPOLE = functools.partial(gymnasium.make, "CartPole-v1")


@pytest.fixture(autouse=True)
def sb3_logdir(tmp_path, monkeypatch):
    """SB3's learn() makes a log folder (SB3-<time>) in the system temp dir unless SB3_LOGDIR says
    where: the test's own, so no run leaves one behind."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))


@pytest.fixture
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small MLP: more threads only fight the env workers for the cores
    yield
    torch.set_num_threads(threads)


# RL Zoo's CartPole-v1 settings for PPO.
ZOO = dict(
    n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0, learning_rate=1e-3
)


@pytest.mark.slow
def test_same_episodes_as_dummy_vec_env(one_thread):
    """Seeded alike, SB3's PPO sees exactly the episodes it sees on its own DummyVecEnv."""
    from stable_baselines3.common.env_util import make_vec_env

    def episodes(venv):
        model = sb3.PPO("MlpPolicy", venv, seed=0, device="cpu", **ZOO)
        model.learn(total_timesteps=2_560)
        venv.close()
        return [(ep["r"], ep["l"]) for ep in model.ep_info_buffer]

    theirs = episodes(make_vec_env("CartPole-v1", n_envs=8, seed=0))
    ours = episodes(
        SB3VecEnv(
            make_vector(
                CARTPOLE,
                num_envs=8,
                backend="multiprocessing",
                num_workers=2,
                overwork=True,
                autoreset_mode="SameStep",
            )
        )
    )
    assert len(theirs) > 50 and ours == theirs


@pytest.mark.slow
def test_ppo_learns_cartpole(one_thread):  # 20-40 s on 2 shared cores (load 2-7)
    venv = SB3VecEnv(
        make_vector(
            CARTPOLE,
            num_envs=8,
            backend="multiprocessing",
            num_workers=2,
            overwork=True,
            autoreset_mode="SameStep",
        )
    )
    model = sb3.PPO("MlpPolicy", venv, seed=0, device="cpu", **ZOO)
    model.learn(total_timesteps=25_000)
    trained = np.mean([ep["r"] for ep in model.ep_info_buffer])
    venv.close()
    assert trained > 150, f"mean training return {trained}"
    evaluation = to_gymnasium(environments.make("classic_control/CartPole-v1"))
    mean, _ = evaluate_policy(model, evaluation, n_eval_episodes=5, warn=False)
    assert mean > 150, f"mean evaluation return {mean}"


def test_terminal_observation_and_episode_reach_sb3():
    venv = SB3VecEnv(make_vector(CARTPOLE, num_envs=2, autoreset_mode="SameStep"))
    venv.seed(3)
    venv.reset()
    for _ in range(500):
        obs, _, dones, infos = venv.step(np.zeros(2, np.int64))  # always left: short episodes
        if dones.any():
            break
    i = int(np.flatnonzero(dones)[0])
    assert infos[i]["terminal_observation"].shape == (4,)
    assert not np.array_equal(infos[i]["terminal_observation"], obs[i])  # obs is the next episode's first
    assert infos[i]["episode"]["l"] == infos[i]["episode"]["r"] > 0
    assert infos[i]["TimeLimit.truncated"] is False
    venv.close()


def test_next_step_vector_env_is_refused():
    envs = make_vector(CARTPOLE, num_envs=2)
    with pytest.raises(APIUsageError, match="autoreset_mode='SameStep'"):
        SB3VecEnv(envs)
    envs.close()
