"""Slime Volleyball (slimevolley/<task>): slimevolleygym's two-slime volleyball, one- and two-player.

slimevolleygym 0.1.0 is written for the old gym API (reset() -> obs, step() -> 4-tuple, seed());
`SlimeVolley` below is our adapter to gymnasium's (the same role procgen.py's adapter plays), not
gym's own compatibility layer, so nothing here depends on gym's wrappers.

Tasks:
- `SlimeVolley-v0`: the right slime against slimevolleygym's built-in baseline (a fixed 120-weight
  RNN that plays the left slime). Observations: 12 float32 state features (own x, y, vx, vy; the
  ball's; the opponent's; from the agent's own side). Actions: MultiBinary(3) (forward, backward,
  jump), as upstream.
- `SlimeVolleyPixel-v0`: the same game, observed as 84x168x3 uint8 frames (upstream's pixel mode,
  drawn with OpenCV on a NumPy canvas, no display), 6 discrete actions (upstream's Atari table:
  noop, forward, forward+jump, jump, backward+jump, backward).
- `SlimeVolley-selfplay`: both slimes are agents (a PettingZoo ParallelEnv of two rows, `left` and
  `right`): each row sees the state from its own side and the rewards are zero-sum.

Rewards: +1 when the ball lands on the opponent's side, -1 on one's own. An episode is a match: it
ends (terminal) when a slime has lost 5 points, or is truncated after 3,000 steps. Seeding: full
(each serve's ball velocity is drawn from the env's RNG, seeded by `reset(seed)`; the baseline
policy is deterministic and its RNN state is cleared at every reset).
"""

from __future__ import annotations

import contextlib
import functools
import io
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

STATE_SHAPE = (12,)
PIXEL_SHAPE = (84, 168, 3)  # slimevolleygym's PIXEL_HEIGHT x PIXEL_WIDTH
NUM_LIVES = 5
TASKS = ("SlimeVolley-v0", "SlimeVolleyPixel-v0", "SlimeVolley-selfplay")


@functools.cache
def _module() -> Any:
    """slimevolleygym, imported once, in pixel mode (its module-level switch: OpenCV drawing on a NumPy
    canvas rather than pyglet windows; it changes no state observation, only colours and the canvas)."""
    # Importing gym prints a notice asking users to move to gymnasium; gym only hosts slimevolleygym's
    # base class here, so it is swallowed.
    with contextlib.redirect_stderr(io.StringIO()):
        import slimevolleygym.slimevolley as sv
    sv.setPixelObsMode()
    return sv


def _new_game(seed: int | None) -> Any:
    sv = _module()
    env = sv.SlimeVolleyEnv()
    env.seed(seed)
    return env


def _frame(game: Any) -> np.ndarray:
    return np.ascontiguousarray(game.render(mode="state"))  # the 84x168 canvas, redrawn


def _split(game: Any) -> tuple[bool, bool]:
    """(terminated, truncated) of upstream's `done`: a match lost is the end, the time limit is not."""
    lost = game.game.agent_left.life <= 0 or game.game.agent_right.life <= 0
    return lost, not lost and game.t >= game.t_limit


