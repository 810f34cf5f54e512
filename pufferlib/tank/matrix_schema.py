"""matrix.json's format version: written into every report, checked before a report is read back as a
baseline, so an older or newer file is a clear usage error rather than a KeyError (docs/matrix.md)."""

from __future__ import annotations

from typing import Any

from pufferlib.tank.errors import UsageError

SCHEMA = 2  # 1 = the files written before the field existed (no "schema" key)


def check_schema(data: Any, where: str) -> None:
    """Raise UsageError unless `data` is a matrix.json document of this SCHEMA."""
    if not isinstance(data, dict) or "rows" not in data:
        raise UsageError(f"{where}: not a matrix.json (no rows)", "pass a matrix.json or its report folder")
    found = data.get("schema", 1)
    if found != SCHEMA:
        age = "an older" if isinstance(found, int) and found < SCHEMA else "a newer or unknown"
        raise UsageError(
            f"{where}: matrix.json schema {found!r} is {age} format (this puffertank reads {SCHEMA})",
            "rerun puffertank matrix with this version to make a baseline",
        )
