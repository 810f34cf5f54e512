"""Named fields of a native env's flat observation row, recorded as pufferlib.emulation records a Dict.

A binding that defines OBS_FIELDS (e.g. `"action_mask:7 board:2x6x7 to_move:1"`: name:shape, in
the order of the row, each shape's dimensions joined by x) exports it as the module's `OBS_FIELDS`.
`structure()` turns it into the env's `emulated` dict, so everything that reads a structured
observation by name works on the flat native row unchanged: `action_mask` for
pufferlib.frameworks.cleanrl (masked sampling in training and evaluation), the leaves for
pufferlib.models.Default, the Dict for pufferlib.compat. Its `resets_on_send` is False: a native
env resets in the step that ends an episode (pufferlib.resets_on_send).
"""

from __future__ import annotations

import math

import gymnasium
import numpy as np

from pufferlib import EnvironmentSetupError
from pufferlib import spaces as pspaces


def parse(spec: str, where: str = "OBS_FIELDS") -> list[tuple[str, tuple[int, ...]]]:
    """`"a:7 b:2x6x7"` -> [("a", (7,)), ("b", (2, 6, 7))]; EnvironmentSetupError naming the bad entry."""
    fields = []
    for entry in spec.split():
        name, _, dims = entry.partition(":")
        try:
            shape = tuple(int(d) for d in dims.split("x"))
        except ValueError:
            shape = ()
        if not name.isidentifier() or not shape or min(shape) < 1:
            raise EnvironmentSetupError(
                f"{where}: bad field {entry!r}; write name:shape, e.g. action_mask:7 or board:2x6x7"
            )
        fields.append((name, shape))
    names = [name for name, _ in fields]
    if len(set(names)) != len(names):
        raise EnvironmentSetupError(f"{where}: a field name appears twice in {spec!r}")
    return fields


def structure(spec: str, box: gymnasium.spaces.Box, action_space: gymnasium.Space, where: str) -> dict:
    """The `emulated` dict of a native env whose flat rows (`box`) hold the fields `spec`."""
    fields = parse(spec, where)
    dtype = np.dtype(box.dtype)
    leaves, offset = {}, 0
    low, high = box.low.reshape(-1), box.high.reshape(-1)
    for name, shape in fields:
        n = math.prod(shape)
        part = slice(offset, offset + n)
        leaves[name] = gymnasium.spaces.Box(low[part].reshape(shape), high[part].reshape(shape), shape, dtype)
        offset += n
    if offset != math.prod(box.shape):
        raise EnvironmentSetupError(
            f"{where}: OBS_FIELDS {spec!r} hold {offset} elements but a row has {math.prod(box.shape)}; "
            "make OBS_FIELDS and OBS_SIZE agree in binding.c"
        )
    order = [name for name, _ in fields]
    if order != sorted(order):
        raise EnvironmentSetupError(
            f"{where}: OBS_FIELDS must list the fields in name order ({' '.join(sorted(order))}), as "
            "pufferlib.emulation lays out a Dict; reorder the row in the env"
        )
    space = gymnasium.spaces.Dict(leaves)
    return {
        "observation_dtype": pspaces.struct_dtype(space),
        "emulated_observation_space": space,
        "emulated_action_space": action_space,
        "flat_observation_dtype": dtype,
        "resets_on_send": False,
    }
