"""The rollout's memory: the layout of PPO's rollout storage (ppo.Experience allocates exactly this),
what it takes, and what the device has free, compared before anything is allocated.

A rollout too big for the machine (`--train.num-steps 1e9`, `--vec.num-envs 1e12`) is then a
ConfigError naming the figure and what is available, not an allocator's traceback minutes in.
Two checks: a lower bound from the config alone, before the vector env is built (every env has at
least one agent row; an observation at least one byte), and the exact figure from the env's spaces
before the rollout is allocated.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from pufferlib.train.config import ConfigError

Layout = dict[str, tuple[tuple[int, ...], torch.dtype]]  # tensor name -> (shape, dtype)

# The smallest observation and action a row can have (a scalar uint8 Box; a scalar float32 Box):
# the lower bound's per-step cost.
SMALLEST_OBS = ((), torch.uint8)
SMALLEST_ACTION = ((), torch.float32)


def rollout_layout(
    rows: int,
    steps: int,
    obs: tuple[tuple[int, ...], torch.dtype],
    action: tuple[tuple[int, ...], torch.dtype],
    hidden: int = 0,
    bptt: int = 1,
) -> Layout:
    """Every rollout tensor's shape and dtype: (rows, steps, ...) per step, (rows,) to bootstrap the
    last column, and the LSTM state before each BPTT segment when `hidden`."""
    (obs_shape, obs_dtype), (atn_shape, atn_dtype) = obs, action
    per_step: Layout = {
        "obs": ((rows, steps, *obs_shape), obs_dtype),
        "actions": ((rows, steps, *atn_shape), atn_dtype),
        **{
            name: ((rows, steps), torch.float32)
            for name in ("logprobs", "values", "rewards", "terminals", "truncations", "masks")
        },
        "valid": ((rows, steps), torch.bool),
        "starts": ((rows, steps), torch.float32),
        "next_values": ((rows,), torch.float32),
        "next_masks": ((rows,), torch.float32),
    }
    if hidden:
        per_step["h0"] = per_step["c0"] = ((rows, steps // bptt, hidden), torch.float32)
    return per_step


def nbytes(layout: Layout) -> int:
    return sum(math.prod(shape) * dtype.itemsize for shape, dtype in layout.values())


def host_available() -> int | None:
    """Bytes the host can still give this process: MemAvailable, within the cgroup's (the
    container's) limit; None where neither can be read."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            found.append(max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def available(device: str) -> int | None:
    """Free bytes on `device` (a CUDA GPU's free memory, else the host's); None when unknown."""
    if device.startswith("cuda") and torch.cuda.is_available():
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    return host_available()


def size(n: float) -> str:
    """1536 -> '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check(layout: Layout, device: str, at_least: bool = False) -> int:
    """The layout's bytes; ConfigError when `device` has less free, naming both figures and the keys
    that set the size. `at_least`: the layout is a lower bound (the env's spaces are not known yet)."""
    needed = nbytes(layout)
    free = available(device)
    if free is not None and needed > free:
        rows, steps = layout["values"][0]
        need = f"at least {size(needed)}" if at_least else size(needed)
        raise ConfigError(
            f"the rollout needs {need} ({rows:,} agent rows x {steps:,} steps of train.num_steps, "
            f"{size(needed / (rows * steps))} per row and step) but {device} has {size(free)} free: "
            "lower train.num_steps or vec.num_envs"
        )
    return needed
