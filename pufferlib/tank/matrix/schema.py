"""matrix.json's format version: written into every report, checked before a report is read back as a
baseline, so an older or newer file is a clear usage error rather than a KeyError (docs/matrix.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pufferlib.tank.errors import UsageError

SCHEMA = 5  # 1 = the files written before the field existed (no "schema" key); 3 added --every-host's keys;
# 4 added `digests` (every host's image id); 5 the statuses timeout and engine-error, `attempts`, and a
# row's `steps` (the learn check's steps to solve)
READS = (
    2,
    3,
    4,
    5,
)  # 2 to 4 lack only keys added since (every_host, host_seconds, host_differences, digests,
# attempts, steps), which default


def check_schema(data: Any, where: str) -> None:
    """Raise UsageError unless `data` is a matrix.json document of a schema this puffertank READS."""
    if not isinstance(data, dict) or "rows" not in data:
        raise UsageError(f"{where}: not a matrix.json (no rows)", "pass a matrix.json or its report folder")
    found = data.get("schema", 1)
    if found not in READS:
        age = "an older" if isinstance(found, int) and found < min(READS) else "a newer or unknown"
        readable = " and ".join(str(n) for n in READS)
        raise UsageError(
            f"{where}: matrix.json schema {found!r} is {age} format (this puffertank reads {readable})",
            "rerun puffertank matrix with this version to make a baseline",
        )


def load_document(path: Path, flag: str) -> dict[str, Any]:
    """The matrix.json at `path` (the file, or a report folder holding one), schema-checked; `flag` is the
    option that named it, for the error."""
    path = Path(path)
    file = path / "matrix.json" if path.is_dir() else path
    if not file.is_file():
        raise UsageError(f"{flag} {path}: no matrix.json there", "pass a matrix.json or a --report folder")
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        hint = "pass a matrix.json puffertank wrote"
        raise UsageError(f"{flag} {file}: unreadable ({exc})", hint) from None
    check_schema(data, f"{flag} {file}")
    return data
