"""Checks on one batch of observations, for the smoke checks (pufferlib.smoke): rows in their space, a
fingerprint of a step to compare vector backends by, and where the frames of a pixel binding are.
"""

from __future__ import annotations

import hashlib

import numpy as np


def check_batch(space, obs: np.ndarray, rewards: np.ndarray, masks: np.ndarray, where: str) -> None:
    """Every live observation row lies in `space` and every reward is finite."""
    for row, live in zip(obs, masks, strict=True):
        if live and not space.contains(row):
            raise AssertionError(
                f"{where}: observation outside {space}: {np.array2string(row, threshold=20)}"
            )
    if not np.all(np.isfinite(rewards)):
        raise AssertionError(f"{where}: non-finite reward {rewards}")


def digest(*arrays: np.ndarray) -> bytes:
    """A fingerprint of one step's batch (observations, rewards, flags, masks)."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.digest()


def frame_field(env, shape: tuple[int, ...]) -> str:
    """Where the frames are in an observation row: "" when the row is the frame, else the one field of
    a Dict observation with the declared shape (e.g. ViZDoom's `screen` beside its game variables)."""
    if env.single_observation_space.shape == shape:
        return ""
    dtype = (getattr(env, "emulated", None) or {}).get("observation_dtype")
    fields = [name for name in (dtype.names or ()) if dtype[name].shape == shape] if dtype is not None else []
    if len(fields) != 1:
        found = {name: dtype[name].shape for name in dtype.names} if dtype is not None and dtype.names else {}
        raise AssertionError(
            f"observation rows are {env.single_observation_space.shape}"
            + (f" with fields {found}" if found else "")
            + f"; the binding declares pixels {shape}, which must be the row or exactly one field of it"
        )
    return fields[0]


def frames_of(rows: np.ndarray, env, field: str) -> np.ndarray:
    """Copies of the frames in `rows`: the rows themselves, or their `field` (see frame_field)."""
    if not field:
        return rows.copy()
    return np.ascontiguousarray(rows).view(env.emulated["observation_dtype"]).reshape(len(rows))[field].copy()
