"""Procgen (procgen/<game>): the 16 procedurally generated games as one native multi-env PufferEnv.

`procgen` has no Python 3.11 wheel; `procgen2` has, and imports as `procgen`. Its gym and
gymnasium routes (gym 0.26 + shimmy) fail on it, so this adapter drives its gym3 API,
`ProcgenGym3Env`, directly: one C object steps `num_envs` games and each game is one agent row of
the PufferEnv (num_agents = num_envs). That is the fast path: no Python per game, no emulation.

gym3 semantics: observe() returns (reward, obs, first). `first[i]` marks the first observation of
a new episode: game i reset itself after the last action, and reward[i] is the final reward of
the episode that ended. Procgen does not tell a time-out from a death or a win, so every episode
end is a terminal (the `level_complete` info says whether the level was beaten).
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.environments.registry import Members, SmokeSpec, register
from pufferlib.environments.support.batched import BatchedGames

Policy = "pufferlib.models:ProcgenResnet"
GAMES = (
    "bigfish",
    "bossfight",
    "caveflyer",
    "chaser",
    "climber",
    "coinrun",
    "dodgeball",
    "fruitbot",
    "heist",
    "jumper",
    "leaper",
    "maze",
    "miner",
    "ninja",
    "plunder",
    "starpilot",
)
DISTRIBUTION_MODES = ("easy", "hard", "extreme", "memory", "exploration")
NUM_ACTIONS = 15  # every game shares procgen's 15 button combinations


def _gym3_class() -> type:
    # `import procgen` imports gym 0.26, which prints a notice telling users to switch to gymnasium;
    # that is noise here (gym is only procgen's registration shim), so it is swallowed.
    with contextlib.redirect_stderr(io.StringIO()):
        from procgen import ProcgenGym3Env
    return ProcgenGym3Env


class Procgen(BatchedGames):
    """`num_envs` games of one Procgen title; rows are 64x64x3 uint8 frames, 15 discrete actions.

    distribution_mode: "easy" (the usual research setting, and the default here), "hard",
    "extreme", "memory" or "exploration" (the last two exist for a few games only).
    num_levels/start_level: train on levels [start_level, start_level + num_levels);
    num_levels=0 means unlimited levels. num_threads=0 steps the games in the calling thread,
    which is the fastest choice when each vector worker already has its own core.
    Other keyword arguments go to ProcgenGym3Env (e.g. use_backgrounds=False, paint_vel_info=True).
    """

    family = "procgen"
    render_backend = "procgen's own software rasterizer (Qt, no GPU, no display)"

    def __init__(
        self,
        name: str,
        num_envs: int = 1,
        buf: Any = None,
        seed: int = 0,
        distribution_mode: str = "easy",
        num_levels: int = 0,
        start_level: int = 0,
        num_threads: int = 0,
        **kwargs: Any,
    ) -> None:
        if name not in GAMES:
            raise ValueError(f"Unknown Procgen game {name!r}; one of {', '.join(GAMES)}")
        if distribution_mode not in DISTRIBUTION_MODES:
            raise ValueError(
                f"distribution_mode must be one of {', '.join(DISTRIBUTION_MODES)}, got {distribution_mode!r}"
            )
        if num_levels < 0 or start_level < 0 or num_threads < 0:
            raise ValueError(
                f"num_levels, start_level and num_threads must be >= 0, "
                f"got {num_levels}, {start_level}, {num_threads}"
            )
        self.name = name
        self.single_observation_space = gymnasium.spaces.Box(0, 255, (64, 64, 3), np.uint8)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.num_agents = int(num_envs)
        super().__init__(buf)
        self._options = dict(
            env_name=name,
            distribution_mode=distribution_mode,
            num_levels=num_levels,
            start_level=start_level,
            num_threads=num_threads,
            **kwargs,
        )
        self._setup(seed)
        self._rng = np.random.default_rng(seed)
        self._env = None
        self._build()  # fail here, not on the first reset, if an option is wrong

    def _build(self) -> None:
        """A fresh set of games. gym3 games cannot be reset from outside, so reset() rebuilds (~1 ms)."""
        self.close()
        rand_seed = int(self._rng.integers(2**31 - 1))
        try:
            self._env = _gym3_class()(num=self.num_agents, rand_seed=rand_seed, **self._options)
        except (TypeError, AssertionError, ValueError) as e:
            raise ValueError(f"procgen/{self.name}: invalid options {self._options}: {e}") from e

    def reset(self, seed: int | None = None):
        seed = self._reset_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._build()
        _, obs, _ = self._env.observe()
        return self._started_with(obs["rgb"])

    def step(self, actions):
        self._env.act(self._actions(actions))
        reward, obs, first = self._env.observe()
        self.observations[:] = obs["rgb"]
        self.rewards[:] = reward
        self.terminals[:] = first
        level = self._env.get_info() if first.any() else None
        infos = self._stats.step(
            reward, first, lambda i: {"level_complete": float(level[i]["prev_level_complete"])}
        )
        return self.observations, self.rewards, self.terminals, self.truncations, infos


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    return Procgen(name, buf=buf, seed=seed, **kwargs)


members = Members(
    "procgen", make_env, policy=Policy, requires=("procgen", "gym3"), smoke=SmokeSpec(steps=512, seconds=60.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


for _game in GAMES:
    register(
        members.bind(
            _game,
            pixels=(64, 64, 3),
            description=f"Procgen {_game} (gym3, native multi-env; easy mode, unlimited levels)",
        )
    )
