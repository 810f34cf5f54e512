"""The trainer's peer: textbook single-file PPO (CleanRL's ppo.py algorithm and defaults) on gymnasium 1.x.

    python -m pufferlib.bench.ppo_peer --seed 1 --total-timesteps 60000     # one JSON line

Written here for `python -m pufferlib.bench.trainer`, which sets it beside `puffer train`: separate
64-wide tanh actor and critic, 4 envs x 128 steps in gymnasium's SyncVectorEnv, Adam (lr 2.5e-4,
annealed), GAE (0.99, 0.95), 4 epochs of 4 minibatches, clipped policy and value losses. Gymnasium
1.x resets a finished env on the next step by default; CleanRL's loop expects the reset in the same
step (gymnasium 0.29's behaviour), so the vector env is built with autoreset_mode SAME_STEP.
Only torch, numpy and gymnasium: nothing of pufferlib runs in the timed loop.
"""

from __future__ import annotations

import argparse
import json
import random
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

DEFAULTS = dict(
    env_id="CartPole-v1", num_envs=4, num_steps=128, learning_rate=2.5e-4, anneal_lr=True, gamma=0.99,
    gae_lambda=0.95, num_minibatches=4, update_epochs=4, norm_adv=True, clip_coef=0.2, clip_vloss=True,
    ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5,
)  # fmt: skip


def layer(n_in: int, n_out: int, std: float = 2**0.5) -> nn.Linear:
    linear = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.zeros_(linear.bias)
    return linear


class Agent(nn.Module):
    def __init__(self, n_obs: int, n_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(layer(n_obs, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0))
        self.actor = nn.Sequential(
            layer(n_obs, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, n_actions, 0.01)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def act(self, x: torch.Tensor, action: torch.Tensor | None = None):
        dist = Categorical(logits=self.actor(x))
        action = dist.sample() if action is None else action
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


# one function on purpose: CleanRL's ppo.py loop, read top to bottom (the peer bench/trainer times)
def train(seed: int, total_timesteps: int, window: int = 20, **overrides) -> dict:
    """Train; returns steps, seconds, sps and the curve: after each rollout, (steps, the mean return of
    the last `window` episodes)."""
    c = {**DEFAULTS, **overrides}
    start = time.perf_counter()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.RecordEpisodeStatistics(gym.make(c["env_id"]))] * c["num_envs"],
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )
    n, steps = c["num_envs"], c["num_steps"]
    agent = Agent(int(np.prod(envs.single_observation_space.shape)), int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=c["learning_rate"], eps=1e-5)
    obs = torch.zeros((steps, n, *envs.single_observation_space.shape))
    actions, logprobs, rewards, dones, values = (torch.zeros((steps, n)) for _ in range(5))
    next_obs = torch.Tensor(envs.reset(seed=seed)[0])
    next_done = torch.zeros(n)
    batch = n * steps
    minibatch = batch // c["num_minibatches"]
    iterations = total_timesteps // batch
    global_step, returns_seen, curve = 0, [], []
    for iteration in range(1, iterations + 1):
        if c["anneal_lr"]:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / iterations) * c["learning_rate"]
        for t in range(steps):
            global_step += n
            obs[t], dones[t] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs)
            values[t], actions[t], logprobs[t] = value.flatten(), action, logprob
            ob, reward, terminated, truncated, infos = envs.step(action.numpy())
            rewards[t] = torch.tensor(reward).view(-1)
            next_obs, next_done = torch.Tensor(ob), torch.Tensor(np.logical_or(terminated, truncated))
            final = infos.get("final_info", {})  # same-step autoreset: the finished episodes' infos
            if "episode" in final:
                returns_seen += final["episode"]["r"][final["_episode"]].tolist()
        if returns_seen:
            curve.append((global_step, float(np.mean(returns_seen[-window:]))))

        with torch.no_grad():  # GAE
            next_value = agent.value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            last = 0
            for t in reversed(range(steps)):
                nonterminal = 1.0 - (next_done if t == steps - 1 else dones[t + 1])
                following = next_value if t == steps - 1 else values[t + 1]
                delta = rewards[t] + c["gamma"] * following * nonterminal - values[t]
                advantages[t] = last = delta + c["gamma"] * c["gae_lambda"] * nonterminal * last
            returns = advantages + values

        b_obs = obs.reshape((-1, *envs.single_observation_space.shape))
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_adv, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        order = np.arange(batch)
        for _epoch in range(c["update_epochs"]):
            np.random.shuffle(order)
            for lo in range(0, batch, minibatch):
                mb = order[lo : lo + minibatch]
                _, newlogprob, entropy, newvalue = agent.act(b_obs[mb], b_actions.long()[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_adv[mb]
                if c["norm_adv"]:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                clipped_ratio = torch.clamp(ratio, 1 - c["clip_coef"], 1 + c["clip_coef"])
                pg_loss = torch.max(-adv * ratio, -adv * clipped_ratio).mean()
                newvalue = newvalue.view(-1)
                if c["clip_vloss"]:
                    v_clipped = b_values[mb] + torch.clamp(
                        newvalue - b_values[mb], -c["clip_coef"], c["clip_coef"]
                    )
                    v_loss = (
                        0.5
                        * torch.max((newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2).mean()
                    )
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                loss = pg_loss - c["ent_coef"] * entropy.mean() + c["vf_coef"] * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), c["max_grad_norm"])
                optimizer.step()
    envs.close()
    seconds = time.perf_counter() - start
    return {"steps": global_step, "seconds": seconds, "sps": global_step / seconds, "curve": curve}


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pufferlib.bench.ppo_peer", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--total-timesteps", type=int, default=60_000)
    parser.add_argument("--window", type=int, default=20, help="episodes in each mean return")
    parser.add_argument("--torch-threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    print(json.dumps(train(args.seed, args.total_timesteps, args.window)))


if __name__ == "__main__":
    main()
