"""Craftax (craftax/<id>): Crafter rewritten in JAX, as one native multi-env PufferEnv.

Ids: `Craftax-Classic-Symbolic-v1` (Crafter's rules; 1345 floats: the 9x7 local map one-hot plus
inventory and status), `Craftax-Classic-Pixels-v1` (63x63x3), `Craftax-Symbolic-v1` (the full
game: dungeons, floors, magic; 8268 floats), `Craftax-Pixels-v1` (130x110x3). Pixels arrive as
uint8 (the game's [0, 1] floats times 255, converted inside the jitted step). Actions: Discrete(17)
(Classic) or Discrete(43).

`num_envs` games are rows of one PufferEnv, stepped by ONE jitted, vmapped function per step: no
Python loop over games. Games that end restart inside the same jitted call (as Procgen's and
ALE's do: the observation that comes with a done is the first of the next episode); fresh worlds
are generated only on steps where some game ended (`lax.cond`), `resets` of them (default
ceil(num_envs / 16), as Craftax's own optimistic resets). If more games end on one step than
`resets`, some share a new world (their futures still differ: every game has its own key).

Episode ends: death (and, in Craftax, beating the final boss) is a terminal; the time limit
(10,000 steps Classic, 100,000 Craftax) a truncation. Infos at each episode end:
`achievements/<name>` = 1.0 if the achievement was unlocked in the episode (22 Classic, 67 Craftax;
the mean over episodes is the success rate Crafter's score is built from).

Seeding: full. `reset(seed)` starts every game from jax.random.PRNGKey(seed); each step splits the
key. JAX: CPU (`jax[cpu]`) in both image variants; compiling the batched step takes tens of
seconds on CPU, so unless JAX_COMPILATION_CACHE_DIR (or jax's config) names a cache already, the
family points JAX's persistent compilation cache at ~/.cache/pufferlib/jax: later processes (vector
workers, the next run) load the compiled step in about a second. In the image that cache starts
warm: the envs stage compiled the registered programs (craftax_jax.py says how), and they are linked
in on first use. Craftax prints texture-cache messages on import; they are swallowed (the smoke
check's stdout is JSON).

JAX and fork: an env made in a process forked from one where JAX already ran runs its games in a
child process of its own (`process="auto"`; support/jax_games.py says why and how).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.environments.support import craftax_jax, jax_cache, jax_games
from pufferlib.environments.support.craftax_jax import DEFAULT_NUM_ENVS, ENVS, REGISTERED, default_resets


@functools.cache
def _program(name: str, num_envs: int, resets: int):
    """The jitted reset and step for `num_envs` games of `name` (built once per process)."""
    import jax

    jax_games.ran_jax()  # importing craftax already computes with JAX (its texture arrays)
    jax_cache.setup(jax)
    return craftax_jax.program(name, num_envs, resets)


class _Local:
    """The batched game in this process: the jitted program, its key and state."""

    def __init__(self, name: str, num_envs: int, resets: int) -> None:
        self._reset, self._step, *self.spec = _program(name, num_envs, resets)
        self._key = self._state = None

    def reset(self, seed: int | None) -> np.ndarray:
        import jax

        key = jax.random.PRNGKey(seed) if seed is not None else self._key
        self._key, self._state, obs = self._reset(key)
        return np.asarray(obs)

    def step(self, actions: np.ndarray) -> tuple:
        self._key, self._state, obs, reward, terminal, truncated, achieved = self._step(
            self._key, self._state, actions
        )
        terminal, truncated = np.asarray(terminal), np.asarray(truncated)
        unlocked = np.asarray(achieved) if (terminal | truncated).any() else None
        return np.asarray(obs), np.asarray(reward), terminal, truncated, unlocked


def serve(fd: int) -> None:
    """A Craftax game batch in a child process (pufferlib.environments.support.child runs it)."""
    jax_games.serve(fd, _Local)


class Craftax(jax_games.JaxGames):
    """`num_envs` Craftax games of one id (see the module docstring).

    process: "auto" runs JAX in this process, unless this process was forked from one where this
    family already ran JAX (JAX does not survive fork: the child aborts or hangs), in which case the
    games run in a child process of their own; "local" and "child" force one or the other.
    """

    family = "craftax"
    title = "Craftax"
    ids = ENVS
    local = _Local
    target = "pufferlib.environments.craftax:serve"

    def __init__(
        self,
        name: str,
        num_envs: int = DEFAULT_NUM_ENVS,
        buf: Any = None,
        seed: int = 0,
        resets: int | None = None,
        process: str = "auto",
    ):
        shape, actions, self.achievements = self._start(name, num_envs, resets, process, default_resets)
        if ENVS[name][1]:
            self.single_observation_space = gymnasium.spaces.Box(0, 255, shape, np.uint8)
        else:
            self.single_observation_space = gymnasium.spaces.Box(0.0, 1.0, shape, np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(actions)
        super().__init__(buf)
        self._setup(seed)

    def _episode_info(self, unlocked: Any, i: int) -> dict[str, float]:
        return {f"achievements/{a}": float(u) for a, u in zip(self.achievements, unlocked[i], strict=True)}


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """`num_envs` games of a Craftax id; kwargs: num_envs=1, resets=ceil(num_envs/16), process="auto"."""
    return Craftax(name, buf=buf, seed=seed, **kwargs)


members = Members(
    "craftax",
    make_env,
    requires=("craftax", "jax"),
    smoke=SmokeSpec(steps=64, seconds=300.0),  # the first compile of the batched step (CPU)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    classic, pixels = ENVS[name]
    return members.bind(
        name,
        policy="pufferlib.models:Convolutional" if pixels else "pufferlib.models:Default",
        description=f"{'Craftax-Classic' if classic else 'Craftax'} in JAX, "
        f"{'pixels (uint8)' if pixels else 'symbolic'} observations; one jitted step for all games",
    )


# The registered set (craftax_jax.REGISTERED, exercised by the integration matrix, its programs compiled
# into the image at build time): Classic with symbolic observations. The pixel renderers compile for
# minutes (and their executables load slowly even from the persistent cache), which the matrix budget
# cannot carry. The other three ids are made the same way on demand (tests/unit/envs/test_env_craftax.py
# covers pixels).
register_catalog(members.family, tuple(ENVS), _binding, registered=REGISTERED)


def bench(
    name: str = "Craftax-Classic-Symbolic-v1",
    sizes: tuple = (1, 16, 64, 256),
    steps: int = 50,
    repeats: int = 3,
):
    """Print steps/s of `sizes` games in one Craftax env (CPU JAX) beside Crafter (pure Python, one game).

    Compiling is excluded (one warm-up step first; the compile time is printed); medians of `repeats`.

        python -c "from pufferlib.environments.craftax import bench; bench()"
    """
    import jax

    from pufferlib.environments import crafter

    platform = jax_cache.setup(jax).devices()[0].platform
    print(f"craftax/{name} on {platform}, load {os.getloadavg()[0]:.1f}")
    for n in (*sizes, "crafter"):
        env = crafter.make_env("reward") if n == "crafter" else make_env(name, num_envs=n)
        step = functools.partial(_random_step, env, np.random.default_rng(0))
        per_step, warmup = jax_games.call_rate(functools.partial(env.reset, seed=0), step, steps, repeats)
        env.close()
        label = "crafter/reward (1 game, Python)" if n == "crafter" else f"{n} games"
        print(
            f"  {label:<32} {per_step * env.num_agents:10,.0f} steps/s   (reset + first step {warmup:.1f}s)"
        )


def _random_step(env: PufferEnv, rng: np.random.Generator) -> None:
    """One step of `env` with uniform random actions for every game (a finished env is reset first)."""
    if env.done:
        env.reset()
    env.step(rng.integers(0, env.single_action_space.n, env.num_agents))
