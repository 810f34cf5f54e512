"""Structured spaces as packed numpy dtypes (numpy only, no torch).

An observation space of any Box/Discrete/MultiDiscrete/MultiBinary/Dict/Tuple nesting maps to one
aligned numpy structured dtype. The emulation layer writes each leaf straight into a flat row of
the shared buffer through a structured view (no concatenation), and `pufferlib.pytorch` recovers
the leaves in torch as zero-copy views using the same layout.

Actions go the other way: discrete leaves of a Dict/Tuple become one MultiDiscrete vector, and
`unflatten_action` rebuilds the nested structure the env expects. A top-level Discrete or Box
action space stays what it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from pufferlib import APIUsageError
from pufferlib import joint_space as joint_space  # PufferLib's pufferlib.spaces.joint_space

# PufferLib's names (`pufferlib.spaces.Box` ...) are gymnasium's classes themselves: isinstance
# checks and constructors both work.
Box, Dict, Discrete = spaces.Box, spaces.Dict, spaces.Discrete
MultiBinary, MultiDiscrete, Tuple = spaces.MultiBinary, spaces.MultiDiscrete, spaces.Tuple

LEAF_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
STRUCT_SPACES = (spaces.Dict, spaces.Tuple)


def children(space: gymnasium.Space) -> Iterator[tuple[str, gymnasium.Space]]:
    """(field name, subspace) pairs of a Dict or Tuple, in the space's own order."""
    if isinstance(space, spaces.Dict):
        yield from ((str(k), v) for k, v in space.spaces.items())
    else:
        yield from ((f"f{i}", v) for i, v in enumerate(space.spaces))


def leaf_spec(space: gymnasium.Space, path: str = "space") -> tuple[np.dtype, tuple[int, ...]]:
    """dtype and shape of one leaf as it is stored in the flat buffer (in native byte order, so
    that torch can view it)."""
    if isinstance(space, spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary):
        return np.dtype(space.dtype).newbyteorder("="), tuple(space.shape)
    if isinstance(space, spaces.Discrete):
        return np.dtype(space.dtype).newbyteorder("="), ()
    raise APIUsageError(
        f"Unsupported observation subspace at {path}: {space}. Supported: Box, Discrete, MultiDiscrete, "
        "MultiBinary, Dict, Tuple. Convert other spaces (e.g. Text) in a wrapper before emulation."
    )


def struct_dtype(space: gymnasium.Space, path: str = "space") -> np.dtype:
    """Aligned structured dtype for a Dict/Tuple space (nested structs for nested spaces).

    Alignment matters: it lets torch view each field of the byte buffer as its own dtype.
    """
    if not isinstance(space, STRUCT_SPACES):
        raise APIUsageError(f"{path}: expected a Dict or Tuple space, got {space}")
    fields = []
    for name, sub in children(space):
        if isinstance(sub, STRUCT_SPACES):
            fields.append((name, struct_dtype(sub, f"{path}.{name}")))
        else:
            dtype, shape = leaf_spec(sub, f"{path}.{name}")
            fields.append((name, dtype, shape))
    if not fields:
        raise APIUsageError(f"{path}: empty {type(space).__name__} space")
    return np.dtype(fields, align=True)


def leaves(dtype: np.dtype, offset: int = 0, prefix: tuple[str, ...] = ()):
    """Yield (path, base dtype, shape, byte offset) for every leaf of a structured dtype."""
    for name in dtype.names:
        sub, off = dtype.fields[name][:2]
        path = (*prefix, name)
        if sub.names is not None:
            yield from leaves(sub, offset + off, path)
        elif sub.subdtype is not None:
            yield path, sub.subdtype[0], sub.subdtype[1], offset + off
        else:
            yield path, sub, (), offset + off


