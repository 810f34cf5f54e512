"""PufferLib: flat, fixed-shape environments, fast vectorization and a small PPO trainer.

`import pufferlib` is light: it imports the standard library only, so that the host tooling
(pufferlib.tank, which may run where numpy, gymnasium and torch are absent) can import the package its
modules live in. The names below are attributes loaded on first use (PEP 562): `pufferlib.PufferEnv`
imports pufferlib.core (numpy and gymnasium), `pufferlib.APIUsageError` pufferlib.exceptions, and
`pufferlib.emulation`, `pufferlib.vector`... import that submodule. `from pufferlib import PufferEnv`
works the same way.
"""

from __future__ import annotations

import importlib

from pufferlib._version import __version__ as __version__  # the one place it is kept

# name -> the module that defines it
_ATTRIBUTES = {
    "BUFFER_NAMES": "pufferlib.core",
    "EpisodeStats": "pufferlib.core",
    "Namespace": "pufferlib.core",
    "PufferEnv": "pufferlib.core",
    "action_buffer_spec": "pufferlib.core",
    "allocate_buffers": "pufferlib.core",
    "joint_space": "pufferlib.core",
    "namespace": "pufferlib.core",
    "resets_on_send": "pufferlib.core",
    "set_buffers": "pufferlib.core",
    "APIUsageError": "pufferlib.exceptions",
    "EnvironmentSetupError": "pufferlib.exceptions",
    "InvalidAgentError": "pufferlib.exceptions",
}
# submodules that `pufferlib.NAME` imports on first use (as `import pufferlib.NAME` would)
_SUBMODULES = (
    "emulation",
    "environments",
    "exceptions",
    "frameworks",
    "models",
    "ocean",
    "pytorch",
    "spaces",
    "train",
    "vector",
    "wrappers",
)

__all__ = sorted(_ATTRIBUTES)


def __getattr__(name: str):
    module = _ATTRIBUTES.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ATTRIBUTES, *_SUBMODULES})
