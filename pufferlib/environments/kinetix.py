"""Kinetix (kinetix/<id>): 2-D physics control in JAX (Jax2D), as one native multi-env PufferEnv.

Ids: `Kinetix-<Size>-<Observation>-<Action>`, Kinetix's own options. Size: S, M or L (5, 6 or 12
polygons; 2, 3 or 4 circles; 1, 2 or 6 joints; 1, 2 or 2 thrusters). Observation: SymbolicFlat (floats
describing every shape, joint and thruster: 140 in S, 679 in L) or Pixels (125x125x3 uint8, upright).
Action: MultiDiscrete ([3, 3, 3, 3, 2, 2]: four motors backward/off/forward, two thrusters off/on),
Continuous (Box(-1, 1, (6,))) or Discrete(11) (one motor one way, a thruster, or nothing).

Every game is a level drawn from Kinetix's random-level distribution (the one its general agents train
on): a floor, shapes joined by motors, thrusters. The episode ends with +1 when the green shape touches
the blue one and with -1 when it touches a red one; each step also pays 0.1 x the distance the green
shape closed on the blue one (Kinetix's dense reward); 256 steps at most (a truncation). A level whose
physics blows up (NaN) ends too, as in Kinetix. Infos at each episode end: `solved` (1.0 if green met
blue: the mean is Kinetix's solve rate). Levels are not filtered: some are solved by doing nothing.

`num_envs` levels (1 unless asked; `puffer train` steps 32) are rows of one PufferEnv, stepped by one JAX
call; ended rows take fresh levels inside the same call (the observation that comes with a done is the
first of the next episode), from a pool of `resets` levels drawn after every step where an episode ended
(default ceil(num_envs / 32)). kinetix_jax.py holds the programs and says why they are exported: in the
image the registered ids at 1 and 32 levels load in about a second, and any other id or size is traced
once (about 10-40 s) and stored in ~/.cache/pufferlib/kinetix for every later process.

Seeding: full. `reset(seed)` draws every level from jax.random.PRNGKey(seed); each step splits the key.
render() draws game 0 with Kinetix's pixel renderer (the Pixels observation of that level), so symbolic
ids make videos too. JAX runs on the CPU in both image variants; an env made in a process forked from
one where JAX already ran runs its games in a child process (`process="auto"`, support/jax_games.py).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.environments.support import jax_cache, jax_games, kinetix_jax
from pufferlib.environments.support.kinetix_jax import DEFAULT_NUM_ENVS, ENVS, REGISTERED, default_resets

FPS = 30  # Kinetix steps 2 physics frames of 1/60 s


@functools.cache
def _programs(name: str, num_envs: int, resets: int) -> kinetix_jax.Programs:
    """The programs of `num_envs` games of `name` (loaded, or traced and stored, once per process)."""
    import jax

    jax_games.ran_jax()
    jax_cache.setup(jax)
    return kinetix_jax.Programs(name, num_envs, resets)


class _Local:
    """The batched levels in this process: the programs, the key, the levels and the next pool."""

    def __init__(self, name: str, num_envs: int, resets: int) -> None:
        self.p = _programs(name, num_envs, resets)
        self.spec = (self.p.obs_shape, self.p.obs_dtype, self.p.action)
        self._key = self._levels = self._pool = None

    def reset(self, seed: int | None) -> np.ndarray:
        import jax

        key = jax.random.PRNGKey(seed) if seed is not None else self._key
        key, self._levels = self.p.levels(key)
        self._key, self._pool = self.p.sample(key)
        return np.asarray(self.p.observe(self._levels))

    def step(self, actions: np.ndarray) -> tuple:
        self._key, self._levels, obs, reward, terminal, truncated, solved = self.p.step(
            self._key, self._levels, actions, self._pool
        )
        terminal, truncated = np.asarray(terminal), np.asarray(truncated)
        if (terminal | truncated).any():
            self._key, self._pool = self.p.sample(self._key)
        return np.asarray(obs), np.asarray(reward), terminal, truncated, np.asarray(solved)

    def render(self, _: Any = None) -> np.ndarray:
        """Game 0 as Kinetix's Pixels observation draws it (uint8 RGB)."""
        return np.asarray(self.p.frame(self._levels))


def serve(fd: int) -> None:
    """Kinetix levels in a child process (pufferlib.environments.support.child runs it)."""
    jax_games.serve(fd, _Local)


def _action_space(kind: str, arg: Any) -> gymnasium.Space:
    if kind == "multi_discrete":
        return gymnasium.spaces.MultiDiscrete(arg)
    if kind == "box":
        return gymnasium.spaces.Box(-1.0, 1.0, (arg,), np.float32)
    return gymnasium.spaces.Discrete(arg)


