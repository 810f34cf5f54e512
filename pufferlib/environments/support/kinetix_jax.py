"""The Kinetix programs: `num_envs` levels of Kinetix's random-level distribution, stepped by one JAX call.

Self-contained on purpose (it imports jax, kinetix and jax_cache.py, nothing else of pufferlib): the envs
image stage runs this file (`python kinetix_jax.py`, see warm()) to build the registered programs into
the image, and the kinetix/ bindings then load them.

Three programs per env, functions of flat arrays (a level is Kinetix's EnvState, flattened):
- `sample(key) -> (key, pool)`: `resets` fresh levels from `sample_kinetix_level`, the distribution
  Kinetix's general agents train on; the same program for every id of one size;
- `observe(levels) -> obs`: the observations of `num_envs` levels (a reset);
- `step(key, levels, actions, pool) -> (key, levels, obs, reward, terminal, truncated, solved)`: one
  step of every level (Kinetix's `step_env`, vmapped); rows whose episode ended take a level of the pool
  inside the same call (the i-th ended row the (i mod resets)-th level), with its observation.
A reset draws ceil(num_envs / resets) pools; after a step where an episode ended, the env draws the next.

Why exported programs: tracing the level sampler takes ~25 s of Python (2.6 MB of HLO), which JAX's
persistent compilation cache cannot save: its key is computed from the traced program. So each program
is traced once and kept with `jax.export` (StableHLO, the same on every CPU) in user_store()
(~/.cache/pufferlib/kinetix, or $PUFFERLIB_KINETIX_PROGRAMS) and, for WARM (the registered ids at 1 and
32 levels), in the image ($PUFFERTANK_JAX_CACHE/kinetix). A process that finds its programs there compiles
them (from JAX's compilation cache: about a second each) and never imports kinetix. A stored program is
named by its kind, its parameters and a digest of this file and the jax, jaxlib and kinetix-env
versions, so an upgrade or an edit here builds it anew.

Why load_kinetix(): `import kinetix.environment` runs the package's __init__, which imports
kinetix.environment.ued.ued and through it kinetix.util, Kinetix's training utilities (wandb, omegaconf,
distrax and so tfp-nightly, grain, zarr, ...). The env's own modules need none of it, so load_kinetix()
registers `kinetix.environment` as a package without running its __init__ and imports just those.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

try:
    from pufferlib.environments.support import jax_cache
except ImportError:  # at image build, run as a script beside jax_cache.py (Dockerfile.envs)
    import jax_cache  # type: ignore[no-redef]

SIZES = {"S": "s", "M": "m", "L": "l"}  # Kinetix's env sizes: 5, 6 or 12 polygons; 2, 3 or 4 circles; ...
OBSERVATIONS = {"SymbolicFlat": "symbolic_flat", "Pixels": "pixels"}
ACTIONS = {"MultiDiscrete": "multi_discrete", "Continuous": "continuous", "Discrete": "discrete"}
ENVS = {  # id -> (size, observation type, action type), Kinetix's own names for each
    f"Kinetix-{size}-{obs}-{act}": (s, o, a)
    for size, s in SIZES.items()
    for obs, o in OBSERVATIONS.items()
    for act, a in ACTIONS.items()
}
# The bindings the integration matrix exercises (the others are made on demand). An env gets one level unless
# asked (as every binding: a single-agent env for the smoke check and to_gymnasium); `puffer train` steps 32
# (TRAIN_NUM_ENVS: [env] num_envs of pufferlib/train/configs/kinetix.toml, checked by test_env_kinetix.py).
# The image holds the registered ids' programs at both sizes (WARM).
REGISTERED = ("Kinetix-S-SymbolicFlat-MultiDiscrete", "Kinetix-S-Pixels-MultiDiscrete")
DEFAULT_NUM_ENVS = 1
TRAIN_NUM_ENVS = 32
# Kinetix binds 4 motor and 2 thruster actions in every size (StaticEnvParams' num_motor_bindings and
# num_thruster_bindings): a motor turns backward, off or forward; a thruster fires or not.
MOTORS, THRUSTERS = 4, 2
STORE_ENV = "PUFFERLIB_KINETIX_PROGRAMS"  # where a process keeps the programs it traced; default below
IMAGE_STORE = "kinetix"  # the folder under $PUFFERTANK_JAX_CACHE (exports are the same on every CPU)


def default_resets(num_envs: int) -> int:
    """Fresh levels drawn after a step where episodes ended: ceil(num_envs / 32). Up to 32 levels share one
    pool level, and so one level sampler (the costly program to build); at 32 random S levels about 2 % of
    steps end two episodes at once, which then start on the same level (their own keys from there on)."""
    return -(-int(num_envs) // 32)


# The programs the image builds: the registered ids at the default and the training size.
WARM = tuple((name, n) for name in REGISTERED for n in (DEFAULT_NUM_ENVS, TRAIN_NUM_ENVS))


def action_space(name: str) -> tuple[str, Any]:
    """(kind, argument) of an id's action space: ("multi_discrete", nvec), ("box", size) in [-1, 1] or
    ("discrete", n); Kinetix's MultiDiscreteActions, ContinuousActions and DiscreteActions."""
    kind = ENVS[name][2]
    if kind == "multi_discrete":
        return kind, (3,) * MOTORS + (2,) * THRUSTERS
    if kind == "continuous":
        return "box", MOTORS + THRUSTERS
    return kind, 2 * MOTORS + 1 + THRUSTERS  # a motor forward or backward, no-op, a thruster


