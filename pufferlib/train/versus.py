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
from pufferlib.train.act import Actor
from pufferlib.train.config import Config, ConfigError

PARALLEL = 32  # games played at once (one env each)


def random_actions(space: spaces.Space, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random allowed action per row of `mask` ((rows, actions), 0/1): (rows,) for
    Discrete, (rows, branches) for MultiDiscrete (the mask's branches concatenated)."""
    sizes = [int(space.n)] if isinstance(space, spaces.Discrete) else [int(n) for n in space.nvec.reshape(-1)]
    picks = []
    for part in np.split(np.asarray(mask, dtype=np.float64), np.cumsum(sizes)[:-1], axis=1):
        noise = rng.random(part.shape) * (part > 0)  # a random key per allowed action, 0 elsewhere
        picks.append(noise.argmax(axis=1))
    actions = np.stack(picks, axis=1)
    return actions[:, 0] if isinstance(space, spaces.Discrete) else actions


def play(
    binding: envs.Binding,
    cfg: Config,
    agent: nn.Module,
    device: str,
    games: int,
    seed: int,
    greedy: bool = False,
    normalizer: Any = None,
) -> dict[str, float]:
    """Win, draw and loss rates of `agent` against the random opponent over `games` games.

    Every game that is started is finished and counted (games are assigned before they are played,
    so quick games are not over-represented). `normalizer`: the training VecNormalize, whose
    statistics (frozen) the agent's observations go through, as in training.
    """
    import pufferlib.vector

    vecenv = pufferlib.vector.make(
        binding.env_creator(),
        env_kwargs=dict(cfg["env"]),
        backend="serial",
        num_envs=min(games, PARALLEL),
        seed=seed,
    )
    try:
        seats = int(vecenv.driver_env.num_agents)
        if seats < 2:
            raise ConfigError(
                f"train.solve_metric win_rate needs a game with 2 or more seats; {binding.name} has {seats} "
                "agent per env (use solve_metric return)"
            )
        space = vecenv.single_action_space
        if not isinstance(space, spaces.Discrete | spaces.MultiDiscrete):
            raise ConfigError(
                f"train.solve_metric win_rate plays a random opponent over Discrete or MultiDiscrete "
                f"actions; {binding.name} has {space}"
            )
        if normalizer is not None:
            from pufferlib.train.normalize import VecNormalize

            frozen = VecNormalize(vecenv, obs=normalizer.obs_rms is not None, reward=False)
            frozen.load_state_dict(normalizer.state_dict())
            frozen.training = False
            vecenv = frozen
        return _play(vecenv, Actor(vecenv, agent, device, greedy), agent, seats, games, seed)
    finally:
        vecenv.close()


def _play(vecenv, actor: Actor, agent: nn.Module, seats: int, games: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    space = vecenv.single_action_space
    num_envs = vecenv.num_agents // seats
    learner = np.arange(num_envs) % seats  # the policy's seat in each env's current game
    started = num_envs
    active = np.ones(num_envs, dtype=bool)  # env is playing a game that counts
    returns = np.zeros(vecenv.num_agents)
    ended = np.zeros(vecenv.num_agents, dtype=bool)  # row's episode ended in the current game
    wins = draws = finished = 0
    vecenv.async_reset(seed)
    while finished < games:
        obs, rewards, terminals, truncations, _, env_ids, masks = vecenv.recv()
        ids = np.asarray(env_ids, dtype=np.int64)
        masks = np.array(masks, dtype=bool)
        returns[ids] += np.asarray(rewards, dtype=np.float64)
        ended[ids] |= np.asarray(terminals, dtype=bool) | np.asarray(truncations, dtype=bool)
        for env in np.unique(ids // seats):
            rows = slice(env * seats, (env + 1) * seats)
            if not ended[rows].all():
                continue
            if active[env]:
                game = returns[rows]
                mine, best = game[learner[env]], game.max()
                if mine == best:
                    wins += int((game == best).sum() == 1)
                    draws += int((game == best).sum() > 1)
                finished += 1
            returns[rows], ended[rows] = 0.0, False
            active[env] = started < games
            learner[env] = started % seats
            started += int(active[env])
        step = actor(obs, terminals, truncations, ids, masks)
        actions = step.action.cpu().numpy().copy()
        mask = agent.action_mask(step.obs)
        mask = np.ones((len(ids), _width(space)), np.int8) if mask is None else mask.cpu().numpy()
        opponent = ids % seats != learner[ids // seats]
        if opponent.any():
            actions[opponent] = random_actions(space, mask[opponent], rng)
        vecenv.send(actions)
    return {"win": wins / games, "draw": draws / games, "loss": (games - wins - draws) / games}


def _width(space: spaces.Space) -> int:
    return int(space.n) if isinstance(space, spaces.Discrete) else int(space.nvec.sum())


class WinRate:
    """The solve metric `win_rate`: called after a rollout, plays `train.solve_window` games
    greedily against the random opponent and returns the win rate (the same value until the
    policy trains on more steps)."""

    def __init__(self, binding: envs.Binding, cfg: Config, agent: nn.Module, device: str, vecenv) -> None:
        self.binding, self.cfg, self.agent, self.device = binding, cfg, agent, device
        from pufferlib.train.normalize import VecNormalize

        self.normalizer = vecenv if isinstance(vecenv, VecNormalize) else None
        self.evaluations = 0
        self.last: tuple[int, float] | None = None  # (steps, win rate)
        self.detail: dict[str, float] = {}

    def __call__(self, steps: int) -> float:
        if self.last is None or self.last[0] != steps:
            tc = self.cfg["train"]
            self.evaluations += 1
            with torch.no_grad():
                self.detail = play(
                    self.binding,
                    self.cfg,
                    self.agent,
                    self.device,
                    games=tc["solve_window"],
                    seed=tc["seed"] * 100_003 + self.evaluations,
                    normalizer=self.normalizer,
                    greedy=True,
                )
            self.last = (steps, self.detail["win"])
        return self.last[1]


def judge(binding: envs.Binding, cfg: Config, agent: nn.Module, device: str, vecenv) -> WinRate | None:
    """The score function the config's train.solve_metric names (None: the mean episode return)."""
    if cfg["train"]["solve_metric"] == "win_rate":
        return WinRate(binding, cfg, agent, device, vecenv)
    return None
