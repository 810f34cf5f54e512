"""Make a built env (`puffer build-native PATH`) by its contract: the 3.0 env's own Python class over our
`binding` module, a Pl4Env over a 4.0 binding, or a NativeEnv over one written to our own API."""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import inspect
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pufferlib import EnvironmentSetupError, PufferEnv
from pufferlib.ocean.contracts import Manifest, built, home, screen


def manifest(name: str, root: Path | None = None) -> tuple[Manifest, Path]:
    root = home() if root is None else root
    found = built(root)
    if name not in found:
        raise EnvironmentSetupError(
            f"ocean/{name} is not built under {root}: build its folder with `puffer build-native PATH`"
        )
    return found[name], root / name


def _module(qualified: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(qualified, path)
    if spec is None or spec.loader is None:
        raise EnvironmentSetupError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(qualified, None)
        raise
    return module


@functools.cache
def pl3_class(folder: Path) -> type:
    """The PufferEnv class of a built 3.0 env (its actions checked), its `<name>.py` importing our `binding`
    as upstream's does.

    `from pufferlib.ocean.<name> import binding` must find the module: it is placed in sys.modules as
    `pufferlib.ocean.<name>.binding`, under a package made for it (or, where pufferlib.ocean has a module of
    that name, found there by Python's fallback to sys.modules for `from X import Y`).
    """
    m = Manifest.read(folder)
    package = f"pufferlib.ocean.{m.name}"
    try:
        importlib.import_module(package)
    except ImportError:
        pkg = types.ModuleType(package)
        pkg.__path__ = [str(folder / "src")]
        sys.modules[package] = pkg
    _module(f"{package}.binding", folder / m.module)
    env_module = _module(f"{package}.{m.name}", folder / "src" / f"{m.name}.py")
    classes = [
        c
        for c in vars(env_module).values()
        if inspect.isclass(c) and issubclass(c, PufferEnv) and c.__module__ == env_module.__name__
    ]
    if not classes:
        raise EnvironmentSetupError(f"{m.name}.py defines no pufferlib.PufferEnv subclass")
    plain = m.name.replace("_", "").lower()
    classes.sort(key=lambda c: (not c.__name__.lower().startswith(plain), c.__name__))
    resources = folder.parent if (folder.parent / "resources").is_dir() else None
    return checked(classes[0], resources)


def construct(cls: type, **kwargs: Any) -> PufferEnv:
    """cls(**kwargs) with the keywords its signature takes (num_envs, buf, seed are passed only if it does);
    a game keyword it does not take is a TypeError naming the ones it does."""
    params = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for optional in ("num_envs", "buf", "seed"):
        if optional not in params and not takes_any:
            kwargs.pop(optional, None)
    unknown = [k for k in kwargs if k not in params and not takes_any]
    if unknown:
        valid = [p for p in params if p not in ("self", "buf")]
        raise TypeError(f"{cls.__name__} takes no {', '.join(unknown)}; it takes {', '.join(valid)}")
    return cls(**kwargs)


def check_actions(space: Any, actions: Any) -> None:
    """ValueError unless `actions` are valid in `space`: a 3.0 env indexes its tables with them unchecked, so
    an action out of range (or not integral, or not finite) must not reach its C."""
    a = np.asarray(actions)
    nvec = getattr(space, "nvec", None)
    high = getattr(space, "n", None) if nvec is None else nvec
    if high is None:
        if not np.isfinite(a).all():
            raise ValueError(f"actions must be finite numbers in {space}")
        return
    if a.dtype.kind not in "iub" and not (a.dtype.kind == "f" and np.array_equal(a, np.floor(a))):
        raise ValueError(f"actions must be integers in {space}, got dtype {a.dtype}")
    if a.size and (a.min() < 0 or (a.reshape(-1, *np.shape(high)) >= high).any()):
        raise ValueError(f"an action is outside {space}: min {a.min()}, max {a.max()}")


def _bounds_in_c(env: Any, cls: type) -> bool:
    """Hand an integer action space's bounds to our header, so that vec_step checks each action in C (a loop
    over the int32 rows, ~1 µs per 1024: check_actions costs ~7 µs a step); False where it cannot (a float
    space, envs joined by vectorize, a class without `c_envs`)."""
    space = env.single_action_space
    high = getattr(space, "nvec", getattr(space, "n", None))
    binding = vars(sys.modules[cls.__module__]).get("binding")
    handle = getattr(env, "c_envs", None)
    if high is None or binding is None or handle is None or not hasattr(binding, "puffertank_action_bounds"):
        return False
    try:
        binding.puffertank_action_bounds(handle, np.asarray(high, dtype=np.uint32).reshape(-1))
    except (ValueError, TypeError, OverflowError):
        return False
    return True


@contextlib.contextmanager
def working_directory(folder: Path | None) -> Iterator[None]:
    """`folder` as the working directory inside the block (None: unchanged), then back."""
    if folder is None:
        yield
        return
    back = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(back)


# 3.0's c_render opens a raylib window; without a display GLFW fails and raylib goes on to crash the process
RENDER_NEEDS_A_DISPLAY = (
    "{name} draws with raylib into a window (PufferLib 3.0's c_render), and there is no display here "
    "(DISPLAY is unset): it has no ANSI frame. Record it instead (`puffer eval ENV --video out.gif`: made "
    "with render_mode='rgb_array', render() returns frames drawn on a private Xvfb), or run under an X server"
)


def checked(cls: type, resources: Path | None = None) -> type:
    """`cls` with its actions checked before any env steps (a subclass: no reference cycle holds an env's
    buffers): in C when its bounds could be handed over and the actions come in the buffer's own dtype (a
    cast first could wrap an out-of-range action into range), else by check_actions.

    And reset(seed=None) as every binding of ours takes it: a fresh start, drawn from the last seed given (to
    reset, else to the constructor). 3.0.0's classes hand None to vec_reset, which the contract refuses
    ("seed must be an int": 18 of the 21 then available), or reset with seed 0 (cartpole, snake, tripletriad:
    every episode a gymnasium or SB3 user starts with reset() would begin the same).

    And `resources`, the folder holding the sdist's `resources/` (the catalog's): the working directory
    while the env is made and drawn, as upstream's run from its repository, where its C reads them
    (moba's map, the renderers' sprites) by relative paths.

    And render(): made with render_mode "rgb_array", the frame its c_render drew on a private Xvfb
    (screen.py); else its window,
    refused, saying why, where there is no display: 3.0's c_render would crash the process (`puffer play`
    with the catalog registered did, listing what it can play)."""

    takes_mode = "render_mode" in inspect.signature(cls.__init__).parameters

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        mode = kwargs.get("render_mode") if takes_mode else kwargs.pop("render_mode", None)
        with working_directory(resources):
            cls.__init__(self, *args, **kwargs)
        self._recorder = screen.Recorder(cls.__name__) if mode == "rgb_array" else None
        self._checked_in_c = _bounds_in_c(self, cls)
        self._reset_seeds = np.random.default_rng(kwargs.get("seed", 0))

    def reset(self: Any, seed: int | None = None):
        if seed is None:
            seed = int(self._reset_seeds.integers(2**31))
        else:
            self._reset_seeds = np.random.default_rng(seed)
        return cls.reset(self, seed)

    def step(self: Any, actions: Any):
        if not (
            self._checked_in_c and getattr(actions, "dtype", None) == getattr(self, "actions", actions).dtype
        ):
            check_actions(self.single_action_space, actions)
        return cls.step(self, actions)

    def render(self: Any, *args: Any, **kwargs: Any):
        def draw() -> Any:
            with working_directory(resources):
                return cls.render(self, *args, **kwargs)

        if self._recorder is not None:
            return self._recorder.frame(draw)
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            raise RuntimeError(RENDER_NEEDS_A_DISPLAY.format(name=cls.__name__))
        return draw()

    def close(self: Any) -> None:
        if getattr(self, "_recorder", None) is not None:  # its window closes too; raylib says so on stdout
            return self._recorder.quietly(lambda: cls.close(self))
        return cls.close(self)

    namespace = {
        "__init__": __init__,
        "reset": reset,
        "step": step,
        "render": render,
        "close": close,
        "__module__": cls.__module__,
        "__doc__": cls.__doc__,
    }
    return type(cls.__name__, (cls,), namespace)


@functools.cache
def binding_module(folder: Path) -> types.ModuleType:
    m = Manifest.read(folder)
    qualified = f"pufferlib.ocean.native.{m.module.split('.')[0]}" if m.contract == "puffertank" else None
    return _module(qualified or f"puffertank_pl4.{m.name}.binding", folder / m.module)


def make(
    name: str,
    buf: Any = None,
    seed: int = 0,
    num_envs: int = 1,
    num_threads: int = 1,
    root: Path | None = None,
    **kwargs: Any,
) -> PufferEnv:
    """`num_envs` instances of built env `name` as one PufferEnv (kwargs go to the game)."""
    m, folder = manifest(name, root)
    if m.contract == "pufferlib-3.0":
        return construct(pl3_class(folder), num_envs=num_envs, buf=buf, seed=seed, **kwargs)
    module = binding_module(folder)
    if m.contract == "pufferlib-4.0":
        from pufferlib.ocean.contracts.pl4env import Pl4Env

        return Pl4Env(module, num_envs=num_envs, buf=buf, seed=seed, **kwargs)
    from pufferlib.ocean.native import NativeEnv

    return NativeEnv(module, num_envs=num_envs, seed=seed, num_threads=num_threads, buf=buf, **kwargs)
