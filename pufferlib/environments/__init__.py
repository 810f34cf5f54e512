"""Environment bindings, registered as `family/name`.

    import pufferlib.environments as envs
    env = envs.make("ocean/squared")          # a ready PufferEnv
    envs.get("minigrid/MiniGrid-Empty-8x8-v0").available()
    envs.bindings()    # the registered set, which the integration matrix exercises
    envs.catalog()     # every name make() accepts (e.g. all 57 Atari games)

One module per family, listed once in `families.py` (the family table); importing this package
registers them all without importing any environment package (those load when an env is made).

Extra bindings: set PUFFERLIB_PLUGINS to a comma-separated list of importable modules that call
`register()`; they are imported here, after the built-in families (`puffertank matrix --plugin`
uses this to test your own envs in the container). A plugin that fails to import is named in a
warning on stderr and left out: every other command goes on, and asking for one of its bindings
is an error that names the plugin and why it failed.
"""

import importlib
import os
import sys

from pufferlib.environments import families
from pufferlib.environments.registry import (
    PLUGIN_ERRORS,
    Binding,
    SmokeSpec,
    UnknownEnvironmentError,
    bindings,
    catalog,
    get,
    make,
    register,
)

# The family modules, in the order of pufferlib/environments/families.py (the one list of families).
FAMILIES = tuple(importlib.import_module(f"pufferlib.environments.{name}") for name in families.modules())


def _load_plugins(names: str) -> tuple:
    """Import each module of a PUFFERLIB_PLUGINS value; warn about (and record) those that fail."""
    loaded = []
    for name in filter(None, (n.strip() for n in names.split(","))):
        try:
            loaded.append(importlib.import_module(name))
        except Exception as e:  # any error in a user's module: name it, go on without it
            PLUGIN_ERRORS[name] = f"{type(e).__name__}: {e}"
            print(
                f"pufferlib: warning: plugin {name!r} (PUFFERLIB_PLUGINS) failed to import and is left out: "
                f"{PLUGIN_ERRORS[name]}",
                file=sys.stderr,
            )
    return tuple(loaded)


PLUGINS = _load_plugins(os.environ.get("PUFFERLIB_PLUGINS", ""))

__all__ = [
    "FAMILIES",
    "PLUGINS",
    "PLUGIN_ERRORS",
    "Binding",
    "SmokeSpec",
    "UnknownEnvironmentError",
    "bindings",
    "catalog",
    "get",
    "make",
    "register",
]
