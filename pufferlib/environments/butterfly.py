"""PettingZoo Butterfly (butterfly/<env>): cooperative multi-agent pygame games, as ParallelEnvs.

Versions: pettingzoo 1.27 ships pistonball_v6, cooperative_pong_v6 and knights_archers_zombies_v11
(built here through its registry, `pettingzoo.make`), and raises DeprecatedEnv for
cooperative_pong_v5 and knights_archers_zombies_v10. Those two names stay registered as aliases
that build the current version (same game with upstream's fixes: pong v6 fixed its termination
and bounce randomness, KAZ v11 is a rewrite with fixes), so old configs keep working; the binding
description says so.

Populations: KAZ agents die; PettingZooPufferEnv keeps all four rows and pads the dead ones
(zero observation, reward 0, mask False). Images: pistonball (457x120x3 per piston, 20 pistons)
and cooperative pong (280x480x3) are large, so their bindings keep every 2nd / 4th pixel
(`downsample`, a strided view; 1 gives the full image). Pistonball's binding uses its discrete
actions (down/stay/up, `continuous=False`): for continuous ones PettingZoo prints a warning per
out-of-range action, which an unclipped Gaussian policy produces on most steps.
pygame needs no screen: SDL_VIDEODRIVER=dummy is set unless the caller set it.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium

from pufferlib import EnvironmentSetupError, PufferEnv
from pufferlib.emulation import PettingZooPufferEnv
from pufferlib.environments.registry import Binding, SmokeSpec, family_env_creator, register

ALIASES = {
    "cooperative_pong_v5": "cooperative_pong_v6",
    "knights_archers_zombies_v10": "knights_archers_zombies_v11",
}
# The pixel envs' frames at the binding's downsampling (the matrix's `render` check covers them).
PIXELS = {"pistonball_v6": (229, 60, 3), "cooperative_pong_v6": (70, 120, 3)}
# name -> (policy, binding kwargs, description)
ENVS: dict[str, tuple[str, dict[str, Any], str]] = {
    "pistonball_v6": (
        "pufferlib.models:Convolutional",
        {"downsample": 2, "continuous": False},
        "20 pistons push a ball left; 229x60x3 images (every 2nd pixel), 3 discrete actions",
    ),
    "cooperative_pong_v6": (
        "pufferlib.models:Convolutional",
        {"downsample": 4},
        "two paddles keep a ball in play; 70x120x3 images (every 4th pixel)",
    ),
    "knights_archers_zombies_v11": (
        "pufferlib.models:Default",
        {},
        "2 knights + 2 archers against zombies; vector observations, dead agents masked",
    ),
}


class Downsample:
    """A ParallelEnv whose image observations keep every k-th pixel (views; emulation copies once)."""

    def __init__(self, env: Any, k: int) -> None:
        self.env = env
        self.k = k
        self.metadata = env.metadata
        self.possible_agents = env.possible_agents
        self._spaces: dict[Any, gymnasium.spaces.Box] = {}

    @property
    def agents(self) -> list:
        return self.env.agents

    def observation_space(self, agent: Any) -> gymnasium.spaces.Box:
        if agent not in self._spaces:
            space = self.env.observation_space(agent)
            low, high = space.low[:: self.k, :: self.k], space.high[:: self.k, :: self.k]
            self._spaces[agent] = gymnasium.spaces.Box(low, high, dtype=space.dtype)
        return self._spaces[agent]

    def action_space(self, agent: Any) -> gymnasium.Space:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None, options: dict | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return {a: o[:: self.k, :: self.k] for a, o in obs.items()}, infos

    def step(self, actions: dict):
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        obs = {a: o[:: self.k, :: self.k] for a, o in obs.items()}
        return obs, rewards, terminations, truncations, infos

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def _draw_before_observing(raw: Any) -> None:
    """Upstream's cooperative pong takes observations from its screen but draws that screen only in
    render(), which returns at once without a render_mode: every observation was black (the matrix's
    `render` check found it). Draw the current game (`raw.env`, which a seeded reset replaces) before
    each observation is read."""

    def observe(agent: Any) -> Any:
        raw.env.draw()
        return raw.env.observe()

    raw.observe = observe


def make_env(name: str, buf: Any = None, seed: int = 0, downsample: int = 1, **kwargs: Any) -> PufferEnv:
    """A Butterfly env (aliases resolved); kwargs go to the env (e.g. continuous=False, max_cycles=...)."""
    import pettingzoo

    if downsample < 1:
        raise ValueError(f"downsample must be >= 1, got {downsample}")
    if not hasattr(pettingzoo, "make"):
        raise EnvironmentSetupError(
            f"butterfly/{name} needs pettingzoo>=1.27 (its registry and the current Butterfly "
            f"versions); found {pettingzoo.__version__}: pip install 'pufferlib[butterfly]'"
        )
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    game, version = ALIASES.get(name, name).rsplit("_", 1)  # pistonball_v6 -> butterfly/pistonball-v6
    env = pettingzoo.make("parallel", f"butterfly/{game}-{version}", **kwargs)
    if game == "cooperative_pong":
        _draw_before_observing(env.unwrapped)
    if downsample > 1:
        env = Downsample(env, downsample)
    env = PettingZooPufferEnv(env=env, buf=buf, seed=seed)
    env.render_backend = "pygame-ce software surface (SDL_VIDEODRIVER=" + os.environ["SDL_VIDEODRIVER"] + ")"
    return env


env_creator = family_env_creator("butterfly")  # PufferLib's env_creator(name)


def _register(name: str, target: str) -> None:
    policy, kwargs, description = ENVS[target]
    if name != target:
        description = f"alias of {target} (pettingzoo 1.27 removed {name}): {description}"
    register(
        Binding(
            name=f"butterfly/{name}",
            make=make_env,
            kwargs={"name": target, **kwargs},
            extra="butterfly",
            policy=policy,
            multiagent=True,
            requires=("pettingzoo", "pygame", "pymunk"),
            smoke=SmokeSpec(steps=128 if target == "pistonball_v6" else 256, seconds=120.0),  # 20 pistons
            pixels=PIXELS.get(target, ()),
            description=description,
        )
    )


for _name in ENVS:
    _register(_name, _name)
for _alias, _target in ALIASES.items():
    _register(_alias, _target)