def flat_observation_space(space: gymnasium.Space) -> tuple[spaces.Box, np.dtype | None]:
    """The flat Box that replaces `space`, and the structured dtype behind it (None for a Box).

    When every leaf shares one dtype the flat buffer keeps it (e.g. float32 elements); otherwise
    it is raw bytes (uint8) that only the structured view interprets.
    """
    if isinstance(space, spaces.Box):
        return space, None
    if isinstance(space, LEAF_SPACES):
        space = spaces.Tuple([space])  # a lone Discrete/MultiDiscrete obs: one field, "f0"
    dtype = struct_dtype(space)
    leaf_dtypes = {d for _, d, _, _ in leaves(dtype)}
    if len(leaf_dtypes) == 1:
        (elem,) = leaf_dtypes
        if dtype.itemsize % elem.itemsize == 0:
            n = dtype.itemsize // elem.itemsize
            low, high = _bounds(elem)
            return spaces.Box(low=low, high=high, shape=(n,), dtype=elem), dtype
    return spaces.Box(low=0, high=255, shape=(dtype.itemsize,), dtype=np.uint8), dtype


def _bounds(dtype: np.dtype) -> tuple[float, float]:
    if dtype.kind == "f":
        return -np.inf, np.inf
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return info.min, info.max


def cast_observation(obs: Any, space: gymnasium.Space, path: str = "observation") -> tuple[Any, list]:
    """`obs` with each Box leaf of another numeric dtype cast to the declared one, and the casts made.

    Many hand-written envs return float64 arrays for a float32 Box; writing into the buffer casts
    them anyway. Raises ValueError naming the leaf when a value cannot be represented in the
    declared dtype (a finite float that overflows, an integer out of range or with a fraction).
    NaN stays NaN, so the space check that follows still refuses it.
    """
    if isinstance(space, spaces.Dict) and isinstance(obs, dict):
        out, casts = {}, []
        for key, sub in space.spaces.items():
            out[key], more = cast_observation(obs.get(key), sub, f"{path}.{key}")
            casts += more
        return out, casts
    if isinstance(space, spaces.Tuple) and isinstance(obs, tuple | list):
        items = [
            cast_observation(o, sub, f"{path}.f{i}")
            for i, (o, sub) in enumerate(zip(obs, space.spaces, strict=False))
        ]
        return tuple(o for o, _ in items), [c for _, more in items for c in more]
    if not isinstance(space, spaces.Box):
        return obs, []
    arr, want = np.asarray(obs), np.dtype(space.dtype)
    if arr.dtype == want or arr.dtype.kind not in "biuf":
        return obs, []
    with np.errstate(over="ignore", invalid="ignore"):
        cast = arr.astype(want)
        if want.kind == "f":
            lost = np.isfinite(arr) & ~np.isfinite(cast)
        else:  # integers and bools must survive the round trip exactly (NaN does not)
            lost = cast.astype(arr.dtype) != arr
    if np.any(lost):
        bad = arr[lost].reshape(-1)[:3].tolist()
        raise ValueError(f"{path} holds {arr.dtype} values that {want} cannot represent: {bad}")
    return cast, [(path, arr.dtype, want)]


def write_observation(struct_row: np.ndarray, obs: Any, space: gymnasium.Space) -> None:
    """Write a nested observation into one structured row (a 0-d structured array view)."""
    if isinstance(space, spaces.Dict):
        for key, sub in space.spaces.items():
            _write_field(struct_row, str(key), obs[key], sub)
    elif isinstance(space, spaces.Tuple):
        for i, sub in enumerate(space.spaces):
            _write_field(struct_row, f"f{i}", obs[i], sub)
    else:  # a lone leaf space wrapped in a 1-tuple by flat_observation_space
        struct_row["f0"] = obs


def _write_field(row: np.ndarray, name: str, value: Any, space: gymnasium.Space) -> None:
    if isinstance(space, STRUCT_SPACES):
        write_observation(row[name], value, space)
    else:
        row[name] = value


