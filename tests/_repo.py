"""The repository root, for tests that read its files (docker/, docs/, pyproject.toml...): one place, so a
test moved to another folder still finds them. tests/ is on sys.path (pytest puts the folder of the root
conftest.py there), so any test imports it: `from _repo import REPO`."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
