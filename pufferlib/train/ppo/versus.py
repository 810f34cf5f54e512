"""Win rate against a uniformly random opponent: how a self-play policy is judged.

In self-play every seat of a zero-sum game is played by the same policy, so the mean episode
return is about zero however strong the policy is. With `train.solve_metric = "win_rate"` a run
is instead solved when the policy, playing one seat, beats an opponent that picks uniformly among
its legal actions (the observation's `action_mask`; any action where there is none) in at least
`train.solve_score` of `train.solve_window` games, the policy's seat alternating game by game.

A game is won when the policy's return is strictly the highest of all seats, drawn when it ties
for the highest. Games are played on envs of their own (Serial, never the training envs), with the
act step of training (act.Actor: masks, LSTM state). The trainer's judge plays greedily (the
policy's most likely move, as game-playing agents are evaluated); `play` can also sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

import pufferlib.environments as envs
from pufferlib.spaces import sample_allowed_action
from pufferlib.train.config import Config, ConfigError
from pufferlib.train.ppo.act import Actor
from pufferlib.train.scale import distributed

PARALLEL = 32  # games played at once (one env each)


class Arena:
    """Envs of their own (Serial, `min(games, PARALLEL)` of them) where a policy plays the random
    opponent; kept between evaluations, closed by `close()`."""

    def __init__(self, binding: envs.Binding, cfg: Config, games: int, normalizer: Any = None) -> None:
        import pufferlib.vector

        self.binding, self.normalizer = binding, normalizer
        self.vecenv = pufferlib.vector.make(
            binding.env_creator(),
            env_kwargs=dict(cfg["env"]),
            backend="serial",
            num_envs=min(games, PARALLEL),
            seed=cfg["train"]["seed"],
        )
        try:
            self.seats = int(self.vecenv.driver_env.num_agents)
            if self.seats < 2:
                raise ConfigError(
                    f"train.solve_metric win_rate needs a game with 2 or more seats; {binding.name} has "
                    f"{self.seats} agent per env (use solve_metric return)"
                )
            self.space = self.vecenv.single_action_space
            if not isinstance(self.space, spaces.Discrete | spaces.MultiDiscrete):
                raise ConfigError(
                    f"train.solve_metric win_rate plays a random opponent over Discrete or MultiDiscrete "
                    f"actions; {binding.name} has {self.space}"
                )
            if normalizer is not None:  # observations as the policy sees them in training (frozen)
                from pufferlib.train.ppo.normalize import VecNormalize

                self.vecenv = VecNormalize(self.vecenv, obs=normalizer.obs_rms is not None, reward=False)
                self.vecenv.training = False
        except Exception:
            self.vecenv.close()
            raise

    def play(
        self, policy: nn.Module, device: str, games: int, seed: int, greedy: bool = False
    ) -> dict[str, float]:
        """Win, draw and loss rates of `policy` over `games` games; every game that is started is
        finished and counted (games are assigned before they are played, so quick games are not
        over-represented)."""
        if self.normalizer is not None:
            self.vecenv.load_state_dict(self.normalizer.state_dict())
        vecenv, seats, space = self.vecenv, self.seats, self.space
        actor = Actor(vecenv, policy, device, greedy)
        rng = np.random.default_rng(seed)
        num_envs = vecenv.num_agents // seats
        ours = np.arange(num_envs) % seats  # the policy's seat in each env's current game
        started = min(num_envs, games)
        active = np.arange(num_envs) < games  # the env plays a game that counts
        returns = np.zeros(vecenv.num_agents)
        ended = np.zeros(vecenv.num_agents, dtype=bool)  # the row's episode ended in the current game
        wins = draws = finished = 0
        vecenv.async_reset(seed)
        while finished < games:
            obs, rewards, terminals, truncations, _, env_ids, masks = vecenv.recv()
            ids = np.asarray(env_ids, dtype=np.int64)
            returns[ids] += np.asarray(rewards, dtype=np.float64)
            ended[ids] |= np.asarray(terminals, dtype=bool) | np.asarray(truncations, dtype=bool)
            batch_envs = np.unique(ids // seats)
            for env in batch_envs[ended.reshape(num_envs, seats)[batch_envs].all(1)]:  # games just over
                rows = slice(env * seats, (env + 1) * seats)
                if active[env]:
                    game = returns[rows]
                    best = game.max()
                    if game[ours[env]] == best:
                        wins += int((game == best).sum() == 1)
                        draws += int((game == best).sum() > 1)
                    finished += 1
                returns[rows], ended[rows] = 0.0, False
                active[env] = started < games
                ours[env] = started % seats
                started += int(active[env])
            step = actor(obs, terminals, truncations, ids, np.array(masks, dtype=bool))
            actions = step.action.cpu().numpy().copy()
            opponent = ids % seats != ours[ids // seats]
            if opponent.any():
                mask = policy.action_mask(step.obs)
                mask = np.ones((len(ids), _width(space)), np.int8) if mask is None else mask.cpu().numpy()
                actions[opponent] = sample_allowed_action(space, mask[opponent], rng)
            vecenv.send(actions)
        return {"win": wins / games, "draw": draws / games, "loss": (games - wins - draws) / games}

    def close(self) -> None:
        self.vecenv.close()


def play(
    binding: envs.Binding,
    cfg: Config,
    policy: nn.Module,
    device: str,
    games: int,
    seed: int,
    greedy: bool = False,
) -> dict[str, float]:
    """Win, draw and loss rates of `policy` against the random opponent over `games` games."""
    arena = Arena(binding, cfg, games)
    try:
        return arena.play(policy, device, games, seed, greedy)
    finally:
        arena.close()


def _width(space: spaces.Space) -> int:
    return int(space.n) if isinstance(space, spaces.Discrete) else int(space.nvec.sum())


class WinRate:
    """The solve metric `win_rate`: called after a rollout with the step count, returns the policy's
    win rate against the random opponent (greedy play; the same value until it trains on more steps).

    It plays half of `train.solve_window` games, and only when those reach the solved score the
    other half too, returning the rate over all of them: a run is solved on `solve_window` games,
    while most evaluations cost half as much. `close()` closes its arena.
    """

    def __init__(
        self, binding: envs.Binding, cfg: Config, policy: nn.Module, device: str, vecenv, solved: float | None
    ) -> None:
        from pufferlib.train.ppo.normalize import VecNormalize

        self.policy, self.device, self.solved = policy, device, solved
        self.games, self.seed = cfg["train"]["solve_window"], cfg["train"]["seed"]
        self.first = max(1, self.games // 2)
        normalizer = vecenv if isinstance(vecenv, VecNormalize) else None
        self.arena = Arena(binding, cfg, self.first, normalizer)
        self.evaluations = 0
        self.last: tuple[int, float] | None = None  # (steps, win rate)

    def __call__(self, steps: int) -> float:
        if self.last is None or self.last[0] != steps:  # once per update: under torchrun every rank
            self.last = (steps, distributed.agreed_mean(self._evaluate()))  # judges, all stop on the mean
        return self.last[1]

    def _play(self, games: int) -> float:
        self.evaluations += 1
        with torch.no_grad():
            result = self.arena.play(
                self.policy, self.device, games, self.seed * 100_003 + self.evaluations, True
            )
        return result["win"]

    def _evaluate(self) -> float:
        win = self._play(self.first)
        rest = self.games - self.first
        if rest and self.solved is not None and win >= self.solved:
            win = (win * self.first + self._play(rest) * rest) / self.games
        return win

    def close(self) -> None:
        self.arena.close()


def judge(
    binding: envs.Binding, cfg: Config, policy: nn.Module, device: str, vecenv, solved: float | None
) -> WinRate | None:
    """The score function the config's train.solve_metric names (None: the mean episode return)."""
    if cfg["train"]["solve_metric"] == "win_rate":
        return WinRate(binding, cfg, policy, device, vecenv, solved)
    return None
