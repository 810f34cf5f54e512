"""A CleanRL-style PPO (the ppo.py loop, written against gymnasium's vector API) gets the same
episode returns on CartPole through GymnasiumVectorEnv over our Multiprocessing as through
gymnasium's SyncVectorEnv with the same seeds: the adapter is a drop-in replacement."""

import functools

import gymnasium
import numpy as np
import pytest
import torch
from torch import nn
from torch.distributions import Categorical

from pufferlib.compat import make_vector

pytestmark = pytest.mark.slow  # two short trainings, ~10 s


def layer(n_in: int, n_out: int, std: float = 2**0.5) -> nn.Linear:
    linear = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    def __init__(self, envs):
        super().__init__()
        size = int(np.prod(envs.single_observation_space.shape))
        self.critic = nn.Sequential(layer(size, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0))
        self.actor = nn.Sequential(
            layer(size, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, envs.single_action_space.n, 0.01)
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


def ppo(
    envs, seed: int = 1, iterations: int = 6, num_steps: int = 128, epochs: int = 4, minibatches: int = 4
):
    """CleanRL's ppo.py main loop (its defaults for CartPole), returning (global_step, return) pairs."""
    assert isinstance(envs.single_action_space, gymnasium.spaces.Discrete)
    np.random.seed(seed)
    torch.manual_seed(seed)
    n = envs.num_envs
    agent = Agent(envs)
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    obs = torch.zeros((num_steps, n, *envs.single_observation_space.shape))
    actions = torch.zeros((num_steps, n, *envs.single_action_space.shape))
    logprobs, rewards, dones, values = (torch.zeros((num_steps, n)) for _ in range(4))
    next_obs, _ = envs.reset(seed=seed)
    next_obs, next_done = torch.Tensor(next_obs), torch.zeros(n)
    batch = num_steps * n
    seen, global_step = [], 0
    for _ in range(iterations):
        for step in range(num_steps):
            global_step += n
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step], actions[step], logprobs[step] = value.flatten(), action, logprob
            next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
            rewards[step] = torch.tensor(reward).view(-1)
            next_obs = torch.Tensor(next_obs)
            next_done = torch.Tensor(np.logical_or(terminations, truncations).astype(np.float32))
            if "episode" in infos:
                seen += [
                    (global_step, float(infos["episode"]["r"][i])) for i in np.flatnonzero(infos["_episode"])
                ]
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages, lastgaelam = torch.zeros_like(rewards), 0
            for t in reversed(range(num_steps)):
                nonterminal = 1.0 - (next_done if t == num_steps - 1 else dones[t + 1])
                nextvalues = next_value if t == num_steps - 1 else values[t + 1]
                delta = rewards[t] + 0.99 * nextvalues * nonterminal - values[t]
                advantages[t] = lastgaelam = delta + 0.99 * 0.95 * nonterminal * lastgaelam
            returns = advantages + values
        b_obs = obs.reshape((-1, *envs.single_observation_space.shape))
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        indices = np.arange(batch)
        for _ in range(epochs):
            np.random.shuffle(indices)
            for start in range(0, batch, batch // minibatches):
                mb = indices[start : start + batch // minibatches]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_actions.long()[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 0.8, 1.2)).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb]) ** 2).mean()
                loss = pg_loss - 0.01 * entropy.mean() + v_loss * 0.5
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
    envs.close()
    return seen


def cleanrl_env():
    return gymnasium.wrappers.RecordEpisodeStatistics(gymnasium.make("CartPole-v1"))


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_same_returns_as_sync_vector_env(one_thread):
    theirs = ppo(gymnasium.vector.SyncVectorEnv([cleanrl_env] * 4))
    envs = make_vector(
        functools.partial(gymnasium.make, "CartPole-v1"),
        num_envs=4,
        backend="multiprocessing",
        num_workers=2,
        overwork=True,
    )
    ours = ppo(envs)
    assert len(theirs) > 50
    assert ours == theirs
    early, late = np.mean([r for _, r in theirs[:20]]), np.mean([r for _, r in theirs[-20:]])
    assert late > early  # it is learning, so the comparison covers changing policies
