"""The Gaussian head for Box actions: CleanRL's ppo_continuous_action semantics, end to end.

Log-probs and entropies are those of a Normal with a state-independent std, summed over the action's
dimensions; the sample is stored and scored as drawn and only the env sees it clipped into the Box.
"""

import gymnasium
import numpy as np
import torch
from torch.distributions import Normal

import pufferlib.environments as envs
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.frameworks.cleanrl import Policy
from pufferlib.models import Default
from pufferlib.train import config, evaluate, train
from pufferlib.train.ppo.act import greedy
from pufferlib.train.ppo.rollout import Runner, collect
from pufferlib.train.setup import make_policy, make_vecenv


class Recorder(gymnasium.Env):
    """A Box(-1, 1, (2, 3)) action env that remembers the actions it was given."""

    def __init__(self):
        self.observation_space = gymnasium.spaces.Box(-1, 1, (3,), np.float32)
        self.action_space = gymnasium.spaces.Box(-1, 1, (2, 3), np.float32)
        self.received = []

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        self.received.append(np.array(action))
        return self.np_random.uniform(-1, 1, 3).astype(np.float32), 0.0, False, False, {}


def test_log_prob_and_entropy_are_a_normal_summed_over_dimensions():
    torch.manual_seed(0)
    env = GymnasiumPufferEnv(env=Recorder())
    policy = Policy(Default(env, hidden_size=16))
    with torch.no_grad():
        policy.policy.actor.logstd.copy_(torch.tensor([[-1.0, -0.5, 0.0, 0.3, 0.5, 1.0]]))
    obs = torch.randn(64, 3)
    action, log_prob, entropy, _ = policy.get_action_and_value(obs)
    assert action.shape == (64, 2, 3)  # the Box's own shape

    logits, _ = policy.policy(obs)
    mean, std = logits.mean.reshape(64, 6), logits.stddev.reshape(64, 6)
    expected = -((action.reshape(64, 6) - mean) ** 2) / (2 * std**2) - std.log() - 0.5 * np.log(2 * np.pi)
    torch.testing.assert_close(log_prob, expected.sum(-1))
    torch.testing.assert_close(log_prob, Normal(mean, std).log_prob(action.reshape(64, 6)).sum(-1))
    expected_entropy = (0.5 + 0.5 * np.log(2 * np.pi) + policy.policy.actor.logstd).sum()
    torch.testing.assert_close(entropy, expected_entropy.expand(64))

    # state-independent std: every observation gets the same one; the mean depends on the observation
    assert torch.equal(std, std[:1].expand(64, 6))
    assert not torch.allclose(mean[0], mean[1])
    # evaluating a given action gives the same numbers (what the PPO update does)
    _, again, again_entropy, _ = policy.get_action_and_value(obs, action)
    torch.testing.assert_close(again, log_prob)
    torch.testing.assert_close(again_entropy, entropy)
    assert torch.equal(greedy(logits, None), logits.mean)


def test_the_sample_is_stored_unclipped_and_the_env_gets_it_clipped():
    binding = envs.get("ocean/continuous")
    cfg = config.load(binding.name, {"vec.num_envs": 4, "train.num_steps": 16})
    torch.manual_seed(0)
    vecenv = make_vecenv(binding, cfg)
    policy = make_policy(binding, vecenv.driver_env, cfg)
    with torch.no_grad():
        policy.policy.actor.logstd.fill_(1.0)  # std e: most samples fall outside [-1, 1]
    sent = []
    send = vecenv.send
    vecenv.send = lambda actions: (sent.append(np.array(actions)), send(actions))[1]
    try:
        run = Runner.create(vecenv, policy, cfg, "cpu")
        vecenv.async_reset(0)
        collect(run)
    finally:
        vecenv.close()
    exp = run.exp
    assert (exp.actions.abs() > 1).any(), "the test needs samples outside the Box"
    # stored = what the actor sent (unclipped), and the stored log-probs are those of these samples
    torch.testing.assert_close(exp.actions, torch.from_numpy(np.stack(sent[:16], axis=1)))
    with torch.no_grad():
        _, log_prob, _, _ = policy.get_action_and_value(exp.obs.reshape(-1, 2), exp.actions.reshape(-1, 2))
    torch.testing.assert_close(log_prob.reshape(exp.logprobs.shape), exp.logprobs)

    # the env itself is given the action clipped into its Box
    env = GymnasiumPufferEnv(env=Recorder())
    env.reset(seed=0)
    wild = np.array([[[5.0, -5.0, 0.5], [1.5, -0.25, -1.0001]]], np.float32)
    env.step(wild)
    np.testing.assert_array_equal(env.env.received[0], np.clip(wild[0], -1, 1))


def test_continuous_ocean_solves_and_its_checkpoint_replays(tmp_path):
    """Gaussian head, log-std learning and clipping together: the mean must find the target and
    the std shrink from 1 to about 0.1 (~20k steps with its config; budget about 3x)."""
    summary = train("ocean/continuous", {"train.total_timesteps": 60_000}, checkpoint_dir=tmp_path)
    assert summary["solved"] and summary["stop_reason"] == "solved", summary
    result = evaluate("ocean/continuous", summary["checkpoint"], episodes=200, deterministic=True)
    assert result["solved"], result  # the mean alone: better than the samples
