"""The `docker` marker guard of conftest.py: a test that uses the engine without the marker is deselected by
-m "not docker" (so that stays the no-engine suite) and fails when it runs, saying to add the marker.

Runs pytest on a throwaway folder holding a copy of this conftest.py (the helper modules it imports found on
PYTHONPATH); needs no engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
# conftest.py's own imports: the helper modules beside it and tests/_strict.py, tests/_repo.py
HELPERS = os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")])

UNMARKED = """
def test_uses_the_engine(docker_client):
    pass


def test_needs_nothing():
    pass
"""


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(folder), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
        env={**os.environ, "PYTHONPATH": HELPERS},
    )


def test_an_unmarked_engine_test_fails_and_is_deselected(tmp_path: Path) -> None:
    shutil.copy2(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_unmarked.py").write_text(UNMARKED)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    docker: engine\n")

    ran = pytest_run(tmp_path)
    assert ran.returncode == 1, ran.stdout
    assert "1 passed, 1 error" in ran.stdout, ran.stdout  # failed at setup, before the engine is asked
    assert "has no docker marker" in ran.stdout and "pytestmark = pytest.mark.docker" in ran.stdout

    no_engine = pytest_run(tmp_path, "-m", "not docker")
    assert no_engine.returncode == 0 and "1 passed, 1 deselected" in no_engine.stdout, no_engine.stdout
