"""Atari (atari/<game>): the Arcade Learning Environment with the standard DQN/PPO preprocessing.

ale-py 0.12 ships the ROMs and a C++ vector env (`AtariVectorEnv`) that does the preprocessing
natively: frame skip 4 with a max over the last two frames, grey 84x84, a stack of the last 4
frames, up to 30 no-op actions after each reset, FIRE after reset where the game needs it. This
adapter wraps it as one native multi-env PufferEnv (num_agents = num_envs), the fast path.

Two steps are done here instead of in ALE, so that episode statistics stay true game scores:
- episodic life: a lost life is reported as terminal (the learner stops bootstrapping) while the
  game goes on; ALE's own `episodic_life` would restart the whole game on every lost life.
- reward clipping to {-1, 0, 1}: the reward buffer is clipped, the episode_return info is the
  unclipped score of the whole game (all lives).
Games reset themselves at game over or after max_episode_frames (ALE "SameStep" autoreset: the
observation that comes with a terminal is the first of the next game).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from pufferlib import APIUsageError, PufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.environments.support.batched import BatchedGames

Policy = "pufferlib.environments.support.policies:Atari"
# The Atari 57 benchmark games (ALE's snake_case ROM names).
GAMES = (
    "alien",
    "amidar",
    "assault",
    "asterix",
    "asteroids",
    "atlantis",
    "bank_heist",
    "battle_zone",
    "beam_rider",
    "berzerk",
    "bowling",
    "boxing",
    "breakout",
    "centipede",
    "chopper_command",
    "crazy_climber",
    "defender",
    "demon_attack",
    "double_dunk",
    "enduro",
    "fishing_derby",
    "freeway",
    "frostbite",
    "gopher",
    "gravitar",
    "hero",
    "ice_hockey",
    "jamesbond",
    "kangaroo",
    "krull",
    "kung_fu_master",
    "montezuma_revenge",
    "ms_pacman",
    "name_this_game",
    "phoenix",
    "pitfall",
    "pong",
    "private_eye",
    "qbert",
    "riverraid",
    "road_runner",
    "robotank",
    "seaquest",
    "skiing",
    "solaris",
    "space_invaders",
    "star_gunner",
    "surround",
    "tennis",
    "time_pilot",
    "tutankham",
    "up_n_down",
    "venture",
    "video_pinball",
    "wizard_of_wor",
    "yars_revenge",
    "zaxxon",
)


class Atari(BatchedGames):
    """`num_envs` copies of one game; rows are (stack, 84, 84) uint8 frame stacks, channels first.

    repeat_action_probability defaults to 0 (deterministic actions, as in CleanRL's Atari PPO);
    0.25 gives the sticky actions of Machado et al. (2018). num_threads=None uses one ALE thread
    per env up to the CPUs this process may use. Any game ROM that ale-py ships may be named,
    not only the registered ones.
    """

    family = "atari"
    render_backend = "ALE's emulated Atari screen (grey, resized to 84x84 by ale-py's vector env)"

    def __init__(
        self,
        name: str,
        num_envs: int = 1,
        buf: Any = None,
        seed: int = 0,
        frameskip: int = 4,
        stack: int = 4,
        noop_max: int = 30,
        episodic_life: bool = True,
        clip_rewards: bool = True,
        repeat_action_probability: float = 0.0,
        max_episode_frames: int = 108_000,
        full_action_space: bool = False,
        num_threads: int | None = None,
    ) -> None:
        from ale_py import roms
        from ale_py.vector_env import AtariVectorEnv

        if roms.get_rom_path(name) is None:
            raise ValueError(
                f"Unknown Atari game {name!r}: ALE ROM names are snake_case (e.g. 'space_invaders'); "
                f"registered: {', '.join(GAMES)}"
            )
        if frameskip < 1 or stack < 1 or noop_max < 0:
            raise ValueError(
                f"need frameskip >= 1, stack >= 1, noop_max >= 0; got {frameskip}, {stack}, {noop_max}"
            )
        self.name = name
        self.num_agents = int(num_envs)
        if self.num_agents < 1:
            raise APIUsageError(f"atari/{name}: num_envs must be >= 1, got {num_envs}")
        if num_threads is None:
            num_threads = min(self.num_agents, len(os.sched_getaffinity(0)))
        self._env = AtariVectorEnv(
            name,
            self.num_agents,
            num_threads=num_threads,
            autoreset_mode="SameStep",
            frameskip=frameskip,
            stack_num=stack,
            noop_max=noop_max,
            episodic_life=False,  # restarts the game on every lost life; done below instead
            life_loss_info=False,
            reward_clipping=False,  # clipped below, after the score is recorded
            repeat_action_probability=repeat_action_probability,
            max_num_frames_per_episode=max_episode_frames,
            full_action_space=full_action_space,
        )
        self.single_observation_space = self._env.single_observation_space
        self.single_action_space = self._env.single_action_space
        super().__init__(buf)
        self.episodic_life = episodic_life
        self.clip_rewards = clip_rewards
        self._lives = np.zeros(self.num_agents, dtype=np.int32)
        self._setup(seed)

    def reset(self, seed: int | None = None):
        seed = self._reset_seed(seed)
        obs, info = self._env.reset(seed=seed)  # env i gets seed + i; None continues each env's RNG
        self._lives[:] = info["lives"]
        return self._started_with(obs)

    def step(self, actions):
        obs, reward, terminated, truncated, info = self._env.step(self._actions(actions))
        self.observations[:] = obs
        self.rewards[:] = np.sign(reward) if self.clip_rewards else reward
        self.truncations[:] = truncated
        game_over = terminated | truncated
        if self.episodic_life:
            # At a game over `lives` already belongs to the next game, so only compare live games.
            self.terminals[:] = terminated | (~game_over & (info["lives"] < self._lives))
        else:
            self.terminals[:] = terminated
        self._lives[:] = info["lives"]
        infos = self._stats.step(reward, game_over)  # raw scores of whole games, not clipped rewards
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def render(self):
        return self.observations[0, -1]  # the newest grey frame of the first game


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    return Atari(name, buf=buf, seed=seed, **kwargs)


members = Members(
    "atari", make_env, policy=Policy, requires=("ale_py",), smoke=SmokeSpec(steps=512, seconds=60.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix); every other game of GAMES is made the
# same way on demand: make("atari/alien") works, `puffer envs --all` lists them.
REGISTERED = (
    "asteroids",
    "beam_rider",
    "breakout",
    "enduro",
    "montezuma_revenge",
    "ms_pacman",
    "pong",
    "qbert",
    "seaquest",
    "space_invaders",
)


def _binding(game: str) -> Binding:
    return members.bind(
        game,
        pixels=(4, 84, 84),  # a stack of 4 grey frames, channels first
        description=f"Atari {game} (frame skip 4, grey 84x84, stack 4, no-op resets, episodic life)",
    )


register_catalog(members.family, GAMES, _binding, registered=REGISTERED)
