"""Native Ocean: C environments stepped thousands at a time, exposed as one PufferEnv.

Each env is a C game (`<name>/<name>.h`) plus the generic glue (`env_binding.h`), compiled into the
extension module `pufferlib.ocean.native._<name>` when pufferlib is installed (build_ext.py). A
`NativeEnv` holds `num_envs` instances of the game over slices of one set of buffers (its own, or a
vector backend's shared slice) and steps them all in one call with the GIL released, optionally on
`num_threads` threads. See docs/native.md for the contract and for writing an env.
"""

from __future__ import annotations

import importlib
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np

from pufferlib import EnvironmentSetupError, PufferEnv
from pufferlib.ocean.native.fields import structure

HERE = Path(__file__).parent
FIX = "install gcc and python3-dev, then `pip install -e .` again (or `puffer build-native`)"


def names() -> list[str]:
    """Every native env with a source folder (whether or not it compiled here)."""
    return sorted(p.parent.name for p in HERE.glob("*/binding.c"))


def unavailable(name: str) -> str | None:
    """Why native env `name` cannot be used here (None: it can)."""
    try:
        load(name)
    except EnvironmentSetupError as e:
        return str(e)
    return None


def load(name: str) -> ModuleType:
    """The compiled module of native env `name`; EnvironmentSetupError with the reason and the fix."""
    try:
        return importlib.import_module(f"pufferlib.ocean.native._{name}")
    except ImportError as e:
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        built = HERE / f"_{name}{suffix}"
        why = f"it failed to load ({e})" if built.exists() else "it was not compiled (no C compiler?)"
        raise EnvironmentSetupError(f"native env {name!r} is unavailable: {why}. Fix: {FIX}") from None


class NativeEnv(PufferEnv):
    """`num_envs` instances of a native game as one PufferEnv of `num_envs * agents` agent rows.

    reset()/step() write the buffers in place; the game resets each finished episode itself (the row's
    terminal or truncation is set and its observation is the next episode's first). infos is
    `[{"episode_return": mean, ..., "n": episodes}]` on a step where episodes ended since the last
    report, else []. Game keywords (`kwargs`) are checked by the module (an unknown one is a TypeError).
    """

    def __init__(
        self,
        module: ModuleType | str,
        num_envs: int = 1,
        seed: int | None = 0,
        num_threads: int = 1,
        buf: Any = None,
        render_mode: str = "rgb_array",
        **kwargs: Any,
    ) -> None:
        self.module = load(module) if isinstance(module, str) else module
        self.kwargs = kwargs
        self.render_mode = render_mode
        if render_mode not in ("rgb_array", "ansi"):
            raise ValueError(f"render_mode must be 'rgb_array' or 'ansi', got {render_mode!r}")
        for key, value in (("num_envs", num_envs), ("num_threads", num_threads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} must be a positive int, got {value!r}")
        m = self.module
        self.num_envs = num_envs
        self.agents_per_env = m.num_agents(kwargs)
        self.num_agents = num_envs * self.agents_per_env
        dtype = np.dtype(m.OBS_DTYPE)
        shape = m.obs_shape(kwargs)
        self.single_observation_space = gymnasium.spaces.Box(
            low=np.full(shape, m.OBS_LOW, dtype), high=np.full(shape, m.OBS_HIGH, dtype), dtype=dtype
        )
        sizes = m.ACT_SIZES
        self.single_action_space = (
            gymnasium.spaces.Discrete(sizes[0]) if len(sizes) == 1 else gymnasium.spaces.MultiDiscrete(sizes)
        )
        super().__init__(buf)
        if m.OBS_FIELDS:  # named parts of the row (e.g. an action_mask), found by name as in a Dict
            self.emulated = structure(
                m.OBS_FIELDS, self.single_observation_space, self.single_action_space, m.__name__
            )
        self._handle = None
        self._handle = m.vec_init(
            self.observations,
            self.actions,
            self.rewards,
            self.terminals,
            self.truncations,
            self.masks,
            num_envs,
            self._instance_seed(0 if seed is None else seed),
            num_threads,
            kwargs,
        )

    def _instance_seed(self, seed: int) -> int:
        """Instance i of an env seeded `seed` gets seed * num_envs + i: the envs a vector backend seeds
        seed, seed + 1, ... then share no instance seed."""
        return (seed * self.num_envs) % 2**64

    def reset(self, seed: int | None = None):
        """Start every instance anew; with `seed`, instance i is reseeded with seed * num_envs + i."""
        self.module.vec_reset(self._handle, None if seed is None else self._instance_seed(seed))
        self.module.vec_log(self._handle)  # episodes cut short by a reset are not reported
        return self.observations, []

    def step(self, actions):
        if actions is not self.actions:
            self.actions[:] = self._checked(actions)
        ended = self.module.vec_step(self._handle)
        infos = [self.module.vec_log(self._handle)] if ended else []
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def _checked(self, actions: Any) -> np.ndarray:
        """The caller's actions in the buffer's shape, checked as given (real, integral, in range)
        before the cast to int32 that would wrap 2**32 + 2 to 2, truncate 2.9 to 2 or drop an
        imaginary part: a ValueError in the C check's words names the first bad value. int32 and
        bool go straight to the C check, which sees them unchanged."""
        a = np.asarray(actions)
        name = self.module.__name__.rpartition(".")[2]
        if a.size != self.actions.size:
            raise ValueError(f"{name}: {a.size} actions for a buffer of shape {self.actions.shape}")
        a = a.reshape(self.actions.shape)
        if a.dtype == np.int32 or a.dtype.kind == "b":
            return a
        if a.dtype.kind not in "iuf":
            raise ValueError(f"{name}: actions must be real integers, got dtype {a.dtype}")
        sizes = np.asarray(self.module.ACT_SIZES)
        if a.dtype.kind in "iu" and a.size and a.min() >= 0 and a.max() < sizes.min():
            return a  # the trainer's int64 actions: two reductions, no temporaries
        with np.errstate(invalid="ignore"):
            integral = np.isfinite(a) & (np.mod(a, 1) == 0)
            bad = ~integral | (a < 0) | (a >= (sizes if a.ndim > 1 else sizes[0]))
        if not bad.any():
            return a
        where = tuple(np.argwhere(bad)[0])
        j = where[-1] if a.ndim > 1 else 0
        rule = "is not an integer" if not integral[where] else f"is out of range 0..{sizes[j] - 1}"
        branch = f", branch {j}," if a.ndim > 1 else ""
        raise ValueError(f"{name}: action {a[where].item()!r} of agent row {where[0]}{branch} {rule}")

    def render(self, index: int = 0):
        """Instance `index` as an RGB frame (H, W, 3) uint8 (render_mode "rgb_array") or ANSI text."""
        if self.render_mode == "ansi":
            return self.module.vec_ansi(self._handle, index)
        return self.module.vec_render(self._handle, index)

    def close(self) -> None:
        if self._handle is not None:
            self.module.vec_close(self._handle)

    def __del__(self) -> None:  # the capsule frees the envs too; this only drops the buffers sooner
        if globals().get("sys") is not None and not sys.is_finalizing():
            handle = getattr(self, "_handle", None)
            if handle is not None:
                self.module.vec_close(handle)
