"""Environment bindings, registered as `family/name`.

    import pufferlib.environments as envs
    env = envs.make("ocean/squared")          # a ready PufferEnv
    envs.get("minigrid/MiniGrid-Empty-8x8-v0").available()
    envs.bindings()    # the registered set, which the integration matrix exercises
    envs.catalog()     # every name make() accepts (e.g. all 57 Atari games)

One module per family; importing this package registers them all without importing any
environment package (those load when an env is made).

Extra bindings: set PUFFERLIB_PLUGINS to a comma-separated list of importable modules that call
`register()`; they are imported here, after the built-in families (`puffertank matrix --plugin`
uses this to test your own envs in the container).
"""

import importlib
import os

from pufferlib.environments import (
    atari,
    butterfly,
    classic_control,
    minigrid,
    minihack,
    nethack,
    ocean,
    procgen,
)
from pufferlib.environments import (  # wave 2b: games, many-agent worlds, JAX envs
    bsuite,
    crafter,
    craftax,
    griddly,
    highway,
    magent2,
    open_spiel,
    retro,
    vizdoom,
)
from pufferlib.environments.registry import (
    Binding,
    SmokeSpec,
    UnknownEnvironmentError,
    bindings,
    catalog,
    get,
    make,
    register,
)

FAMILIES = (ocean, classic_control, minigrid, procgen, nethack, minihack, butterfly, atari)
FAMILIES += (vizdoom, magent2, open_spiel, crafter, craftax, bsuite, highway, griddly, retro)

PLUGINS = tuple(
    importlib.import_module(name.strip())
    for name in os.environ.get("PUFFERLIB_PLUGINS", "").split(",")
    if name.strip()
)

__all__ = [
    "FAMILIES",
    "PLUGINS",
    "Binding",
    "SmokeSpec",
    "UnknownEnvironmentError",
    "bindings",
    "catalog",
    "get",
    "make",
    "register",
]
