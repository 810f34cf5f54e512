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

# Every dtype a gymnasium Box may carry (integers, floats, bool) except numpy's longdouble, which
# torch cannot hold. uint16/32/64 are torch >= 2.3 "shell" dtypes: views, copies and `.float()` work.
NUMPY_TO_TORCH = {
    np.dtype(np.bool_): torch.bool,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.uint16): torch.uint16,
    np.dtype(np.uint32): torch.uint32,
    np.dtype(np.uint64): torch.uint64,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.float16): torch.float16,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
}

# A leaf: (torch dtype, shape, byte offset, byte size). A struct: a dict of name -> leaf or struct.
Leaf = tuple[torch.dtype, tuple[int, ...], int, int]
# PufferLib's name for what nativize_dtype returns.
NativeDType = Leaf | dict[str, Any]


def torch_dtype(dtype: Any, where: str = "") -> torch.dtype:
    """The torch dtype of a numpy dtype; `where` names the leaf in the error."""
    dtype = np.dtype(dtype)
    if dtype not in NUMPY_TO_TORCH:
        supported = ", ".join(sorted(str(d) for d in NUMPY_TO_TORCH))
        at = f" at {where}" if where else ""
        raise TypeError(
            f"No torch dtype for numpy {dtype}{at}. Supported: {supported}; convert the leaf with an "
            "ObservationWrapper (e.g. to float64) before emulation"
        )
    return NUMPY_TO_TORCH[dtype]


def nativize_dtype(emulated: dict | None) -> NativeDType | None:
    """Nested layout of an emulated observation: name -> (dtype, shape, offset, nbytes) or dict.

    Returns None when the observation space was already a Box (nothing to nativize).
    """
    if not emulated or emulated.get("observation_dtype") is None:
        return None
    return _native(emulated["observation_dtype"], 0, "observation")


def _native(dtype: np.dtype, base: int, path: str) -> dict:
    out: dict[str, Any] = {}
    for name in dtype.names:
        sub, offset = dtype.fields[name][:2]
        where = f"{path}.{name}"
        if sub.names is not None:
            out[name] = _native(sub, base + offset, where)
        elif sub.subdtype is not None:
            elem, shape = sub.subdtype
            out[name] = (torch_dtype(elem, where), tuple(shape), base + offset, sub.itemsize)
        else:
            out[name] = (torch_dtype(sub, where), (), base + offset, sub.itemsize)
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