class SlimeVolley(gymnasium.Env):
    """One slime against the baseline policy, through the gymnasium API (state or pixel observations)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(self, pixels: bool = False) -> None:
        self.pixels = pixels
        self._game = _new_game(None)
        if pixels:
            self.observation_space = gymnasium.spaces.Box(0, 255, PIXEL_SHAPE, np.uint8)
            self.action_space = gymnasium.spaces.Discrete(len(self._game.action_table))
        else:
            self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, STATE_SHAPE, np.float32)
            self.action_space = gymnasium.spaces.MultiBinary(3)

    def _obs(self) -> np.ndarray:
        if self.pixels:
            return _frame(self._game)
        return np.asarray(self._game.game.agent_right.getObservation(), np.float32)

    def _action(self, action: Any) -> list:
        if self.pixels:
            return list(self._game.action_table[int(action)])
        return [int(a) for a in np.asarray(action).reshape(3)]

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._game = _new_game(seed)
        self._game.reset()
        self._game.policy.reset()
        return self._obs(), {}

    def step(self, action):
        _, reward, _, info = self._game.step(self._action(action))
        terminated, truncated = _split(self._game)
        lives = {"lives": info["ale.lives"], "opponent_lives": info["ale.otherLives"]}
        return self._obs(), float(reward), terminated, truncated, lives

    def render(self) -> np.ndarray:
        return _frame(self._game)


class SelfPlay:
    """Both slimes as agents: a PettingZoo ParallelEnv with rows `left` and `right` (state observations,
    MultiBinary(3) actions each; rewards zero-sum from each slime's side)."""

    metadata = {"name": "slimevolley_selfplay", "render_modes": ["rgb_array"]}
    possible_agents = ["left", "right"]

    def __init__(self) -> None:
        self._game = _new_game(None)
        self._obs_space = gymnasium.spaces.Box(-np.inf, np.inf, STATE_SHAPE, np.float32)
        self._atn_space = gymnasium.spaces.MultiBinary(3)
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> gymnasium.Space:
        return self._obs_space

    def action_space(self, agent: str) -> gymnasium.Space:
        return self._atn_space

    def _obs(self) -> dict[str, np.ndarray]:
        g = self._game.game
        return {
            "left": np.asarray(g.agent_left.getObservation(), np.float32),
            "right": np.asarray(g.agent_right.getObservation(), np.float32),
        }

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._game = _new_game(seed)
        self._game.reset()
        self.agents = list(self.possible_agents)
        return self._obs(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]):
        def act(agent: str) -> list:
            return [int(a) for a in np.asarray(actions[agent]).reshape(3)]

        _, reward, _, _ = self._game.step(act("right"), act("left"))
        terminated, truncated = _split(self._game)
        rewards = {"right": float(reward), "left": -float(reward)}
        done = terminated or truncated
        agents, self.agents = self.agents, [] if done else self.agents
        return (
            self._obs(),
            rewards,
            {a: terminated for a in agents},
            {a: truncated for a in agents},
            {a: {} for a in agents},
        )

    def render(self) -> np.ndarray:
        return _frame(self._game)

    def close(self) -> None:
        pass


def make_env(name: str, buf: Any = None, seed: int = 0) -> PufferEnv:
    """A Slime Volleyball task: SlimeVolley-v0 (state), SlimeVolleyPixel-v0 (frames), SlimeVolley-selfplay."""
    if name not in TASKS:
        raise ValueError(f"Unknown Slime Volleyball task {name!r}; one of {', '.join(TASKS)}")
    if name == "SlimeVolley-selfplay":
        env: PufferEnv = PettingZooPufferEnv(env=SelfPlay(), buf=buf, seed=seed)
    else:
        env = GymnasiumPufferEnv(env=SlimeVolley(pixels=name == "SlimeVolleyPixel-v0"), buf=buf, seed=seed)
    env.render_backend = "slimevolleygym's pixel mode (OpenCV on a NumPy canvas, no display)"
    return env


members = Members(
    "slimevolley", make_env, requires=("slimevolleygym", "cv2"), smoke=SmokeSpec(steps=256, seconds=120.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    pixels = name == "SlimeVolleyPixel-v0"
    selfplay = name == "SlimeVolley-selfplay"
    if pixels:
        what = "84x168x3 frames, 6 discrete actions, against the built-in baseline"
    elif selfplay:
        what = "both slimes are agents (self-play), 12 state features each, MultiBinary(3) actions"
    else:
        what = "12 state features, MultiBinary(3) actions, against the built-in baseline"
    return members.bind(
        name,
        policy="pufferlib.models:Convolutional" if pixels else "pufferlib.models:Default",
        multiagent=selfplay,
        pixels=PIXEL_SHAPE if pixels else (),
        description=f"Slime Volleyball {name}: {what}",
    )


register_catalog(members.family, TASKS, _binding, registered=TASKS)
