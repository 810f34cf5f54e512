"""Ocean bindings: the sanity suite (ocean/<env>) and the benchmark env (ocean/performance), in Python.

ocean/squared is the native C env (ocean_native.py); its Python twin here is ocean/squared_py.
"""

from __future__ import annotations

import sys
from typing import Any

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv, PettingZooPufferEnv
from pufferlib.environments import ocean_native
from pufferlib.environments.registry import Binding, SmokeSpec, family_env_creator, register

Policy = "pufferlib.models:Default"
ENVS = (
    "bandit",
    "continuous",
    "masked",
    "memory",
    "multiagent",
    "password",
    "spaces",
    "squared",
    "stochastic",
    "performance",
)
MULTIAGENT = ("multiagent",)
RECURRENT = ("memory",)


def _env_class(name: str) -> type:
    import pufferlib.ocean

    classes = {
        cls.__name__.lower(): cls for cls in map(pufferlib.ocean.__dict__.get, pufferlib.ocean.__all__)
    }
    if name not in classes:
        raise ValueError(f"Unknown Ocean env {name!r}; one of {', '.join(ENVS)}")
    return classes[name]


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """An Ocean env wrapped by emulation; kwargs go to the env (e.g. password_length=6)."""
    cls = _env_class(name)
    wrapper = PettingZooPufferEnv if name in MULTIAGENT else GymnasiumPufferEnv
    return wrapper(env=cls(**kwargs), buf=buf, seed=seed)


env_creator = family_env_creator("ocean")  # PufferLib's env_creator(name)


for _name in ENVS:
    _cls = _env_class(_name)
    register(
        Binding(
            # a native env's Python twin has a name of its own: ocean/squared is the C env (ocean_native.py)
            name=f"ocean/{ocean_native.twin(_name) if _name in ocean_native.TWINS else _name}",
            make=make_env,
            kwargs={"name": _name},
            extra="",
            policy="pufferlib.models:Default",
            multiagent=_name in MULTIAGENT,
            smoke=SmokeSpec(steps=256, seconds=120.0, learn=_name != "performance"),
            solved=getattr(_cls, "SOLVED", None),
            description=(sys.modules[_cls.__module__].__doc__ or "").strip().split("\n")[0],
        )
    )
