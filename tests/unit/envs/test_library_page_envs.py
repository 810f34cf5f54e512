"""docs/library.md's environment figures are the registry's: the registered set (`puffer envs --json`),
its families, and the names `puffer envs --all` lists. A family added without the page saying so goes red.
The PufferLib 3.0 catalog is left out: it is registered only where it was built (tests/run.sh builds it), and
its own figures are checked with its audit (tests/unit/native/test_pufferlib3_catalog.py)."""

import json
import re
import subprocess
import sys
from collections import Counter

import pytest
from _repo import REPO

from pufferlib import environments
from pufferlib.ocean.contracts.catalog import FAMILY as PL3

PAGE = (REPO / "docs" / "library.md").read_text()


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--json"], capture_output=True, text=True, check=True
    )
    return [row for row in json.loads(out.stdout) if row["family"] != PL3]


def _figure(pattern: str) -> int:
    found = re.search(pattern, PAGE)
    assert found, f"docs/library.md no longer says {pattern!r}: update this test with the page"
    return int(found.group(1).replace(",", ""))


def test_registered_bindings_and_families(rows):
    families = {row["family"] for row in rows}
    assert _figure(r"registered set \((\d+) bindings in") == len(rows)
    assert _figure(r"bindings in (\d+) families") == len(families)
    listed = set(re.findall(r"`(\w+)/[^`]*`", PAGE))
    assert families <= listed, f"families missing from the page's list: {sorted(families - listed)}"


def test_catalog_counts():
    names = [name for name in environments.catalog() if not name.startswith(f"{PL3}/")]
    per_family = Counter(name.split("/", 1)[0] for name in names)
    assert _figure(r"lists the ([\d,]+) names") == len(names)
    assert _figure(r"every\s+Atari (\d+) game") == per_family["atari"]
    assert _figure(r"(\d+) OpenSpiel games") == per_family["open_spiel"]
    assert _figure(r"(\d+) bsuite settings") == per_family["bsuite"]
