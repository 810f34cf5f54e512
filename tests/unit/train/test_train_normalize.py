"""Observation normalisation and reward scaling (train/normalize.py): SB3 VecNormalize semantics on
real vector envs, saved in the checkpoint and used, frozen, by evaluation."""

import numpy as np
import pytest
import torch

import pufferlib.environments as envs
from pufferlib.train import config, evaluate, train
from pufferlib.train.config import ConfigError
from pufferlib.train.ppo.normalize import RunningMeanStd, VecNormalize
from pufferlib.train.run import checkpoint
from pufferlib.train.setup import make_vecenv


def test_running_mean_std_matches_numpy_over_batches():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, (n, 4)) for n in (1, 7, 50, 3)]
    rms = RunningMeanStd((4,), epsilon=1e-12)
    for batch in batches:
        rms.update(batch)
    everything = np.concatenate(batches)
    np.testing.assert_allclose(rms.mean, everything.mean(0), rtol=1e-9)
    np.testing.assert_allclose(rms.var, everything.var(0), rtol=1e-9)
    assert rms.count == pytest.approx(len(everything))
    rms.update(np.zeros((0, 4)))  # an empty batch (every row padding) changes nothing
    assert rms.count == pytest.approx(len(everything))


def _vecenv(name: str, overrides: dict):
    return make_vecenv(envs.get(name), config.load(name, overrides))


def test_observations_are_normalised_with_the_running_statistics_and_clipped():
    vecenv = _vecenv("classic_control/Pendulum-v1", {"vec.num_envs": 4, "normalize.obs": True})
    assert isinstance(vecenv, VecNormalize)
    inner, raw = vecenv.vecenv, []
    recv = inner.recv
    inner.recv = lambda: (lambda out: (raw.append(np.array(out[0])), out)[1])(recv())
    rng = np.random.default_rng(0)
    try:
        vecenv.async_reset(0)
        for _ in range(300):
            obs = vecenv.recv()[0]
            seen = np.concatenate(raw)
            mean, var = seen.mean(0), seen.var(0)
            expected = np.clip((raw[-1] - mean) / np.sqrt(var + 1e-8), -10, 10)
            np.testing.assert_allclose(obs, expected, rtol=1e-3, atol=1e-3)
            vecenv.send(rng.uniform(-2, 2, (4, 1)).astype(np.float32))
        assert obs.dtype == np.float32
        # frozen (evaluation): the statistics stay, observations are still normalised with them
        vecenv.training = False
        before = vecenv.state_dict()
        obs = vecenv.recv()[0]
        np.testing.assert_allclose(obs, np.clip((raw[-1] - mean) / np.sqrt(var + 1e-8), -10, 10), rtol=1e-3)
        assert before["obs_count"] == vecenv.state_dict()["obs_count"]
    finally:
        vecenv.close()
    # clipping: a far-off observation is clipped to +-clip_obs
    far = vecenv.normalize_obs(np.full((1, 3), 1e6))
    assert (far == 10).all()


def test_rewards_are_scaled_by_the_std_of_the_discounted_return_of_real_transitions():
    """ocean/multiagent rewards 1/4 per step for the right action. agent_0 plays 4 steps, agent_1
    leaves after 2 (then padding), and each episode ends with a reset step (reward 0): the return
    statistics must be those of the discounted returns 1/4, 1/4 (1+g), ... of real steps only."""
    gamma = 0.9
    vecenv = _vecenv(
        "ocean/multiagent",
        {"vec.num_envs": 2, "normalize.reward": True, "train.gamma": gamma, "env.leave_after": 2},
    )
    right = np.array([0, 1, 0, 1])  # agent_0, agent_1 of each env
    scaled = []
    try:
        vecenv.async_reset(0)
        for _ in range(
            1 + 5 * 10 - 1
        ):  # the reset, then 10 episodes of 4 steps (+ a reset step but the last)
            _, rewards, _, _, _, _, masks = vecenv.recv()
            scaled.append((np.array(rewards), np.array(masks)))
            vecenv.send(right)
    finally:
        vecenv.close()
    discounted = 0.25 * np.cumsum(gamma ** np.arange(4))  # 1/4, 1/4 (1+g), 1/4 (1+g+g^2), ...
    agent_0, agent_1 = discounted, discounted[:2]
    expected = np.concatenate([np.tile(agent_0, 2 * 10), np.tile(agent_1, 2 * 10)])
    rms = vecenv.ret_rms
    assert rms.count == pytest.approx(len(expected), abs=1e-3)
    # (to within the statistics' starting point: a count of 1e-4 at mean 0, variance 1)
    np.testing.assert_allclose(rms.mean, expected.mean(), rtol=1e-4)
    np.testing.assert_allclose(rms.var, expected.var(), rtol=1e-4)
    rewards, masks = scaled[-1]  # the last step of the last episode: every present row earned 1/4
    np.testing.assert_allclose(rewards[masks], 0.25 / np.sqrt(rms.var + 1e-8), rtol=1e-5)
    assert np.abs(np.concatenate([r for r, _ in scaled])).max() <= 10.0


def test_structured_observations_cannot_be_normalised():
    with pytest.raises(ConfigError, match=r"normalize\.obs needs plain numeric observations.*Dict"):
        _vecenv("ocean/spaces", {"normalize.obs": True})


def test_statistics_round_trip_through_the_checkpoint_and_evaluation_uses_them(tmp_path):
    overrides = {"normalize.obs": True, "normalize.reward": True, "train.total_timesteps": 80_000}
    summary = train("ocean/continuous", overrides, checkpoint_dir=tmp_path)
    assert summary["solved"], summary
    payload = checkpoint.load(summary["checkpoint"])
    stats = payload["normalize"]
    assert stats["obs_count"] == pytest.approx(summary["steps"], rel=0.05)  # every observation seen
    # targets are uniform in [-1, 1]: mean 0, variance 1/3
    np.testing.assert_allclose(stats["obs_mean"].numpy(), 0.0, atol=0.03)
    np.testing.assert_allclose(stats["obs_var"].numpy(), 1 / 3, rtol=0.05)

    vecenv = _vecenv("ocean/continuous", {"normalize.obs": True, "normalize.reward": True})
    try:
        vecenv.load_state_dict(stats)
        for key, value in vecenv.state_dict().items():
            torch.testing.assert_close(torch.as_tensor(value), torch.as_tensor(stats[key]))
    finally:
        vecenv.close()

    good = evaluate("ocean/continuous", summary["checkpoint"], episodes=100, deterministic=True)
    assert good["solved"], good
    # the same weights with other statistics play worse: evaluation normalises with the saved ones
    payload["normalize"]["obs_mean"] = stats["obs_mean"] + 0.5
    shifted = tmp_path / "shifted.pt"
    torch.save(payload, shifted)
    bad = evaluate("ocean/continuous", shifted, episodes=100, deterministic=True)
    assert bad["mean_return"] < good["mean_return"] - 0.1, (good, bad)
    del payload["normalize"]
    torch.save(payload, shifted)
    with pytest.raises(ConfigError, match="holds no obs normalisation statistics"):
        evaluate("ocean/continuous", shifted, episodes=10)
