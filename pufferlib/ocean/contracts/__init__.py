"""C envs written for PufferLib, unchanged, on our engine: the 3.0 and 4.0 binding contracts, and our own.

A user's env folder (`puffer build-native PATH`) is built by `build.py` against our implementation of its
contract (the header its binding.c includes: `pl3/env_binding.h`, `pl4/vecenv.h`, or our native
`env_binding.h`), probed once (`probe.py`: what it writes must fit what it declares), and kept under
`home()/<name>/` with a manifest. `load.py` makes it (3.0: the folder's own `<name>.py` class; 4.0: a generic
PufferEnv over the binding's constants, `pl4env.py`; ours: `NativeEnv`), `ini.py` maps its `.ini` onto our
training config, and `pufferlib.environments.ocean_native` registers each built env as `ocean/<name>`.

Contracts, as `detect()` names them:
- "pufferlib-3.0": binding.c includes "../env_binding.h" and supplies my_init(Env*, PyObject* args,
  PyObject* kwargs); the folder holds the env's `<name>.py` (a pufferlib.PufferEnv subclass).
- "pufferlib-4.0": binding.c defines OBS_SIZE, NUM_ATNS, ACT_SIZES, OBS_TENSOR_T and includes "vecenv.h".
- "puffertank": binding.c defines ENV_NAME and OBS_T for our own env_binding.h (pufferlib/ocean/native).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).parent
CONTRACTS = ("pufferlib-3.0", "pufferlib-4.0", "puffertank")
NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
MANIFEST = "manifest.json"


def home() -> Path:
    """Where built envs live: $PUFFER_NATIVE_HOME, else $XDG_DATA_HOME (~/.local/share)/puffertank/native."""
    if os.environ.get("PUFFER_NATIVE_HOME"):
        return Path(os.environ["PUFFER_NATIVE_HOME"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "puffertank" / "native"


@dataclass
class Manifest:
    """What `puffer build-native PATH` built: written beside the module, read by the registry."""

    name: str
    contract: str
    source: str  # the folder it was built from
    module: str  # the compiled module's file name, in the env's folder under home()
    sha256: dict[str, str]  # file -> digest of the sources built
    obs_shape: list[int] = field(default_factory=list)
    obs_dtype: str = ""
    act_sizes: list[int] = field(default_factory=list)  # Discrete/MultiDiscrete branches; [] for Box
    agents_per_env: int = 1
    description: str = ""
    config: dict = field(default_factory=dict)  # the .ini as a layer of our training config (ini.py)
    unmapped: list[str] = field(default_factory=list)  # .ini keys with no meaning here

    def write(self, folder: Path) -> None:
        (folder / MANIFEST).write_text(json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        data = json.loads((folder / MANIFEST).read_text())
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def built(root: Path | None = None) -> dict[str, Manifest]:
    """Every env built under `root` (default home()) whose manifest reads, by name."""
    root = home() if root is None else root
    found: dict[str, Manifest] = {}
    if not root.is_dir():
        return found
    for manifest in sorted(root.glob(f"*/{MANIFEST}")):
        try:
            m = Manifest.read(manifest.parent)
        except (OSError, ValueError, TypeError):
            continue
        if m.name == manifest.parent.name and m.contract in CONTRACTS:
            found[m.name] = m
    return found
