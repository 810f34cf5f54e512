"""PUFFERTANK_STRICT=1 (set by tests/run.sh, so in CI): real work that cannot run here is a failure.

A skip is honest only where the thing is truly absent (a GPU). A binding whose package is missing
from the venv, a root-only test run without root, a torch.compile that errors: in CI each means
the suite did less than it claims, so there they fail with the same reason instead of skipping.
"""

from __future__ import annotations

import os

import pytest


def strict() -> bool:
    return os.environ.get("PUFFERTANK_STRICT", "") not in ("", "0")


def skip_or_fail(reason: str) -> None:
    """Skip with `reason`, or fail with it under PUFFERTANK_STRICT=1."""
    if strict():
        pytest.fail(f"{reason} (PUFFERTANK_STRICT=1: real work may not be skipped)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