def pixels_twin(name: str) -> str:
    """The Pixels id of the same size and actions: its observation is how render() draws `name`."""
    size, _, action = ENVS[name]
    return next(n for n, (s, o, a) in ENVS.items() if (s, o, a) == (size, "pixels", action))


def load_kinetix() -> types.SimpleNamespace:
    """Kinetix's env modules, without the package __init__ that imports its training stack."""
    import kinetix

    package = "kinetix.environment"
    if package not in sys.modules:
        hollow = types.ModuleType(
            package, "kinetix.environment, its __init__ not run (pufferlib kinetix_jax)"
        )
        hollow.__path__ = [os.path.join(kinetix.__path__[0], "environment")]
        sys.modules[package] = hollow
    from jax2d import engine
    from kinetix.environment import env, env_state, spaces, utils
    from kinetix.environment.ued import distributions, ued_state

    return types.SimpleNamespace(
        PhysicsEngine=engine.PhysicsEngine,
        make_kinetix_env=env.make_kinetix_env,
        EnvParams=env_state.EnvParams,
        ActionType=spaces.ActionType,
        ObservationType=spaces.ObservationType,
        sample_kinetix_level=distributions.sample_kinetix_level,
        UEDParams=ued_state.UEDParams,
        create_empty_env=utils.create_empty_env,
        static_env_params_from_size=utils.static_env_params_from_size,
    )


class Traced:
    """What tracing a program needs: Kinetix's env for one id, built on first use (imports kinetix)."""

    def __init__(self, name: str) -> None:
        import jax

        size, obs, act = ENVS[name]
        self.k = load_kinetix()
        self.static = self.k.static_env_params_from_size(size)
        self.params = self.k.EnvParams()
        self.engine = self.k.PhysicsEngine(self.static)
        self.ued = self.k.UEDParams()
        self.pixels = obs == "pixels"
        self.env = self.k.make_kinetix_env(
            self.k.ActionType.from_string(act),
            self.k.ObservationType.from_string(obs),
            None,
            self.params,
            self.static,
            auto_reset=False,
        )
        self.treedef = jax.tree.structure(self.k.create_empty_env(self.static))

    def observe(self, obs: Any) -> Any:
        """Pixels as an upright uint8 image: Kinetix's [0, 1] image times 255, turned from its (x, y) layout
        with y up to rows top to bottom, as its own videos turn it; its `global_info`, the gravity, is left
        out (random levels keep Earth's). Symbolic observations as they are. Batched: obs of many levels."""
        import jax.numpy as jnp

        if not self.pixels:
            return obs
        return jnp.round(obs.image * 255).astype(jnp.uint8).transpose(0, 2, 1, 3)[:, ::-1]


