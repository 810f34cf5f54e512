"""Probe a built env once, in a child process (`python -m pufferlib.ocean.contracts.probe FOLDER`): make two
instances with the `.ini`'s [env] kwargs over buffers that end in guard rows, reset, step 64 times with random
valid actions, and check that nothing was written past the buffers' last row. Prints the env's facts as JSON.

A binding that writes more per row than its Python side (3.0: the class's spaces; 4.0: OBS_SIZE and
OBS_TENSOR_T) declares would corrupt memory in a vector of envs; this refuses it before the first real step,
naming both sides.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gymnasium
import numpy as np

from pufferlib.core import BUFFER_NAMES, allocate_buffers
from pufferlib.ocean.contracts import Manifest, ini, load

GUARD_ROWS = 4
CANARY = 0xA5


def game_kwargs(folder: Path, name: str) -> dict:
    path = folder / f"{name}.ini"
    kwargs = dict(ini.read(path).get("env", {})) if path.is_file() else {}
    kwargs.pop("num_envs", None)
    return kwargs


def act_sizes(space: gymnasium.Space) -> list[int]:
    if isinstance(space, gymnasium.spaces.Discrete):
        return [int(space.n)]
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return [int(n) for n in np.ravel(space.nvec)]
    return []


def guarded(env) -> tuple[dict, dict]:
    """Buffers for env's rows as views of larger arrays whose guard rows hold CANARY bytes."""
    want = allocate_buffers(env.num_agents, env.single_observation_space, env.single_action_space)
    big, views = {}, {}
    for name in BUFFER_NAMES:
        arr = getattr(want, name)
        full = np.zeros((arr.shape[0] + GUARD_ROWS, *arr.shape[1:]), dtype=arr.dtype)
        full[arr.shape[0] :].view(np.uint8)[...] = CANARY
        big[name], views[name] = full, full[: arr.shape[0]]
    return big, views


def probe(folder: Path) -> dict:
    m = Manifest.read(folder)
    kwargs = game_kwargs(folder, m.name)
    env = load.make(m.name, root=folder.parent, num_envs=2, **kwargs)
    agents = env.num_agents
    obs_space, act_space = env.single_observation_space, env.single_action_space
    env.close()
    first = guarded(env)
    env = load.make(m.name, root=folder.parent, num_envs=2, buf=first[1], **kwargs)
    big = first[0]
    act_space.seed(0)
    env.reset(seed=0)
    log_keys: set[str] = set()
    for step in range(65):
        for name, full in big.items():
            tail = full[agents:].view(np.uint8)
            if not (tail == CANARY).all():
                declared = f"{obs_space.shape} {obs_space.dtype}" if name == "observations" else "its row"
                raise SystemExit(
                    f"{m.name} wrote past the end of its {name} buffer "
                    f"({'after reset' if step == 0 else f'step {step}'}):"
                    f" its Python side declares {declared} per agent row, and the C writes more"
                )
        if step < 64:
            infos = env.step(np.stack([act_space.sample() for _ in range(agents)]))[4]
            log_keys.update(k for info in infos if isinstance(info, dict) for k in info)
    env.close()
    return {
        "obs_shape": list(obs_space.shape),
        "obs_dtype": str(obs_space.dtype),
        "act_sizes": act_sizes(act_space),
        "agents_per_env": agents // 2,
        "description": description(folder, m.name),
        "log_keys": sorted(log_keys),
    }


def description(folder: Path, name: str) -> str:
    header = folder / "src" / f"{name}.h"
    text = header.read_text(errors="replace").strip() if header.is_file() else ""
    first = text.split("\n", 1)[0] if text.startswith(("/*", "//")) else ""
    return first.strip("/* ").strip()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m pufferlib.ocean.contracts.probe BUILT_FOLDER")
    print(json.dumps(probe(Path(sys.argv[1]))))
