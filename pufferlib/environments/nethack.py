"""NetHack (nethack/<NLE task>): the NetHack Learning Environment tasks, e.g. NetHackScore-v0.

Observations are NLE's Dict, cut down to the keys the default policy reads: `glyphs` (21x79 map of
glyph ids), `blstats` (the 27 bottom-line stats, hero position first) and `message` (256 bytes of
the top line). Every key costs copy time on every step (NLE's full set is ~150 kB per step,
mostly `screen_descriptions`); pass observation_keys=(...) for others (e.g. "chars", "colors",
"inv_strs"; the policy needs glyphs and blstats). render() returns the map as text (21 lines of
79 characters, NLE's "ansi" mode), whatever the keys.

Seeding: NLE ignores gymnasium's reset(seed=...); its two NetHack RNGs are set through
env.seed(core, disp, reseed=False). `NLESeeding` does that on every reset, drawing the seeds from
a generator seeded by reset(seed=...), and the moon phase / Friday 13th effects are derived from
the seed instead of the wall clock (fix_moon_phase=True), so one seed gives one trajectory.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Members, SmokeSpec, register

Policy = "pufferlib.environments.support.policies:NetHack"
OBSERVATION_KEYS = ("glyphs", "blstats", "message")
TASKS = (
    "NetHackScore-v0",
    "NetHackStaircase-v0",
    "NetHackStaircasePet-v0",
    "NetHackOracle-v0",
    "NetHackGold-v0",
    "NetHackEat-v0",
    "NetHackScout-v0",
    "NetHackChallenge-v0",
)
# The NeurIPS 2021 challenge task refuses seeds by design (its RNG setters raise).
UNSEEDABLE = ("NetHackChallenge-v0",)


class NLESeeding(gymnasium.Wrapper):
    """Makes reset(seed=s) reproducible for NLE and MiniHack envs (see the module docstring)."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self._rng: np.random.Generator | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if self._rng is not None:
            core, disp = (int(s) for s in self._rng.integers(sys.maxsize, size=2))
            self._seed_nethack(self.env.unwrapped, core, disp)
        return self.env.reset(seed=seed, options=options)

    @staticmethod
    def _seed_nethack(env: Any, core: int, disp: int) -> None:
        from nle.env.base import NLE

        layout = getattr(env, "minigrid_env", None)
        if layout is not None:
            # MiniHack's MiniGrid-based levels (MultiRoom, ...) draw their layout from
            # a MiniGrid env, and their seed() calls MiniGrid's removed seed(): seed it directly.
            layout.reset(seed=core % 2**32)
        NLE.seed(env, core, disp, reseed=False)


def make_nle(
    name: str,
    buf: Any = None,
    seed: int = 0,
    observation_keys: tuple[str, ...] = OBSERVATION_KEYS,
    fix_moon_phase: bool = True,
    seeded: bool = True,
    **kwargs: Any,
) -> PufferEnv:
    """An NLE-based env (NetHack task or MiniHack level) by gymnasium id, seeded and emulated."""
    kwargs.setdefault("render_mode", "ansi")  # NLE's default, "human", prints to stdout on render()
    keys = tuple(observation_keys)
    # render() in "ansi" mode draws NLE's `chars`: NLE keeps them (~1.7 kB a step) and the agent's
    # observations leave them out unless asked for.
    drawn = ("chars",) if kwargs["render_mode"] == "ansi" and "chars" not in keys else ()
    env = gymnasium.make(name, observation_keys=keys + drawn, fix_moon_phase=fix_moon_phase, **kwargs)
    if drawn:
        env = gymnasium.wrappers.FilterObservation(env, list(keys))
    return GymnasiumPufferEnv(env=NLESeeding(env) if seeded else env, buf=buf, seed=seed)


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """An NLE task; kwargs go to the task (e.g. character="mon-hum-neu-mal", max_episode_steps=...)."""
    import nle  # noqa: F401  (registers the NetHack ids with gymnasium)

    return make_nle(name, buf=buf, seed=seed, seeded=name not in UNSEEDABLE, **kwargs)


members = Members(
    "nethack", make_env, policy=Policy, requires=("nle",), smoke=SmokeSpec(steps=512, seconds=60.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


for _task in TASKS:
    register(
        members.bind(
            _task,
            description=f"NLE {_task} (glyphs, blstats, message)",
            seeding="none: the challenge task refuses NetHack seeds by design"
            if _task in UNSEEDABLE
            else "full",
        )
    )
