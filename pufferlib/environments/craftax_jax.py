"""The Craftax program: one jitted reset and one jitted, vmapped step for `num_envs` games.

Self-contained on purpose (it imports jax and craftax, nothing of pufferlib): the envs image stage
runs this file (`python craftax_jax.py`, see warm()) to compile the registered programs into a
persistent JAX compilation cache, and the craftax/ bindings then load those executables instead of
compiling them (35-50 s of XLA on a quiet CPU core, minutes on a loaded one, in every fresh
container, matrix cell, training run and vector worker's child otherwise).

JAX keys its cache by the program (debug info stripped, so the file's path does not matter), the
compile options and the backend. The compile options would name the cache's own folder (XLA's GPU
autotune cache, inside it), which differs between the image's folder and a user's: use_cache() leaves
that cache off, here and in the craftax family alike. The key does not say which CPU, while XLA:CPU
compiles for the CPU it runs on: so the image's cache is kept per CPU (`cpu_key()`: the machine and its
CPU flags), and a process uses it only on the same kind of CPU; elsewhere it compiles as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

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
# Where the image keeps its build-time cache (one folder per cpu_key()); Dockerfile.envs sets it.
IMAGE_CACHE_ENV = "PUFFERTANK_JAX_CACHE"


def default_resets(num_envs: int) -> int:
    """Fresh worlds generated per step where games ended: ceil(num_envs / 16), as Craftax's own."""
    return -(-int(num_envs) // 16)


# The programs the image compiles at build time: the registered ids at the default size.
WARM = tuple((name, DEFAULT_NUM_ENVS, default_resets(DEFAULT_NUM_ENVS)) for name in REGISTERED)


def cpu_key() -> str:
    """The machine and its CPU's feature flags, hashed: XLA:CPU code runs only where these match."""
    flags = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1] for line in f if line.startswith("flags")), "")
    text = f"{platform.machine()} {' '.join(sorted(flags.split()))}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def use_cache(jax: Any, path: Path) -> None:
    """Point JAX's persistent compilation cache at `path`, with keys that do not depend on the path: XLA's
    own caches (a GPU autotune cache in a folder under `path`, whose name would enter the compile options
    and so the key) stay off; JAX runs on the CPU here."""
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_enable_xla_caches", "none")


def image_cache() -> Path | None:
    """The image's warm cache for this CPU, if the image has one."""
    root = os.environ.get(IMAGE_CACHE_ENV)
    path = Path(root) / cpu_key() if root else None
    return path if path is not None and path.is_dir() else None


def seed_cache(target: Path) -> int:
    """Link the image's compiled executables for this CPU into `target` (a writable cache directory).

    The links keep the image's files read-only and cost nothing to make; JAX reads through them and
    writes what it compiles itself beside them. Returns how many entries were linked."""
    source = image_cache()
    if source is None:
        return 0
    target.mkdir(parents=True, exist_ok=True)
    linked = 0
    for entry in source.glob("*-cache"):
        link = target / entry.name
        if link.exists() or link.is_symlink():
            continue
        with contextlib.suppress(FileExistsError):
            link.symlink_to(entry)
            linked += 1
        atime = target / (entry.name.removesuffix("-cache") + "-atime")  # JAX's LRU bookkeeping
        if not atime.exists():
            atime.write_bytes(time.time_ns().to_bytes(8, "little"))
    return linked


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
    """Compile WARM into $PUFFERTANK_JAX_CACHE/<cpu key> (what Dockerfile.envs runs, as the image's user)."""
    root = os.environ.get(IMAGE_CACHE_ENV)
    if not root:
        print(f"craftax_jax: {IMAGE_CACHE_ENV} is not set (Dockerfile.envs sets it)", file=sys.stderr)
        return 2
    cache = Path(root) / cpu_key()
    cache.mkdir(parents=True, exist_ok=True)

    import jax
    import numpy as np

    use_cache(jax, cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # keep the small ones too
    for name, num_envs, resets in WARM:
        start = time.perf_counter()
        reset, step, _, _, _ = program(name, num_envs, resets)
        key, state, _ = reset(jax.random.PRNGKey(0))
        for _ in range(2):  # a second step would compile again if the first one's types drifted
            key, state, *_ = step(key, state, np.zeros(num_envs, np.int32))
        jax.block_until_ready(state)
        print(f"craftax_jax: {name} x {num_envs} compiled in {time.perf_counter() - start:.1f} s", flush=True)
    entries = list(cache.glob("*-cache"))
    if not entries:
        print(f"craftax_jax: nothing was written to {cache}", file=sys.stderr)
        return 1
    size = sum(entry.stat().st_size for entry in entries) / 1e6
    print(f"craftax_jax: {len(entries)} executables ({size:.1f} MB) in {cache}, jax {jax.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(warm())