class Kinetix(jax_games.JaxGames):
    """`num_envs` Kinetix levels of one id (see the module docstring).

    process: "auto" runs JAX in this process, unless this process was forked from one where a JAX family
    already ran JAX, in which case the levels run in a child process of their own; "local" and "child"
    force one or the other.
    """

    family = "kinetix"
    title = "Kinetix"
    ids = ENVS
    local = _Local
    target = "pufferlib.environments.kinetix:serve"
    metadata = {"render_fps": FPS}
    render_backend = "Kinetix's JAX rasterizer (jaxgl, on the CPU)"

    def __init__(
        self,
        name: str,
        num_envs: int = DEFAULT_NUM_ENVS,
        buf: Any = None,
        seed: int = 0,
        resets: int | None = None,
        process: str = "auto",
    ):
        shape, dtype, action = self._start(name, num_envs, resets, process, default_resets)
        if dtype == "uint8":
            self.single_observation_space = gymnasium.spaces.Box(0, 255, shape, np.uint8)
        else:
            self.single_observation_space = gymnasium.spaces.Box(-np.inf, np.inf, shape, np.float32)
        self.single_action_space = _action_space(*action)
        super().__init__(buf)
        self._setup(seed)

    def _episode_info(self, solved: Any, i: int) -> dict[str, float]:
        return {"solved": float(solved[i])}

    def render(self) -> np.ndarray | None:
        """Game 0 as a (125, 125, 3) uint8 frame (None before the first reset)."""
        if not self._started:
            return None
        if self.single_observation_space.dtype == np.uint8:  # Pixels: the observation is the frame
            return self.observations[0].copy()
        return self._engine.render()


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """`num_envs` levels of a Kinetix id; kwargs: num_envs=1, resets=ceil(num_envs/32), process="auto"."""
    return Kinetix(name, buf=buf, seed=seed, **kwargs)


members = Members(
    "kinetix",
    make_env,
    requires=("kinetix", "jax2d", "jaxgl", "gymnax", "chex", "jax"),
    hint="pip install 'pufferlib[kinetix]' && pip install --no-deps kinetix-env jax2d jaxgl gymnax "
    "(kinetix-env requires a training stack the env never imports; docs/environments.md, Kinetix)",
    smoke=SmokeSpec(steps=64, seconds=300.0),  # an id outside the image is traced and compiled first
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    size, obs, action = name.split("-")[1:]
    pixels = obs == "Pixels"
    return members.bind(
        name,
        policy="pufferlib.models:Convolutional" if pixels else "pufferlib.models:Default",
        pixels=(125, 125, 3) if pixels else (),
        description=f"Kinetix random {size} levels in JAX, {'pixels (uint8)' if pixels else 'symbolic'} "
        f"observations, {action} actions; one JAX call steps every level",
    )


# The registered set (kinetix_jax.REGISTERED: exercised by the integration matrix, its programs built into
# the image): size S, symbolic and pixels, MultiDiscrete actions. The other ids are made the same way on
# demand (tests/unit/envs/test_env_kinetix.py covers Continuous and Discrete).
register_catalog(members.family, tuple(ENVS), _binding, registered=REGISTERED)


def bench(
    name: str = "Kinetix-S-SymbolicFlat-MultiDiscrete",
    sizes: tuple = (1, 8, 32, 128),
    steps: int = 50,
    repeats: int = 3,
    peer_size: int = 32,
):
    """Print steps/s of `sizes` levels in one Kinetix env (CPU JAX) beside Kinetix's own stepping.

    The peer is Kinetix's own env as its random-level training steps it: `make_kinetix_env` with a reset
    function that draws a random level and auto-reset on, `env.step` jitted and vmapped over `peer_size`
    levels. Its auto-reset computes the reset branch on every step (jax.lax.select evaluates both sides), so
    it draws a level per level per step. Compiling is excluded (one warm-up step first; its time is
    printed); medians of `repeats`.

        python -c "from pufferlib.environments.kinetix import bench; bench()"
    """
    import jax

    platform = jax_cache.setup(jax).devices()[0].platform
    print(f"kinetix/{name} on {platform}, load {os.getloadavg()[0]:.1f}")

    rate = functools.partial(jax_games.call_rate, steps=steps, repeats=repeats)  # (calls/s, warm-up s)

    line = "  {:>4} levels, {:<22} {:10,.0f} steps/s   (reset + first step {:.1f}s)"
    for n in sizes:
        env = make_env(name, num_envs=n)
        step = functools.partial(_random_step, env, np.random.default_rng(0))
        per_step, warmup = rate(functools.partial(env.reset, seed=0), step)
        env.close()
        print(line.format(n, "one PufferEnv", per_step * n, warmup))
    t = kinetix_jax.Traced(name)
    k = t.k
    peer = k.make_kinetix_env(
        k.ActionType.from_string(ENVS[name][2]),
        k.ObservationType.from_string(ENVS[name][1]),
        lambda key: k.sample_kinetix_level(key, t.engine, t.params, t.static, t.ued),
        t.params,
        t.static,
        auto_reset=True,
    )
    keys = jax.random.split(jax.random.PRNGKey(0), peer_size)
    reset = jax.jit(jax.vmap(peer.reset, in_axes=(0, None)))
    step = jax.jit(jax.vmap(peer.step, in_axes=(0, 0, 0, None)))
    actions = jax.vmap(peer.action_space(t.params).sample)(keys)
    held: dict = {}

    def peer_reset():
        held["state"] = jax.block_until_ready(reset(keys, t.params)[1])

    def peer_step():
        held["state"] = jax.block_until_ready(step(keys, held["state"], actions, t.params)[1])

    per_step, warmup = rate(peer_reset, peer_step)
    print(line.format(peer_size, "Kinetix env.step (peer)", per_step * peer_size, warmup))


def _random_step(env: PufferEnv, rng: np.random.Generator) -> None:
    """One step of `env` with uniform random actions for every level."""
    space = env.single_action_space
    if isinstance(space, gymnasium.spaces.Box):
        actions = rng.uniform(space.low, space.high, (env.num_agents, *space.shape))
    elif isinstance(space, gymnasium.spaces.MultiDiscrete):
        actions = rng.integers(0, space.nvec, (env.num_agents, len(space.nvec)))
    else:
        actions = rng.integers(0, space.n, env.num_agents)
    env.step(actions)
