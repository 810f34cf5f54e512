"""Environment bindings, registered as `family/name`.

    import pufferlib.environments as envs
    env = envs.make("ocean/squared")          # a ready PufferEnv
    envs.get("minigrid/MiniGrid-Empty-8x8-v0").available()

One module per family; importing this package registers them all without importing any
environment package (those load when an env is made).
"""

from pufferlib.environments import classic_control, ocean
from pufferlib.environments.registry import (
    Binding,
    SmokeSpec,
    UnknownEnvironmentError,
    bindings,
    get,
    make,
    register,
)

FAMILIES = (ocean, classic_control)

__all__ = [
    "FAMILIES",
    "Binding",
    "SmokeSpec",
    "UnknownEnvironmentError",
    "bindings",
    "get",
    "make",
    "register",
]