def read_observation(struct_row: np.ndarray, space: gymnasium.Space) -> Any:
    """Inverse of write_observation: nested dict/tuple of numpy arrays (copies)."""
    if isinstance(space, spaces.Dict):
        return {k: _read_field(struct_row[str(k)], sub) for k, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(_read_field(struct_row[f"f{i}"], sub) for i, sub in enumerate(space.spaces))
    return np.array(struct_row["f0"])


def _read_field(value: np.ndarray, space: gymnasium.Space) -> Any:
    if isinstance(space, STRUCT_SPACES):
        return read_observation(value, space)
    return np.array(value, dtype=leaf_spec(space)[0])


# ---------------------------------------------------------------------------------------------- actions


def action_leaves(space: gymnasium.Space, path: str = "action") -> list[tuple[gymnasium.Space, int]]:
    """Discrete leaves of a structured action space with their width in the flat MultiDiscrete."""
    if isinstance(space, spaces.Discrete):
        return [(space, 1)]
    if isinstance(space, spaces.MultiDiscrete):
        if space.nvec.ndim != 1:
            raise APIUsageError(f"{path}: MultiDiscrete actions must be 1-D, got shape {space.nvec.shape}")
        return [(space, len(space.nvec))]
    if isinstance(space, spaces.MultiBinary):
        return [(space, int(np.prod(space.shape)))]
    if isinstance(space, STRUCT_SPACES):
        out = []
        for name, sub in children(space):
            out.extend(action_leaves(sub, f"{path}.{name}"))
        return out
    raise APIUsageError(
        f"Unsupported action subspace at {path}: {space}. Structured actions must be discrete "
        "(Discrete, MultiDiscrete, MultiBinary); a Box is supported only as the whole action space."
    )


def flat_action_space(space: gymnasium.Space) -> gymnasium.Space:
    """Box stays Box and Discrete stays Discrete (counted from 0: `start` is added back for the env);
    every other discrete or structured space becomes one MultiDiscrete."""
    if isinstance(space, spaces.Box):
        return space
    if isinstance(space, spaces.Discrete):
        return space if int(space.start) == 0 else spaces.Discrete(int(space.n))
    nvec = []
    for leaf, _ in action_leaves(space):
        if isinstance(leaf, spaces.Discrete):
            nvec.append(int(leaf.n))
        elif isinstance(leaf, spaces.MultiDiscrete):
            nvec.extend(int(n) for n in leaf.nvec)
        else:
            nvec.extend([2] * int(np.prod(leaf.shape)))
    return spaces.MultiDiscrete(np.array(nvec, dtype=np.int64))


def unflatten_action(flat: np.ndarray, space: gymnasium.Space) -> Any:
    """Rebuild the env's native action from a flat MultiDiscrete row (or a Discrete or Box action)."""
    if isinstance(space, spaces.Box):
        return flat
    if isinstance(space, spaces.Discrete):  # a top-level Discrete stays Discrete: one integer
        return int(flat) + int(space.start)
    value, _ = _unflatten(np.asarray(flat), 0, space)
    return value


def _unflatten(flat: np.ndarray, i: int, space: gymnasium.Space) -> tuple[Any, int]:
    if isinstance(space, spaces.Discrete):
        return int(flat[i]) + int(space.start), i + 1
    if isinstance(space, spaces.MultiDiscrete):
        n = len(space.nvec)
        return (flat[i : i + n] + space.start).astype(space.dtype), i + n
    if isinstance(space, spaces.MultiBinary):
        n = int(np.prod(space.shape))
        return flat[i : i + n].astype(space.dtype).reshape(space.shape), i + n
    if isinstance(space, spaces.Dict):
        out = {}
        for key, sub in space.spaces.items():
            out[key], i = _unflatten(flat, i, sub)
        return out, i
    out = []
    for sub in space.spaces:
        value, i = _unflatten(flat, i, sub)
        out.append(value)
    return tuple(out), i


def flatten_action(action: Any, space: gymnasium.Space) -> np.ndarray:
    """Inverse of unflatten_action: a native action as the flat row (for scripts)."""
    if isinstance(space, spaces.Box):
        return np.asarray(action, dtype=space.dtype)
    if isinstance(space, spaces.Discrete):
        return np.array(int(action) - int(space.start), dtype=np.int64)
    return np.array(list(_flatten(action, space)), dtype=np.int64)


def _flatten(action: Any, space: gymnasium.Space) -> Iterator[int]:
    if isinstance(space, spaces.Discrete):
        yield int(action) - int(space.start)
    elif isinstance(space, spaces.MultiDiscrete):
        yield from (np.asarray(action) - space.start).reshape(-1).tolist()
    elif isinstance(space, spaces.MultiBinary):
        yield from np.asarray(action).reshape(-1).astype(int).tolist()
    elif isinstance(space, spaces.Dict):
        for key, sub in space.spaces.items():
            yield from _flatten(action[key], sub)
    else:
        for value, sub in zip(action, space.spaces, strict=True):
            yield from _flatten(value, sub)


# ---------------------------------------------------------------------------------------- random actions


def sample_action(space: gymnasium.Space, rng: np.random.Generator, rows: int | None = None) -> Any:
    """A uniformly random valid action of `space`, drawn from `rng` alone (so a seeded Generator gives
    the same actions on every run), or with `rows` a batch of them: every leaf gets a leading `rows`
    axis (a Dict or Tuple space gives a dict or tuple of batches).

    Discrete and MultiDiscrete count from their `start`; MultiBinary gives 0/1; a Box draws uniformly
    between its bounds (an unbounded side is taken 1 beyond the other bound, or as -1/1 when both are
    unbounded), integer Boxes inclusive of both.
    """
    batch = _sample(space, rng, 1 if rows is None else rows, "action space")
    return batch if rows is not None else _first_row(batch)


def sample_allowed_action(space: gymnasium.Space, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random allowed action per row of `mask` ((rows, actions), nonzero = allowed; a
    MultiDiscrete's branches concatenated): (rows,) for Discrete, (rows, branches) for MultiDiscrete.
    A row that allows nothing in a branch gets that branch's first action."""
    if isinstance(space, spaces.Discrete):
        sizes, start = [int(space.n)], np.array([int(space.start)])
    elif isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1:
        sizes, start = [int(n) for n in space.nvec], np.asarray(space.start)
    else:
        raise APIUsageError(f"masked random actions need a Discrete or 1-D MultiDiscrete space, got {space}")
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.shape[1] != sum(sizes):
        raise APIUsageError(f"action mask of shape {mask.shape} for {space}: expected (rows, {sum(sizes)})")
    picks = []
    for part in np.split(mask.astype(np.float64), np.cumsum(sizes)[:-1], axis=1):
        noise = rng.random(part.shape) * (part > 0)  # a random key per allowed action, 0 elsewhere
        picks.append(noise.argmax(axis=1))
    actions = np.stack(picks, axis=1) + start
    return actions[:, 0] if isinstance(space, spaces.Discrete) else actions


def _sample(space: gymnasium.Space, rng: np.random.Generator, rows: int, path: str) -> Any:
    if isinstance(space, spaces.Box):
        if np.issubdtype(space.dtype, np.integer):
            low, high = space.low.astype(np.int64), space.high.astype(np.int64)
            return rng.integers(low, high, size=(rows, *space.shape), endpoint=True).astype(space.dtype)
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        low = np.where(np.isfinite(low), low, np.minimum(-1.0, np.where(np.isfinite(high), high - 1, -1.0)))
        high = np.where(np.isfinite(high), high, np.maximum(1.0, low + 1))
        return rng.uniform(low, high, size=(rows, *space.shape)).astype(space.dtype)
    if isinstance(space, spaces.Discrete):
        return rng.integers(0, space.n, size=rows) + space.start
    if isinstance(space, spaces.MultiDiscrete):
        return (rng.integers(0, space.nvec, size=(rows, *space.nvec.shape)) + space.start).astype(space.dtype)
    if isinstance(space, spaces.MultiBinary):
        return rng.integers(0, 2, size=(rows, *space.shape)).astype(space.dtype)
    if isinstance(space, spaces.Dict):
        return {key: _sample(sub, rng, rows, f"{path}[{key!r}]") for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(_sample(sub, rng, rows, f"{path}[{i}]") for i, sub in enumerate(space.spaces))
    raise APIUsageError(
        f"{path}: cannot draw random actions of {space} (supported: {LEAF_SPACES + STRUCT_SPACES})"
    )


def _first_row(batch: Any) -> Any:
    if isinstance(batch, dict):
        return {key: _first_row(value) for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_first_row(value) for value in batch)
    return batch[0]