def _sample_fn(t: Traced, resets: int):
    import jax
    import jax.numpy as jnp

    def sample(key):
        key, sub = jax.random.split(key)
        levels = jax.vmap(lambda k: t.k.sample_kinetix_level(k, t.engine, t.params, t.static, t.ued))(
            jax.random.split(sub, resets)
        )
        # World generation leaves some fields weakly typed: make them strong, as step() returns them.
        return key, tuple(jnp.asarray(x, dtype=x.dtype) for x in jax.tree.leaves(levels))

    return sample


def _observe_fn(t: Traced):
    import jax

    def observe(levels):
        return t.observe(jax.vmap(t.env.get_obs)(jax.tree.unflatten(t.treedef, levels)))

    return observe


def _step_fn(t: Traced, num_envs: int, resets: int):
    import jax
    import jax.numpy as jnp

    def step(key, levels, actions, pool):
        key, sub = jax.random.split(key)
        state = jax.tree.unflatten(t.treedef, levels)
        obs, state, reward, done, info = jax.vmap(t.env.step_env, in_axes=(0, 0, 0, None))(
            jax.random.split(sub, num_envs), state, actions, t.params
        )
        obs = t.observe(obs)
        solved = info["GoalR"] & done
        truncated = done & (state.timestep >= t.params.max_timesteps) & ~solved
        reward = jnp.nan_to_num(reward.astype(jnp.float32), nan=0.0, posinf=0.0, neginf=0.0)

        def restart(carry):  # ended rows take levels of the pool, the i-th one the (i mod resets)-th
            state, obs = carry
            fresh = jax.tree.unflatten(t.treedef, pool)
            fresh_obs = t.observe(jax.vmap(t.env.get_obs)(fresh))
            pick = jnp.where(done, (jnp.cumsum(done) - 1) % resets, 0)

            def where(new, old):
                return jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new[pick], old)

            return jax.tree.map(where, fresh, state), where(fresh_obs, obs)

        state, obs = jax.lax.cond(done.any(), restart, lambda carry: carry, (state, obs))
        return key, tuple(jax.tree.leaves(state)), obs, reward, done & ~truncated, truncated, solved

    return step


def _digest() -> str:
    """This file and the versions that shape a program: a stored program made by others is not used."""
    versions = [importlib.metadata.version(d) for d in ("jax", "jaxlib", "kinetix-env")]
    text = Path(__file__).read_bytes() + " ".join(versions).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def user_store() -> Path:
    """The user's programs: $PUFFERLIB_KINETIX_PROGRAMS, else ~/.cache/pufferlib/kinetix."""
    return Path(os.environ.get(STORE_ENV) or Path.home() / ".cache" / "pufferlib" / "kinetix")


def _stores() -> list[Path]:
    """Where programs are looked for, first to last: the user's, then the image's."""
    stores = [user_store()]
    root = os.environ.get(jax_cache.IMAGE_CACHE_ENV)
    if root:
        stores.append(Path(root) / IMAGE_STORE)
    return stores


