"""The Craftax program: one jitted reset and one jitted, vmapped step for `num_envs` games.

Self-contained on purpose (it imports jax, craftax and jax_cache.py, nothing else of pufferlib): the envs
image stage runs this file (`python craftax_jax.py`, see warm()) to compile the registered programs into a
persistent JAX compilation cache, and the craftax/ bindings then load those executables instead of
compiling them (35-50 s of XLA on a quiet CPU core, minutes on a loaded one, in every fresh
container, matrix cell, training run and vector worker's child otherwise).

How the image's cache is kept, and found per CPU: jax_cache.py.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time

try:
    from pufferlib.environments.support import jax_cache
except ImportError:  # at image build, run as a script beside jax_cache.py (Dockerfile.envs)
    import jax_cache  # type: ignore[no-redef]

ENVS = {  # id -> (classic, pixels)
    "Craftax-Classic-Symbolic-v1": (True, False),
    "Craftax-Classic-Pixels-v1": (True, True),
    "Craftax-Symbolic-v1": (False, False),
    "Craftax-Pixels-v1": (False, True),
}
# The bindings the integration matrix exercises (the others are made on demand), and the number of games
# an env gets unless asked: the smoke check and `puffer train`'s default config make it so.
REGISTERED = ("Craftax-Classic-Symbolic-v1",)
DEFAULT_NUM_ENVS = 1


def default_resets(num_envs: int) -> int:
    """Fresh worlds generated per step where games ended: ceil(num_envs / 16), as Craftax's own."""
    return -(-int(num_envs) // 16)


# The programs the image compiles at build time: the registered ids at the default size.
WARM = tuple((name, DEFAULT_NUM_ENVS, default_resets(DEFAULT_NUM_ENVS)) for name in REGISTERED)


def program(name: str, num_envs: int, resets: int):
    """(jitted reset, jitted step, observation shape, number of actions, achievement names).

    reset(key) -> (key, state, obs); step(key, state, actions) -> (key, state, obs, reward, terminal,
    truncated, achievements). Games that end restart inside the same call; fresh worlds are generated
    only on steps where a game ended (`lax.cond`), `resets` of them."""
    import jax

    jnp = jax.numpy
    with contextlib.redirect_stdout(io.StringIO()):  # "Loading Craftax textures from cache."
        from craftax.craftax_env import make_craftax_env_from_name

        env = make_craftax_env_from_name(name, auto_reset=False)
        if ENVS[name][0]:
            from craftax.craftax_classic.constants import Achievement
        else:
            from craftax.craftax.constants import Achievement
    params = env.default_params
    pixels = ENVS[name][1]

    def observe(obs):
        return jnp.round(obs * 255).astype(jnp.uint8) if pixels else obs

    def reset_worlds(key, count):
        obs, state = jax.vmap(env.reset_env, in_axes=(0, None))(jax.random.split(key, count), params)
        return observe(obs), state

    def reset(key):
        key, sub = jax.random.split(key)
        obs, state = reset_worlds(sub, num_envs)
        # World generation leaves some fields weakly typed, which step() returns strongly typed: make
        # them strong here, or the second step() would compile the whole step again.
        state = jax.tree.map(lambda x: jnp.asarray(x, dtype=x.dtype), state)
        return key, state, obs

    def step(key, state, actions):
        key, k_step, k_reset = jax.random.split(key, 3)
        keys = jax.random.split(k_step, num_envs)
        obs, state, reward, done, _ = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))(
            keys, state, actions, params
        )
        obs = observe(obs)
        timeout = state.timestep >= params.max_timesteps
        truncated = done & timeout & (state.player_health > 0)
        achieved = state.achievements

        def restart(carry):  # done rows take fresh worlds, the i-th done row the (i mod resets)-th world
            state, obs = carry
            new_obs, new_state = reset_worlds(k_reset, resets)
            pick = jnp.where(done, (jnp.cumsum(done) - 1) % resets, 0)

            def where(new, old):
                return jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new[pick], old)

            return jax.tree.map(where, new_state, state), where(new_obs, obs)

        state, obs = jax.lax.cond(done.any(), restart, lambda carry: carry, (state, obs))
        return key, state, obs, reward, done & ~truncated, truncated, achieved

    space = env.observation_space(params)
    names = [a.name.lower() for a in Achievement]
    return jax.jit(reset), jax.jit(step), tuple(space.shape), int(env.num_actions), names


def warm() -> int:
    """Compile WARM into the image's cache for this CPU (what Dockerfile.envs runs, as the image's user)."""
    import jax
    import numpy as np

    try:
        cache = jax_cache.build_cache(jax)
    except KeyError as e:
        print(f"craftax_jax: {e.args[0]}", file=sys.stderr)
        return 2
    for name, num_envs, resets in WARM:
        start = time.perf_counter()
        reset, step, _, _, _ = program(name, num_envs, resets)
        key, state, _ = reset(jax.random.PRNGKey(0))
        for _ in range(2):  # a second step would compile again if the first one's types drifted
            key, state, *_ = step(key, state, np.zeros(num_envs, np.int32))
        jax.block_until_ready(state)
        print(f"craftax_jax: {name} x {num_envs} compiled in {time.perf_counter() - start:.1f} s", flush=True)
    return jax_cache.report("craftax_jax", cache, jax)


if __name__ == "__main__":
    sys.exit(warm())
