"""Torch helpers: recover structured observations from flat tensors, layer init, device choice.

`nativize_dtype(env.emulated)` turns the structured numpy dtype recorded by emulation into a
nested description; `nativize_tensor(flat, native)` uses it to return a nested dict of tensors
that are *views* of the flat batch (a byte reinterpretation and a slice per leaf, no copy). Only
view ops are used, so it traces under torch.compile.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

NUMPY_TO_TORCH = {
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.float16): torch.float16,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
    np.dtype(np.bool_): torch.bool,
}

# A leaf: (torch dtype, shape, byte offset, byte size). A struct: a dict of name -> leaf or struct.
Leaf = tuple[torch.dtype, tuple[int, ...], int, int]


def torch_dtype(dtype: Any) -> torch.dtype:
    dtype = np.dtype(dtype)
    if dtype not in NUMPY_TO_TORCH:
        raise TypeError(f"No torch dtype for numpy {dtype}")
    return NUMPY_TO_TORCH[dtype]


def nativize_dtype(emulated: dict | None) -> dict | None:
    """Nested layout of an emulated observation: name -> (dtype, shape, offset, nbytes) or dict.

    Returns None when the observation space was already a Box (nothing to nativize).
    """
    if not emulated or emulated.get("observation_dtype") is None:
        return None
    return _native(emulated["observation_dtype"], 0)


def _native(dtype: np.dtype, base: int) -> dict:
    out: dict[str, Any] = {}
    for name in dtype.names:
        sub, offset = dtype.fields[name][:2]
        if sub.names is not None:
            out[name] = _native(sub, base + offset)
        elif sub.subdtype is not None:
            elem, shape = sub.subdtype
            out[name] = (torch_dtype(elem), tuple(shape), base + offset, sub.itemsize)
        else:
            out[name] = (torch_dtype(sub), (), base + offset, sub.itemsize)
    return out


def nativize_tensor(observation: torch.Tensor, native: dict | None) -> Any:
    """View a (batch, flat) tensor as the nested structure described by `native` (no copies).

    A lone Discrete/MultiDiscrete observation space is returned as its tensor, not a 1-tuple.
    """
    if native is None:
        return observation
    batch = observation.shape[0]
    raw = observation.reshape(batch, -1)
    if raw.dtype != torch.uint8:
        raw = raw.view(torch.uint8)
    out = _nativize(raw, native, batch)
    if list(out) == ["f0"] and not isinstance(out["f0"], dict):
        return out["f0"]
    return out


def _nativize(raw: torch.Tensor, native: dict, batch: int) -> dict:
    out = {}
    for name, spec in native.items():
        if isinstance(spec, dict):
            out[name] = _nativize(raw, spec, batch)
        else:
            dtype, shape, offset, nbytes = spec
            out[name] = raw[:, offset : offset + nbytes].view(dtype).reshape(batch, *shape)
    return out


def flatten_structure(x: Any) -> list[torch.Tensor]:
    """Leaves of a nested dict/tuple of tensors, in order (for policies that concatenate them)."""
    if isinstance(x, dict):
        return [t for v in x.values() for t in flatten_structure(v)]
    if isinstance(x, list | tuple):
        return [t for v in x for t in flatten_structure(v)]
    return [x]


def layer_init(layer: nn.Module, std: float = 2**0.5, bias_const: float = 0.0) -> nn.Module:
    """CleanRL's orthogonal initialisation."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias_const)
    return layer


def default_device(requested: str | None = None) -> str:
    """'cuda' when a GPU is visible, else 'cpu'; an explicit request wins (and is checked)."""
    if requested in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {requested!r} requested but torch sees no CUDA GPU; use --device cpu")
    return requested