def _write(path: Path, data: bytes) -> None:
    """Atomically: another process reading the same program sees all of it or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # readable by every user of the image, as JAX's own cache files
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _program(file: str, build, specs: tuple, store: Path | None = None):
    """The exported program named `file`: loaded from a store, else traced by `build()` and exported
    with arguments `specs` into `store` (default: the user's)."""
    from jax import export

    for folder in _stores():
        path = folder / file
        if path.is_file():
            with contextlib.suppress(Exception):  # unreadable or from an incompatible jax: build it anew
                return export.deserialize(bytearray(path.read_bytes()))
    import jax

    exported = export.export(jax.jit(build()))(*specs)
    _write((store or user_store()) / file, exported.serialize())
    return exported


class Programs:
    """The three programs of one id at one size: `sample`, `observe`, `step` (each `exported.call` under
    jax.jit, whose C++ dispatch passes the ~130 arrays of a step's levels and pool in a fraction of the
    time `call` alone takes in Python: 2x the steps/s of 32 S levels), the
    observation's shape and dtype, and the action space (see action_space())."""

    def __init__(self, name: str, num_envs: int, resets: int, store: Path | None = None) -> None:
        import jax
        import numpy as np

        self.name, self.num_envs, self.resets = name, int(num_envs), int(resets)
        size = ENVS[name][0]
        self._digest = digest = _digest()
        self._store = store
        self._frame = None
        traced: list[Traced] = []

        def env() -> Traced:  # imported and built only when a program must be traced
            if not traced:
                traced.append(Traced(name))
            return traced[0]

        key = jax.ShapeDtypeStruct((2,), jax.numpy.uint32)
        sample = _program(
            f"sample-{size}-r{resets}-{digest}", lambda: _sample_fn(env(), resets), (key,), store
        )
        self._pool = pool = tuple(sample.out_avals[1:])
        levels = tuple(jax.ShapeDtypeStruct((num_envs, *a.shape[1:]), a.dtype) for a in pool)
        observe = _program(
            f"observe-{name}-n{num_envs}-{digest}", lambda: _observe_fn(env()), (levels,), store
        )
        kind, arg = action_space(name)
        if kind == "multi_discrete":
            act = jax.ShapeDtypeStruct((num_envs, len(arg)), np.int32)
        elif kind == "box":
            act = jax.ShapeDtypeStruct((num_envs, arg), np.float32)
        else:
            act = jax.ShapeDtypeStruct((num_envs,), np.int32)
        step = _program(
            f"step-{name}-n{num_envs}-r{resets}-{digest}",
            lambda: _step_fn(env(), num_envs, resets),
            (key, levels, act, pool),
            store,
        )
        self.sample, self.observe, self.step = (jax.jit(e.call) for e in (sample, observe, step))
        obs = observe.out_avals[0]
        self.obs_shape, self.obs_dtype = tuple(obs.shape[1:]), str(obs.dtype)
        self.action = (kind, arg)
        self.action_shape, self.action_dtype = act.shape, act.dtype
        self.traced = bool(traced)  # whether this process traced (and stored) any of them

    def frame(self, levels: tuple) -> Any:
        """Level 0 of `levels` as the Pixels observation draws it (uint8 RGB), whatever this id observes:
        the Pixels twin's `observe` for one level, loaded (or traced and stored) on first use."""
        if self._frame is None:
            import jax

            twin = pixels_twin(self.name)
            one = tuple(jax.ShapeDtypeStruct((1, *a.shape[1:]), a.dtype) for a in self._pool)
            file = f"observe-{twin}-n1-{self._digest}"
            self._frame = jax.jit(_program(file, lambda: _observe_fn(Traced(twin)), (one,), self._store).call)
        return self._frame(tuple(leaf[:1] for leaf in levels))[0]

    def levels(self, key: Any) -> tuple[Any, tuple]:
        """(key, num_envs fresh levels): ceil(num_envs / resets) pools, joined here (numpy, no program)."""
        import numpy as np

        pools = []
        for _ in range(-(-self.num_envs // self.resets)):
            key, pool = self.sample(key)
            pools.append(pool)
        return key, tuple(np.concatenate(leaf)[: self.num_envs] for leaf in zip(*pools, strict=True))


def warm() -> int:
    """Build WARM into the image (what Dockerfile.envs runs, as the image's user): the exported programs in
    $PUFFERTANK_JAX_CACHE/kinetix, their executables in JAX's cache for this CPU."""
    import jax
    import numpy as np

    try:
        cache = jax_cache.build_cache(jax)
    except KeyError as e:
        print(f"kinetix_jax: {e.args[0]}", file=sys.stderr)
        return 2
    store = Path(os.environ[jax_cache.IMAGE_CACHE_ENV]) / IMAGE_STORE
    for name, num_envs in WARM:
        start = time.perf_counter()
        programs = Programs(name, num_envs, default_resets(num_envs), store=store)
        key, levels = programs.levels(jax.random.PRNGKey(0))
        key, pool = programs.sample(key)
        programs.observe(levels)
        programs.frame(levels)  # render(): `puffer eval --video` and train.video_interval
        actions = np.zeros(programs.action_shape, programs.action_dtype)
        for _ in range(2):
            key, levels, *_ = programs.step(key, levels, actions, pool)
        jax.block_until_ready(levels)
        print(
            f"kinetix_jax: {name} x {num_envs} built in {time.perf_counter() - start:.1f} s",
            flush=True,
        )
    return jax_cache.report("kinetix_jax", cache, jax)


if __name__ == "__main__":
    sys.exit(warm())
